"""The player side: pending matches, snapshots, and the rating update itself.

A player lives on one partition (Kafka's default partitioner on the player id) and has:
- a rating record per mode (table ``ratings``): the state, its version, and the ids of the
  latest matches applied, which is what makes a redelivered result a no-op;
- a pending record (table ``pending``): the matches the player has started and not settled.

Snapshots follow the player's own order of play: a player's snapshot for a match is sent only
once every older pending match of theirs is settled, so it includes every result that came
before, and only once every match partition has said that it sent the joins of all matches
started before this one (:class:`stream.protocol.Watermark`, docs/event-time.md), so no older
match of the player can still be on its way, however far behind the workers are. Matches that
start at the same time go in match id order (:func:`stream.history.model.play_order`), as
``skillstream replay --in-play-order`` applies them. For
a history of non-overlapping matches this makes the live ratings equal ``skillstream replay``
exactly. Starting a newer match while an older one is pending asks the
older match's partition to abandon it (it decides, by event time, whether the result came
within the grace period). Once every match partition's watermark has passed a start, every
abandon request a start before it can cause has been sent, and the partition says so to every
match partition (:class:`stream.protocol.AbandonWatermark`): a result timed after a possible
abandonment waits for it there.

A start read late (its join asks, :class:`stream.protocol.Join`) may come after the player had a
later match's snapshot sent, or not: the partition answers with the player's position (just
after the latest turn of theirs whose snapshot is out, if later than the start) and the
match waits, unordered, until its home orders it by every player's
(:class:`stream.protocol.Ordered`); the player's turn for it comes then, in the same place for
every player (docs/event-time.md, "Late starts"). Abandon requests still go by the starts
themselves.

An operator's adjustment (a re-rating worker's corrections file,
docs/operations.md#correcting-the-past-live) is applied as replay applies it: after every match
of the player that started before its effective time and before any that started at or after
it. Once the watermarks have passed that time and no older match of the player is pending, the
partition sends itself an ``adj`` command (:meth:`PlayerProcessor._request`) and applies the
adjustment when it reads it back; a snapshot for a match started at or after the effective
time waits until then. Through the partition's own log, an adjustment comes after every
command already there, as it does when the log is read again after a crash (when the pending
record may be ahead of the rating record: a result read again then still comes first). It is
published as a rating change of its own (outcome ``adjusted``); the rating record keeps the
ids of the adjustments applied, so one is applied once however often it is asked for.

A refund (a ban's, in a re-rating worker's corrections file) is decided where the result is
applied, from the rate command's teams, ranks and time, by the function replay asks
(:func:`stream.corrections.effects.refund_for`): a refunded player's rating stays as it was.
One who lost to the banned player and has a rating gets the change published with outcome
``refunded``, and their record counts the match as applied (its version, its recent ids and its
refunded ids: a repeat is a no-op however long ago it was). The banned player themself, and a
player without a rating in the mode, get nothing: no record written, nothing published (after a
re-rate, the hand-over retracts what the first generation published for those matches); the
pending record remembers the match, as for a cancel, so a redelivered join does not make it
pending again.

On replay: a result whose match id is in the rating record's recent list, or whose snapshot of
the player has fewer games than the record (:func:`_applied_since`), is skipped; a join
for a match already pending re-sends the snapshot; a cancel for a match not pending does
nothing. The rating record is the only place that says "applied", so a crash between the two
tables' writes cannot apply a result twice or lose it.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable, Mapping, Sequence

from stream.config.modes import Modes
from stream.corrections.effects import PlayerChange, Refund, refund_for
from stream.corrections.ledger import adjusted
from stream.history.model import play_order
from stream.pipeline import watermarks
from stream.pipeline.combiner import new_epoch
from stream.pipeline.matchentry import parties_of
from stream.pipeline.partitioning import partition_for
from stream.pipeline.playerpartition import PlayerContext, PlayerPartition
from stream.protocol import (
    RECENT_MATCHES,
    Abandon,
    Adjusting,
    Cancel,
    Combined,
    Join,
    Ordered,
    PendingMatch,
    PendingRecord,
    PlayerCommand,
    Position,
    Rate,
    RatingRecord,
    Snapshot,
    Watermark,
    rating_key,
)
from stream.ratingchanged import adjustment_changed, rating_changed, refund_changed
from stream.ratings.carryover import started_from
from stream.ratings.engine import MatchView, initial_state, rate_player
from stream.ratings.explain import explain
from stream.ratings.modeconfig import ModeConfig
from stream.ratings.population import Population, lineup_key
from stream.ratings.population.evidence import is_team_match
from stream.ratings.resolution import outcome_of
from stream.ratings.skill import PlayerState


class PlayerProcessor:
    """Handles player commands for the player partitions this worker owns."""

    def __init__(
        self,
        modes: Modes,
        *,
        partitions: int,
        announce_seconds: float = 0.0,
        adjustments: Sequence[tuple[str, PlayerChange]] = (),
        refunds: Sequence[Refund] = (),
    ) -> None:
        """``adjustments``: the operator's player changes, each with the player as rated (an
        erased player's pseudonym), in the corrections file's order; ``refunds`` the same."""
        self.modes = modes
        self.partitions = partitions
        # Reports to the combiner that only move the abandon floor go out at most this often
        # (the worker: its tick). That floor holds only results of matches longer than the
        # grace period, which wait that long anyway; sent on every watermark, several a tick,
        # they cost a fifth more worker CPU per match (docs/benchmarks.md, "The tick").
        self.announce_seconds = announce_seconds
        # A learning mode's rules per population the rate commands carried (_rules).
        self._populations: dict[tuple[str, Population], tuple[ModeConfig, ModeConfig]] = {}
        # Each player's adjustments by effective time, then as given (replay's order).
        self._adjusting: dict[str, list[PlayerChange]] = {}
        for player_id, adjust in sorted(adjustments, key=lambda item: item[1].effective):
            self._adjusting.setdefault(player_id, []).append(adjust)
        self._refunds = tuple(refunds)

    def restore(
        self, number: int, records: Iterable[tuple[str, PendingRecord]], wall: float = 0.0
    ) -> PlayerPartition:
        """The partition's waiting players from its pending records (after an assignment or
        recovery). The watermarks are not stored: snapshots wait for the next ones, one tick."""
        partition = PlayerPartition(number, self.partitions, life=new_epoch(wall))
        for player_id, record in records:
            if record.matches:
                # A snapshot or an abandon request may be waiting: look again at the oldest.
                at, _ = min(play_order(m.turn, mid) for mid, m in record.matches.items())
                partition.wait(at, player_id, wall)
        for player_id, adjusts in self._adjusting.items():
            if partition_for(player_id, self.partitions) == number:
                for adjust in adjusts:
                    heapq.heappush(partition.adjusting, (adjust.effective, player_id))
        return partition

    def on_command(self, ctx: PlayerContext, command: PlayerCommand) -> None:
        match command:
            case Join():
                self._join(ctx, command)
            case Rate():
                self._rate(ctx, command)
            case Ordered(match_id, order, players):
                for player_id in players:
                    record = ctx.pending.get(player_id)
                    entry = None if record is None else record.matches.get(match_id)
                    if record is not None and entry is not None and entry.order != order:
                        self._ordered(ctx, player_id, match_id, record, entry, order)
            case Cancel(match_id, players):
                for player_id in players:
                    self._release(ctx, match_id, player_id, remember=True)
            case Adjusting(player_id, adjust_id):
                self._apply(ctx, player_id, adjust_id)
            case Combined():
                for player_id in watermarks.on_combined(ctx.partition, command):
                    record = ctx.pending.get(player_id)
                    if record is not None:
                        self._reconcile(ctx, player_id, record, changed=False)
                for player_id in ctx.partition.adjustments_due():
                    self._request(ctx, player_id, ctx.pending.get(player_id))
            case Watermark():
                pass  # a version 9 worker's, left in the topic at an upgrade: the combiner's now

    def report(self, ctx: PlayerContext) -> None:
        """At the end of the partition's part of a batch: its report to the combiner, once the
        broker has the rest (after every abandon request it covers), when one is due
        (:func:`stream.pipeline.watermarks.player_report`)."""
        sent = watermarks.player_report(ctx.partition, ctx.wall, self.announce_seconds)
        if sent is not None:
            ctx.out.to_match_after(0, sent)

    # --- handlers -----------------------------------------------------------------------------

    def _join(self, ctx: PlayerContext, join: Join) -> None:
        match_id, player_id = join.match_id, join.player_id
        record = ctx.pending.get(player_id) or PendingRecord()
        rated = ctx.ratings.get(rating_key(player_id, join.mode))
        if match_id in record.done or (
            rated is not None and (match_id in rated.recent or match_id in rated.refunded)
        ):
            # Settled long ago: say so, with the current state for the others' benefit, and
            # the start the join gave: read before that start (a match partition reading its
            # inputs again after a restore), the match side keeps it for the entry the start
            # makes anew, which would otherwise wait for good on a player who has the match.
            state = _state_of(rated)
            ctx.out.to_match(join.home, Snapshot(match_id, player_id, state, True, join.started_at))
            if join.ask:
                # Done with it here: any position orders it for the others.
                ctx.out.to_match(join.home, Position(match_id, player_id, join.started_at))
            return
        matches = record.matches
        entry = matches.get(match_id)
        if entry is not None:
            self._joined_again(ctx, join, record, entry)
            if ctx.partition.sent_snapshot(player_id, match_id, entry):
                state = self._current(ctx, player_id, join.mode, rated)
                lineup = None if rated is None else rated.lineup
                turn = _taken_for(entry)
                snapshot = Snapshot(
                    match_id, player_id, state, False, join.started_at, lineup, turn
                )
                ctx.out.to_match(join.home, snapshot)
            return
        grace = self.modes.pending(join.mode).grace_seconds
        if _moved_on(join, grace, rated, record, ctx.partition, player_id):
            ctx.out.count("late_joins")
        floor = None
        if join.ask and join.order is None:
            # A start that may be late: the player's turn for it comes after every one of
            # theirs whose snapshot is out, strictly (a tie would go by match id), and the home
            # orders the match by every player's (docs/event-time.md, "Late starts"). Nothing
            # of theirs after it goes until then.
            snapped = [
                math.nextafter(pending.turn, math.inf)
                for other, pending in matches.items()
                if ctx.partition.sent_snapshot(player_id, other, pending)
            ]
            floor = max([join.started_at, *snapped])
            ctx.out.to_match(join.home, Position(match_id, player_id, floor))
        # The games of the state a snapshot would carry now: one rated from fewer is not this
        # entry's but a result read again from long before (_still_pending).
        state = self._current(ctx, player_id, join.mode, rated)
        games = 0 if state is None else state.games
        matches[match_id] = PendingMatch(
            join.mode, join.started_at, join.home, order=join.order, floor=floor, games=games
        )
        self._reconcile(ctx, player_id, record)

    def _joined_again(
        self, ctx: PlayerContext, join: Join, record: PendingRecord, entry: PendingMatch
    ) -> None:
        """A join for a match already pending (sent again: its home restored, or a table of
        this partition restored behind). An order it carries is taken. Asked, the position
        goes again (the entry's turn: its start for one joined on time, which nothing after it
        has gone before). A plain join for a late start not ordered yet comes from a home
        that took the start for one on time (its entry came back from a table restored behind
        and was decided anew): the position goes anyway, and the home asks every player again
        (Decider.position), so all end with one order."""
        player_id = join.player_id
        if join.order is not None:
            if entry.order != join.order:
                self._ordered(ctx, player_id, join.match_id, record, entry, join.order)
            return
        if join.ask or entry.unordered:
            ctx.out.to_match(join.home, Position(join.match_id, player_id, entry.turn))

    def _ordered(
        self,
        ctx: PlayerContext,
        player_id: str,
        match_id: str,
        record: PendingRecord,
        entry: PendingMatch,
        order: float,
    ) -> None:
        """A late start's order has come: the player's turn for it comes then. A snapshot sent
        for another turn before (its own time, :meth:`_reconcile`, or an order its home decided
        in an earlier life, from positions read in another order) stands only for that turn:
        the home drops it, and another goes in the match's turn. The home's latest order is
        the one: it sends it to every player whenever it decides."""
        if entry.turn != order:
            ctx.partition.snapped.discard((player_id, match_id))
        entry.order = order
        entry.floor = None
        self._reconcile(ctx, player_id, record)

    def _rate(self, ctx: PlayerContext, rate: Rate) -> None:
        match_id = rate.match_id
        mode = self.modes.get(rate.mode)
        if rate.population is not None:
            # The learned population the match partition chose for the match.
            mode = self._rules(mode, rate.population)
        teams = tuple(tuple(team) for team in rate.teams)
        match = MatchView(teams, tuple(rate.ranks), rate.at, rate.stats, parties_of(rate.parties))
        snapshots = {pid: s for pid, s in rate.snapshots.items() if s is not None}
        # A learning mode keeps each player's line-up at their last team match (its
        # persistence): replay does the same for every rated player (stream/offline/learning.py).
        lineups = (
            {pid: lineup_key(team) for team in teams for pid in team}
            if mode.population.learns and is_team_match(teams)
            else None
        )
        refunds = self._refunds
        for player in rate.players:
            player_id = player.player_id
            key = rating_key(player_id, rate.mode)
            rated = ctx.ratings.get(key)
            refund = (
                refund_for(refunds, rate.mode, player_id, teams, rate.ranks, rate.at)
                if refunds
                else None
            )
            if rated is not None and (
                match_id in rated.recent
                or match_id in rated.refunded
                or (
                    _applied_since(rated, rate.snapshots, player_id)
                    and not _still_pending(ctx, player_id, rate, rated)
                )
            ):
                ctx.out.count("duplicate_results")
            elif refund is not None:
                ctx.out.count("refunded_results")
                if rated is None or player_id == refund.player:
                    self._release(ctx, match_id, player_id, remember=True)
                    continue
                rated = self._refunded(ctx, rate, player_id, rated, refund, mode)
            else:
                state = self._current(ctx, player_id, rate.mode, rated)
                update = rate_player(mode, player_id, state, match, snapshots, player.forced)
                version = 1 if rated is None else rated.version + 1
                recent = [] if rated is None else rated.recent
                recent = [*recent[-(RECENT_MATCHES - 1) :], match_id]
                lineup = None if rated is None else rated.lineup
                if lineups is not None:
                    lineup = lineups[player_id]
                applied = [] if rated is None else rated.adjusted
                ctx.ratings.put(key, RatingRecord(update.state, version, recent, lineup, applied))
                rated = ctx.ratings.get(key)
                ctx.out.rating(
                    finished_ms=rate.finished_ms,
                    event=rating_changed(
                        player_id=player_id,
                        mode=mode,
                        match_id=match_id,
                        outcome=player.label or outcome_of(update.score).value,
                        before=state or initial_state(mode),
                        after=update.state,
                        version=version,
                        expected_score=update.expected_score,
                        at=rate.at,
                        why=explain(mode, state, update, rate.at),
                    ),
                )
            self._release(ctx, match_id, player_id, remember=False, rated=(rate.mode, rated))

    def _refunded(
        self,
        ctx: PlayerContext,
        rate: Rate,
        player_id: str,
        rated: RatingRecord,
        refund: Refund,
        mode: ModeConfig,
    ) -> RatingRecord | None:
        """``rate``'s result refunded for ``player_id``, who lost to the banned player and has
        a rating (module docstring): their rating record as it now is."""
        key = rating_key(player_id, rate.mode)
        recent = [*rated.recent[-(RECENT_MATCHES - 1) :], rate.match_id]
        version = rated.version + 1
        refunded = [*rated.refunded, rate.match_id]
        record = RatingRecord(rated.state, version, recent, rated.lineup, rated.adjusted, refunded)
        ctx.ratings.put(key, record)
        ctx.out.rating(
            finished_ms=rate.finished_ms,
            event=refund_changed(
                player_id=player_id,
                mode=mode,
                match_id=rate.match_id,
                state=rated.state,
                version=version,
                at=rate.at,
                refund=refund,
            ),
        )
        return ctx.ratings.get(key)

    def _request(self, ctx: PlayerContext, player_id: str, record: PendingRecord | None) -> None:
        """Ask for the player's adjustments that are due (module docstring), not applied and
        not asked for yet by this worker; the first not due ends it (they are in order)."""
        adjusts = self._adjusting.get(player_id)
        if not adjusts:
            return
        partition = ctx.partition
        oldest = min((m.at for m in record.matches.values()), default=None) if record else None
        for adjust in adjusts:
            effective = adjust.effective
            if not partition.allows(effective) or (oldest is not None and oldest < effective):
                return
            mark = (player_id, adjust.audit.id)
            if mark in partition.requested or self._applied(ctx, player_id, adjust):
                continue
            partition.requested.add(mark)
            ctx.out.to_player(partition.number, Adjusting(player_id, adjust.audit.id))

    def _unapplied(self, ctx: PlayerContext, player_id: str) -> float | None:
        """The effective time of the player's earliest adjustment not applied yet (None:
        none): a snapshot for a match started at or after it waits."""
        for adjust in self._adjusting.get(player_id, ()):
            if not self._applied(ctx, player_id, adjust):
                return adjust.effective
        return None

    def _applied(self, ctx: PlayerContext, player_id: str, adjust: PlayerChange) -> bool:
        rated = ctx.ratings.get(rating_key(player_id, adjust.mode))
        return rated is not None and adjust.audit.id in rated.adjusted

    def _apply(self, ctx: PlayerContext, player_id: str, adjust_id: str) -> None:
        """An ``adj`` command read back: apply the adjustment unless it was (a repeat, or a
        second request after a restart), then let a snapshot waiting for it go. A player
        without a rating in the mode gets the mode's initial state adjusted, as replay does
        (not a start from another mode: that is a first match's)."""
        adjust = next(
            (a for a in self._adjusting.get(player_id, ()) if a.audit.id == adjust_id), None
        )
        if adjust is None:
            # Not in this worker's corrections file (a file changed under a running re-rate).
            ctx.out.count("unknown_adjustments")
            return
        key = rating_key(player_id, adjust.mode)
        rated = ctx.ratings.get(key)
        if rated is not None and adjust_id in rated.adjusted:
            ctx.out.count("duplicate_adjustments")
            return
        mode = self.modes.get(adjust.mode)
        before = initial_state(mode) if rated is None else rated.state
        after = adjusted(mode, before, adjust)
        version = 1 if rated is None else rated.version + 1
        recent = [] if rated is None else rated.recent
        lineup = None if rated is None else rated.lineup
        applied = [*([] if rated is None else rated.adjusted), adjust_id]
        # An adjustment adds no game either: the refunds since the last counted result stay.
        refunded = [] if rated is None else rated.refunded
        ctx.ratings.put(key, RatingRecord(after, version, recent, lineup, applied, refunded))
        ctx.out.rating(
            adjustment_changed(
                player_id=player_id,
                mode=mode,
                change=adjust,
                before=before,
                after=after,
                version=version,
            )
        )
        record = ctx.pending.get(player_id)
        if record is not None and record.matches:
            self._reconcile(ctx, player_id, record, changed=False)

    def _rules(self, mode: ModeConfig, population: Population) -> ModeConfig:
        """``mode`` with ``population`` in force, built once per population (each rate command
        decodes its own; a mode's population changes a few times a day)."""
        # Populations compare (and hash) by their values, not by the object decoded.
        key = (mode.name, population)
        found = self._populations.get(key)
        if found is None or found[0] is not mode:
            if len(self._populations) > 256:
                self._populations.clear()
            found = self._populations[key] = (mode, population.rules(mode))
        return found[1]

    def _current(
        self, ctx: PlayerContext, player_id: str, mode: str, rated: RatingRecord | None
    ) -> PlayerState | None:
        """The state the player's next match in ``mode`` is rated from: their ``rated`` record's,
        or for a newcomer to a mode that starts from another, the start from their state there
        now (stream/ratings/carryover.py; their matches there that started earlier are settled
        by then, later ones wait for this one, so snapshot and rating see the same), or None.
        Replay derives it from the same state (Replayer._states)."""
        if rated is not None:
            return rated.state
        config = self.modes.get(mode)
        start = config.start
        if start is None:
            return None
        source = ctx.ratings.get(rating_key(player_id, start.from_mode))
        return None if source is None else started_from(config, source.state)

    def _release(
        self,
        ctx: PlayerContext,
        match_id: str,
        player_id: str,
        *,
        remember: bool,
        rated: tuple[str, RatingRecord | None] | None = None,
    ) -> None:
        """The match is settled for the player: drop it and let newer matches go ahead.
        ``rated``: settled by a result, with the mode and the player's rating record after
        it, whose version the pending record keeps (:meth:`_reconcile`)."""
        record = ctx.pending.get(player_id)
        if record is None:
            if not remember:
                return
            record = PendingRecord()
        changed = record.matches.pop(match_id, None) is not None
        if rated is not None and rated[1] is not None:
            mode, version = rated[0], rated[1].version
            if changed and record.matches and version > record.seen.get(mode, 0):
                # Others still pending: a snapshot of theirs must see this result. The highest
                # seen stays: an older result read again (a table restored behind) must not
                # hide a later one the rating record lacks (the crash simulator's seed 3682).
                record.seen = {**record.seen, mode: version}
            if player_id in ctx.partition.behind:
                ctx.partition.behind.discard(player_id)
                changed = True  # look again at the snapshot held for it
        ctx.partition.snapped.discard((player_id, match_id))
        ctx.partition.abandon_asked.discard((player_id, match_id))
        if remember and match_id not in record.done:
            # A cancelled match leaves no trace in the rating record: remember it here so a
            # redelivered join does not make it pending again.
            record.done = [*record.done[-(RECENT_MATCHES - 1) :], match_id]
            changed = True
        if changed:
            self._reconcile(ctx, player_id, record)

    def _reconcile(
        self, ctx: PlayerContext, player_id: str, record: PendingRecord, *, changed: bool = True
    ) -> None:
        """Send what the pending matches now allow, then store the record if it ``changed``
        (here or before the call).

        The oldest pending match may have its snapshot; every match with a newer one pending is
        reported for abandonment, once, with the start of the match that superseded it (the
        player's next start, so only once the watermarks have passed it).
        """
        # A snapshot for a match at or after an adjustment not applied yet waits for it.
        held_from = None
        if self._adjusting and player_id in self._adjusting:
            self._request(ctx, player_id, record)
            held_from = self._unapplied(ctx, player_id)
        matches = record.matches
        partition = ctx.partition
        # Snapshots go in the order of the players' turns: of play, but a start read late
        # after every match a player may have had a snapshot sent for (Join.order).
        order = sorted(matches.items(), key=lambda item: play_order(item[1].turn, item[0]))
        # A snapshot out for a match after the first (a start read late that is not ordered
        # so: one read before this life of its home had reported, docs/event-time.md): that
        # one is rated from it, so the first waits until it settles and is applied after it.
        # Both from the same state, one of the results would be taken for a redelivery and
        # dropped (_applied_since).
        ahead = any(partition.sent_snapshot(player_id, m, e) for m, e in order[1:])
        waiting = False
        if order:
            match_id, entry = order[0]
            # A late start not ordered yet waits for its order (Ordered), unless nothing of
            # the player's was out when it came: then its snapshot goes at once, for its own
            # time, and counts if the order is that time (every player's position was its
            # start), the way a start on time goes; if not, the home drops it and another
            # goes when the order comes.
            if (
                not ahead
                and (not entry.unordered or entry.floor == entry.at)
                and not partition.sent_snapshot(player_id, match_id, entry)
                and (held_from is None or entry.at < held_from)
            ):
                rated = ctx.ratings.get(rating_key(player_id, entry.mode))
                if record.seen.get(entry.mode, 0) > (0 if rated is None else rated.version):
                    # The rating record is behind the result that settled an older match of
                    # the player (a table restored behind the other): the result, read again
                    # from the commands, brings it up; a snapshot now would rate from before.
                    if player_id not in partition.behind:
                        partition.behind.add(player_id)
                        ctx.out.count("ratings_behind_pending")
                elif partition.allows(entry.turn):
                    state = self._current(ctx, player_id, entry.mode, rated)
                    lineup = None if rated is None else rated.lineup
                    snapshot = Snapshot(
                        match_id, player_id, state, False, entry.at, lineup, _taken_for(entry)
                    )
                    ctx.out.to_match(entry.home, snapshot)
                    partition.snapped.add((player_id, match_id))
                else:
                    # An older match of the player may still be on its way: wait for the
                    # watermarks to pass this one's turn.
                    partition.wait(entry.turn, player_id, ctx.wall)
                    waiting = True
        if _ask_abandons(ctx, player_id, matches, order):
            waiting = True
        if not waiting:
            partition.waits.pop(player_id, None)
        if not changed:
            return
        if matches or record.done:
            ctx.pending.put(player_id, record)
        else:
            ctx.pending.delete(player_id)


def _ask_abandons(
    ctx: PlayerContext,
    player_id: str,
    matches: dict[str, PendingMatch],
    order: list[tuple[str, PendingMatch]],
) -> bool:
    """Report every match with a newer one pending for abandonment, once, with the start of the
    match that superseded it, by the starts themselves as replay decides (``order``: by turn,
    which is by start unless a late start has an order): whether one waits for the watermarks.
    """
    partition = ctx.partition
    starts = (
        order
        if all(entry.order is None and entry.floor is None for entry in matches.values())
        else sorted(matches.items(), key=lambda item: play_order(item[1].at, item[0]))
    )
    waiting = False
    for index, (match_id, entry) in enumerate(starts[:-1]):
        if (player_id, match_id) not in partition.abandon_asked:
            since = starts[index + 1][1].at
            if partition.allows(since):
                ctx.out.to_match(entry.home, Abandon(match_id, player_id, since))
                partition.abandon_asked.add((player_id, match_id))
            else:
                # A match of the player started between the two may still be on its way
                # (joins arrive in any order): the request names the next start only.
                partition.wait(since, player_id, ctx.wall)
                waiting = True
    return waiting


def _moved_on(
    join: Join,
    grace: float,
    rated: RatingRecord | None,
    record: PendingRecord,
    partition: PlayerPartition,
    player_id: str,
) -> bool:
    """Whether a join comes after the player moved past its start, so that live differs from
    replay for them (docs/event-time.md): a later-started match of theirs has had its snapshot
    sent, or a match of theirs was rated at a time later than the grace period after this
    start (by event time this start had abandoned it first). Its start was published late.

    Not seen: a later-started match already rated within the grace period (the rating record
    keeps when a match was rated, not when it started). An overlap within the grace period is
    not one: the older match's result comes first either way."""
    last = None if rated is None else rated.state.last_played
    if last is not None and last > join.started_at + grace:
        return True
    return any(
        pending.at > join.started_at and partition.sent_snapshot(player_id, other, pending)
        for other, pending in record.matches.items()
    )


def _state_of(rated: RatingRecord | None) -> PlayerState | None:
    return None if rated is None else rated.state


def _applied_since(
    rated: RatingRecord, snapshots: Mapping[str, PlayerState | None], player_id: str
) -> bool:
    """Whether the player has played a match since the snapshot this result was rated from:
    then this result is a redelivery, however long ago its match id left the recent list.

    Each applied result adds exactly one game, and a player's snapshot goes out only once every
    older match of theirs is settled, with nothing applied between it and its result: a record
    with more games than the snapshot has this result already. A re-read window longer than
    :data:`RECENT_MATCHES` of the player's matches (a backlog, a partition sought back after a
    stall) would otherwise rate it again.
    """
    if player_id not in snapshots:
        return False  # no snapshot of the player to compare with
    snapshot = snapshots[player_id]
    return rated.state.games > (0 if snapshot is None else snapshot.games)


def _still_pending(ctx: PlayerContext, player_id: str, rate: Rate, rated: RatingRecord) -> bool:
    """Whether a result rated from a snapshot with fewer games than the player's rating record
    is still to be applied: the snapshot went out in an earlier life of the partition, for a
    match the player had moved past when a start read late came before it, and the partition
    restored since (which keeps no memory of the snapshots out) sent the late one's first; its
    result came before this one's (docs/event-time.md, "Late starts").

    Its match is pending in the player's pending record, which knows of every result applied
    to the rating record (the version it saw is the record's: not a pending record restored
    behind the rating record, in which an applied match can still be pending), and the
    snapshot is no older than the entry (not a result read again from before a join read
    again, once the match had left the recent list). Records written before the entries kept
    their games have no such entry: their results are taken for redeliveries, as before.
    """
    record = ctx.pending.get(player_id)
    if record is None:
        return False
    entry = record.matches.get(rate.match_id)
    if entry is None or entry.games is None:
        return False
    snapshot = rate.snapshots.get(player_id)
    games = 0 if snapshot is None else snapshot.games
    return entry.games <= games and record.seen.get(rate.mode) == rated.version


def _taken_for(entry: PendingMatch) -> float | None:
    """The turn a snapshot for ``entry`` is taken for: a late start's order, or its own time
    while the order has not come (Snapshot.turn); None for a start on time."""
    if entry.order is not None:
        return entry.order
    return entry.floor
