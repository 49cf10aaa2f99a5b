"""The match side: line-ups, rating snapshots, results, abandonment and timeouts.

One match lives on its *home* partition (Kafka's default partitioner on the match id). Its
entry in the match table holds the line-up, each participant's rating snapshot as their player
partition reported it, the result once it arrives, and which players have been settled. When
every snapshot is in and a player's fate is known, one ``rate`` or ``cancel`` command per player
partition goes out; the player side does the rating.

A player is settled exactly once per match, by whichever comes first in event time
(:func:`stream.settling.fate`, the rule replay applies too):
- the result (rated from the ranks, or a forced loss for a quitter, or cancelled),
- ``abandoned``, the grace period after the player started a newer match,
- ``timeout``, the start plus the mode's timeout.
A result read early does not win by arriving first: a match longer than the grace period
waits, before rating from its result, until the player partitions say that every abandon
request that could precede it has arrived (:class:`stream.protocol.AbandonWatermark`).

Event time here is a watermark (:class:`EventTime`, docs/event-time.md): every match partition
reports how far it has read both input topics, on each leader tick and at the end of a busy
batch (at most every SKILLSTREAM_PROGRESS_SECONDS), and a decision waits until every partition
has read past its deadline. So "the result has not arrived within the grace period"
means exactly that, however far behind the workers are and in whatever order they read the
partitions. A finish read before its start waits the same way for the start.

On replay: every handler is idempotent. A duplicate start or finish, a repeated snapshot or
abandon request finds the entry already changed and does nothing; a settled match is kept for
``retention_seconds`` of event time to recognise late duplicates. After a crash the partition
reads its inputs again from its last commit, in another order across topics, while what it
sent since stays sent: a snapshot or abandon request answering a join can come before the
start that sent the join, and is kept for it (:meth:`MatchProcessor._early_entry`); the
partition's own progress report is applied where it is made, never read back.
"""

from __future__ import annotations

import heapq
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field

from stream.config.modes import Modes, PendingConfig
from stream.deadletters import DeadLetter, Origin
from stream.events import (
    DEFAULT_LIMITS,
    EventError,
    EventLimits,
    MatchFinished,
    MatchStarted,
    decode_match_finished,
    decode_match_started,
)
from stream.pipeline.outbox import Outbox
from stream.pipeline.partitioning import partition_for
from stream.pipeline.timekeeping import Deadlines, EventTime
from stream.pipeline.view import StateView
from stream.protocol import (
    MATCHES,
    Abandon,
    AbandonWatermark,
    Cancel,
    Finish,
    Forward,
    Join,
    MatchCommand,
    MatchEntry,
    Progress,
    Rate,
    RatedPlayer,
    Snapshot,
    StoredMessage,
    Tick,
    Waiting,
    Watermark,
)
from stream.ratings.modes import ModeConfig
from stream.ratings.resolution import Outcome, rated_players
from stream.settling import Settled, fate, may_be_superseded

STARTED = "started"
FINISHED = "finished"


@dataclass(slots=True)
class MatchPartition:
    """A match partition this worker owns, across batches: how far it has read its inputs,
    its view of event time everywhere and the deadlines waiting on it (rebuilt after an
    assignment, see :meth:`MatchProcessor.restore`)."""

    number: int
    time: EventTime
    # The latest event time read on its own inputs (stored in the clocks table), and per input
    # topic ("started", "finished") the latest processed there.
    latest: float | None = None
    # The latest value stored in the clocks table (written once known, then each second of
    # event time: batches.CLOCK_STEP_SECONDS).
    stored: float | None = None
    read: dict[str, float] = field(default_factory=dict)
    deadlines: Deadlines = field(default_factory=Deadlines)
    # The round of the tick that arrived in this batch (None: none): report progress at its end.
    ticked: float | None = None
    # When (wall time) this partition last reported its progress (see MatchProcessor.report_due).
    reported: float = float("-inf")
    # A report arrived or was made in this batch: send the watermark at its end if it moved.
    # ``sent``: the last one sent.
    mark_due: bool = False
    sent: float | None = None
    # Finishes with a line-up waiting for a start that may not come, as (finish time, match
    # id), earliest first (lazily deleted: check the entry). Each sends its joins, dated at its
    # finish, only once event time passes it: the watermark sent to the player partitions
    # stays at or below the earliest, or it would promise those joins before they are sent.
    unjoined: list[tuple[float, str]] = field(default_factory=list)
    # Per player partition, how far its abandon requests are all out (AbandonWatermark), and
    # the results waiting for it: a result at ``fin.at`` waits until every start before
    # ``fin.at - grace`` has had its abandon requests delivered here.
    abandons: dict[int, float] = field(default_factory=dict)
    held: Deadlines = field(default_factory=Deadlines)
    # The liveness monitor's view (stream/pipeline/liveness.py): per match whose fate event
    # time has decided and that is not settled yet, since when (wall time) and what it waits
    # for. In memory only: after a restart each such match starts again from its restore.
    waits: dict[str, tuple[float, str]] = field(default_factory=dict)
    # Since when (wall time) this worker has owned the partition.
    owned_since: float = 0.0

    def abandons_out(self, partitions: int) -> float | None:
        """Every abandon request for a start before this has arrived (None: not known yet)."""
        marks = self.abandons
        return min(marks.values()) if len(marks) == partitions else None


@dataclass(slots=True)
class MatchContext:
    """One match partition in one batch: its state, its view of the match table, the batch's
    outbox and the wall time the batch started at."""

    partition: MatchPartition
    view: StateView[str, MatchEntry]
    out: Outbox
    wall: float

    @classmethod
    def of(
        cls, partition: MatchPartition, table: Mapping[bytes, bytes], out: Outbox, wall: float
    ) -> MatchContext:
        return cls(partition, StateView(table, MATCHES), out, wall)

    @property
    def now(self) -> float | None:
        """The event time decisions use (None: not known yet)."""
        return self.partition.time.now


class MatchProcessor:
    """Handles match events and commands for the match partitions this worker owns."""

    def __init__(
        self,
        modes: Modes,
        *,
        partitions: int,
        retention_seconds: float = 3600.0,
        limits: EventLimits = DEFAULT_LIMITS,
        max_future_seconds: float | None = None,
        lateness_seconds: float = 0.0,
        report_seconds: float | None = None,
    ) -> None:
        self.modes = modes
        self.partitions = partitions
        self.retention = retention_seconds
        self.limits = limits
        # How far out of event-time order the fleet may publish
        # (SKILLSTREAM_EVENT_LATENESS_SECONDS): every watermark is this much lower.
        self.lateness = lateness_seconds
        # A partition busy with batches reports its progress at the end of one at most this
        # often (SKILLSTREAM_PROGRESS_SECONDS; None: on the leader's ticks only). The tick alone
        # costs an instant match a hop and half a tick (docs/benchmarks.md, "The tick"); the
        # tick still moves event time while nothing arrives.
        self.report_seconds = report_seconds
        # An event time this far past the wall clock is refused (None: no check). One event
        # from a server with a broken clock would otherwise move the partition's event time
        # on, and every match pending there would be abandoned or timed out.
        self.max_future_seconds = max_future_seconds

    # --- clocks and deadlines -----------------------------------------------------------------

    def restore(
        self,
        number: int,
        stored_latest: float | None,
        entries: list[tuple[str, MatchEntry]],
        wall: float,
    ) -> MatchPartition:
        """The partition's event time and deadlines from its tables (after assignment or
        recovery). The other partitions' progress is not stored: decisions wait for their next
        reports, one tick."""
        time = EventTime(self.partitions, self.lateness, stored_latest, wall)
        partition = MatchPartition(number, time, stored_latest, stored_latest, owned_since=wall)
        for match_id, entry in entries:
            if entry.done is None and entry.teams is not None and entry.fin is not None:
                partition.waits[match_id] = (wall, _missing(entry))
            wait = entry.wait
            if (
                wait is not None
                and entry.teams is None
                and entry.fin is not None
                and decode_match_finished(wait.message.value, self.limits).teams is not None
            ):
                heapq.heappush(partition.unjoined, (entry.fin.at, match_id))
            at = self._next_deadline(entry)
            if at is not None:
                partition.deadlines.add(at, match_id)
            elif entry.fin is not None and entry.done is None and entry.teams is not None:
                # A result held for the abandon requests (or for snapshots): look again when
                # they are all out.
                grace = self._pending(entry.mode).grace_seconds
                partition.held.add(entry.fin.at - grace, match_id)
        return partition

    # --- inputs -------------------------------------------------------------------------------

    def on_event(
        self,
        ctx: MatchContext,
        kind: str,
        key: bytes | None,
        value: bytes | None,
        origin: Origin,
        *,
        forwarded: bool = False,
    ) -> None:
        """A match-started or match-finished message (``kind``), or one ``forwarded`` home."""
        out, wall = ctx.out, ctx.wall
        size = len(key or b"") + len(value or b"")
        if size > self.limits.max_bytes:
            # Before parsing, and the key too: a forwarded event carries both in one command.
            reason = (
                f"match-{kind}: event is {size} bytes (key {len(key or b'')}, value "
                f"{len(value or b'')}), over the limit of {self.limits.max_bytes} bytes "
                "(SKILLSTREAM_MAX_EVENT_BYTES)"
            )
            out.dead_letter(DeadLetter(key, value, origin, reason))
            return
        decode = decode_match_started if kind == STARTED else decode_match_finished
        try:
            event = decode(value or b"", self.limits)
            mode = self._mode(event.mode)
        except EventError as exc:
            out.dead_letter(DeadLetter(key, value, origin, f"match-{kind}: {exc}"))
            return
        at = event.started_at if isinstance(event, MatchStarted) else event.finished_at
        if self.max_future_seconds is not None and at > wall + self.max_future_seconds:
            field_name = "started_at" if kind == STARTED else "finished_at"
            reason = (
                f"match-{kind}: {field_name} is {at - wall:,.0f} s ahead of the worker's clock "
                f"(limit {self.max_future_seconds:g} s, SKILLSTREAM_MAX_FUTURE_SECONDS)"
            )
            out.dead_letter(DeadLetter(key, value, origin, reason))
            return
        partition = ctx.partition
        if not forwarded:
            # Read here, wherever it belongs: this partition's progress reports cover it.
            if partition.read.get(kind, at) <= at:
                partition.read[kind] = at
            if partition.latest is None or at > partition.latest:
                partition.latest = at
        partition.time.clock.observe(at, wall)
        home = partition_for(event.match_id, self.partitions)
        if home != partition.number:
            # Sent before this partition's next progress report, on the same partition: the
            # home handles it before it learns that this partition has read past it.
            out.to_match(home, Forward(kind, StoredMessage(key, value or b"", origin)))
            out.count("forwarded")
            return
        now = ctx.now
        if now is not None and at < now:
            # Published later than the lateness allows: decisions and snapshots up to ``now``
            # went without it (docs/event-time.md; SKILLSTREAM_EVENT_LATENESS_SECONDS). A late
            # start is every start of a fleet that publishes a match once it is over, harmless
            # unless one of its players has moved on: the player side counts that (late_joins).
            out.count("late_starts" if isinstance(event, MatchStarted) else "late_finishes")
        if isinstance(event, MatchStarted):
            self._start(ctx, event, mode)
        else:
            self._finish(ctx, event, mode, StoredMessage(key, value or b"", origin))
        self.run_due(ctx)

    def on_command(self, ctx: MatchContext, command: MatchCommand) -> None:
        """One command of a packed message for this match partition."""
        match command:
            case Snapshot():
                self._snapshot(ctx, command)
            case Abandon():
                self._abandon_request(ctx, command)
            case Forward(kind, message):
                self.on_event(ctx, kind, message.key, message.value, message.origin, forwarded=True)
            case Tick(wall):
                # The batch's wall time moves the clock; the leader's names the round.
                ctx.partition.time.clock.tick(ctx.wall)
                ctx.partition.ticked = wall
            case Progress(source, _, started, finished, latest):
                partition = ctx.partition
                if source != partition.number:
                    # (One of its own is from a version that sent them to itself: see report.)
                    partition.time.report(source, started, finished, latest, ctx.wall)
                    partition.mark_due = True
            case AbandonWatermark(source, at):
                partition = ctx.partition
                if at > partition.abandons.get(source, at - 1):
                    partition.abandons[source] = at
                for match_id in partition.held.due(partition.abandons_out(self.partitions)):
                    entry = ctx.view.get(match_id)
                    if entry is not None:
                        self._advance(ctx, match_id, entry)
        self.run_due(ctx)

    def report_due(self, partition: MatchPartition, wall: float) -> bool:
        """Whether the batch ending now reports the partition's progress: after a tick, and
        after any batch at most every ``report_seconds``."""
        if partition.ticked is not None:
            return True
        every = self.report_seconds
        return every is not None and wall - partition.reported >= every

    def report(self, ctx: MatchContext, *, started_done: bool, finished_done: bool) -> None:
        """This partition's progress, to every match partition (at the end of the batch, after
        every forward the batch sent). ``started_done``/``finished_done``: this worker has
        processed everything the broker holds on the partition's match-started /
        match-finished input. The round is the tick's, or the batch's wall time."""
        partition, out = ctx.partition, ctx.out
        partition.time.clock.tick(ctx.wall)
        progress = Progress(
            partition.number,
            ctx.wall if partition.ticked is None else partition.ticked,
            None if started_done else partition.read.get(STARTED, 0.0),
            None if finished_done else partition.read.get(FINISHED, 0.0),
            partition.latest,
        )
        partition.ticked = None
        partition.reported = ctx.wall
        # Its own report is applied here, not read back from the log: after a crash the
        # partition reads its inputs again from the last commit, and a report of its previous
        # life read back first would claim what it has not re-read yet.
        partition.time.report(
            progress.source, progress.started, progress.finished, progress.latest, ctx.wall
        )
        partition.mark_due = True
        # It may move event time past deadlines, as a report read from the topic would.
        self.run_due(ctx)
        for target in range(self.partitions):
            if target != partition.number:
                out.to_match(target, progress)

    def mark(self, ctx: MatchContext) -> None:
        """What this partition's joins promise, to every player partition: at the end of a
        batch that read or made a report (after every join the batch sent), when it moved.

        Joins go out for a start when it is read, and for a finish without a start, dated at
        its finish, once event time passes it: so the promise is the lower of both topics'
        watermarks, and no higher than a finish with a line-up still waiting here."""
        partition = ctx.partition
        partition.mark_due = False
        joined = partition.time.now
        waiting = partition.unjoined
        while waiting:
            at, match_id = waiting[0]
            entry = ctx.view.get(match_id)
            if entry is not None and entry.teams is None and entry.wait is not None:
                joined = None if joined is None else min(joined, at)
                break
            heapq.heappop(waiting)
        if joined is None or (partition.sent is not None and joined <= partition.sent):
            return
        partition.sent = joined
        mark = Watermark(partition.number, joined)
        for target in range(self.partitions):
            ctx.out.to_player(target, mark)

    def run_due(self, ctx: MatchContext) -> None:
        """Act on every match whose deadline the partition's event time has passed."""
        for match_id in ctx.partition.deadlines.due(ctx.now):
            entry = ctx.view.get(match_id)
            if entry is not None:
                self._advance(ctx, match_id, entry)

    # --- handlers -----------------------------------------------------------------------------

    def _mode(self, name: str) -> ModeConfig:
        try:
            return self.modes.get(name)
        except KeyError:
            raise EventError(
                f"mode: {name!r} is not in the modes file, which rejects unlisted modes"
            ) from None

    def _pending(self, mode_name: str) -> PendingConfig:
        """A mode's pending policy (grace and timeout): read here only."""
        return self.modes.pending(mode_name)

    def _start(self, ctx: MatchContext, event: MatchStarted, mode: ModeConfig) -> None:
        entry = ctx.view.get(event.match_id)
        if entry is None or _early(entry):
            early = entry
            entry = _new_entry(mode.name, event.teams, event.started_at)
            if early is not None:
                players = {pid for team in event.teams for pid in team}
                # Commands of players not in the line-up: no such match for them.
                self._release(ctx, event.match_id, _carry(early, entry, players))
            self._join(ctx, event.match_id, entry)
        elif entry.teams is None:
            # The finish came first: the start completes it.
            wait = entry.wait
            assert wait is not None  # an entry without teams is a waiting finish
            teams = [list(team) for team in event.teams]
            own = decode_match_finished(wait.message.value, self.limits).teams
            problem = None
            if own is not None:
                if _lineup(own) != _lineup(teams):
                    problem = "teams differ from the match-started line-up"
                else:
                    # The finish's team order is the one its ranks refer to.
                    teams = [list(team) for team in own]
            entry.teams = teams
            entry.start = event.started_at
            entry.wait = None
            problem = problem or _result_problem(teams, entry.fin)
            if problem is not None:
                ctx.out.dead_letter(_waiting_letter(wait, f"match-finished: {problem}"))
                entry.fin = None
            self._join(ctx, event.match_id, entry)
        else:
            ctx.out.count("duplicate_starts")
            return
        self._advance(ctx, event.match_id, entry)

    def _finish(
        self, ctx: MatchContext, event: MatchFinished, mode: ModeConfig, message: StoredMessage
    ) -> None:
        match_id, out = event.match_id, ctx.out
        entry = ctx.view.get(match_id)

        def reject(reason: str) -> None:
            out.dead_letter(
                DeadLetter(message.key, message.value, message.origin, f"match-finished: {reason}")
            )

        fin = Finish(
            at=event.finished_at,
            # When the finish was produced (Kafka timestamp): the latency metric's start.
            ts=message.origin.timestamp_ms,
            ranks=list(event.ranks),
            quitters=sorted(event.quitters),
            stats=None if event.stats is None else dict(event.stats),
        )
        if entry is None or _early(entry):
            # No start seen yet: it may still be unread. Wait until event time has passed the
            # finish (every start up to then has been read), or a grace period more when the
            # finish has no line-up of its own; then rate without the start or dead-letter.
            # Event times carry milliseconds: one more and no start can still come.
            wait = 0.001 if event.teams is not None else self._pending(mode.name).grace_seconds
            # A finish that is itself late (event time is past it already) waits from now, as
            # its start may be just as late.
            now = ctx.now
            until = (event.finished_at if now is None else max(event.finished_at, now)) + wait
            early = entry
            entry = _new_entry(mode.name, None, None)
            if early is not None:
                _carry(early, entry, None)
            entry.fin = fin
            entry.wait = Waiting(message, until)
            ctx.view.put(match_id, entry)
            if event.teams is not None:
                heapq.heappush(ctx.partition.unjoined, (fin.at, match_id))
            ctx.partition.deadlines.add(until, match_id)
            self.run_due(ctx)
            return
        elif entry.fin is not None or entry.done is not None:
            out.count("duplicate_finishes")
            return
        elif entry.mode != mode.name:
            reject(f"mode {mode.name!r} differs from the match-started mode {entry.mode!r}")
            return
        elif entry.teams is None:
            out.count("duplicate_finishes")
            return
        else:
            if event.teams is not None:
                if _lineup(event.teams) != _lineup(entry.teams):
                    reject("teams differ from the match-started line-up")
                    return
                # The finish's team order is the one its ranks refer to.
                entry.teams = [list(team) for team in event.teams]
            problem = _result_problem(entry.teams, fin)
            if problem is not None:
                reject(problem)
                return
            entry.fin = fin
        self._advance(ctx, match_id, entry)

    def _snapshot(self, ctx: MatchContext, snap: Snapshot) -> None:
        entry = ctx.view.get(snap.match_id)
        now = ctx.now
        if (
            entry is None
            and not snap.applied
            and snap.at is not None
            and (now is None or now <= snap.at)
        ):
            # Read before the start that asked for it: kept for it (see _early_entry). One
            # without its start (protocol version 4) is dropped, as before: it could not tell
            # when to give up waiting.
            entry = self._early_entry(snap.at)
        if entry is None or entry.done is not None:
            ctx.out.count("late_snapshots")
            return
        if snap.player_id in entry.snaps:
            if snap.applied and snap.player_id not in entry.settled:
                # The player already has the match: whatever snapshot came first, no rate.
                entry.settled.append(snap.player_id)
                self._advance(ctx, snap.match_id, entry)
            return
        if _early(entry) and snap.at is not None:
            entry.start = snap.at if entry.start is None else min(entry.start, snap.at)
        entry.snaps[snap.player_id] = snap.state
        if snap.applied and snap.player_id not in entry.settled:
            # The player already has this match (a duplicate after the retention period).
            entry.settled.append(snap.player_id)
        self._advance(ctx, snap.match_id, entry)

    def _abandon_request(self, ctx: MatchContext, request: Abandon) -> None:
        match_id, player_id = request.match_id, request.player_id
        entry = ctx.view.get(match_id)
        now = ctx.now
        if entry is None and (now is None or now <= request.since):
            # The start that made the player pending may still be unread here (a partition
            # reads its inputs again after a crash, in another order): keep the request for it
            # until event time has passed the newer start (see _early_entry).
            entry = self._early_entry(None)
        if entry is None or entry.done is not None:
            # Nothing to abandon here: release the player's pending entry.
            ctx.out.to_player(
                partition_for(player_id, self.partitions), Cancel(match_id, [player_id])
            )
            return
        if player_id in entry.settled:
            return
        # Recorded even beside a result: a result timed after the abandonment loses to it
        # (stream.settling), whichever was read first.
        current = entry.aband.get(player_id)
        if current is not None and current <= request.since:
            return
        entry.aband[player_id] = request.since
        self._advance(ctx, match_id, entry)

    # --- the decision ---------------------------------------------------------------------------

    def _advance(self, ctx: MatchContext, match_id: str, entry: MatchEntry) -> None:
        """Settle whoever can be settled now, store the entry, and queue its next deadline."""
        now = ctx.now
        done = entry.done
        if done is not None:
            ctx.partition.waits.pop(match_id, None)
            if now is not None and now >= done + self.retention:
                ctx.view.delete(match_id)
                return
        elif _early(entry):
            until = self._next_deadline(entry)
            if now is not None and until is not None and now >= until:
                # Event time has passed every start these commands could answer: the match
                # is unknown here for good. Release the players waiting on it.
                self._release(ctx, match_id, entry)
                ctx.view.delete(match_id)
                return
        elif entry.teams is None:
            wait = entry.wait
            assert wait is not None  # an entry without teams is a waiting finish
            if now is not None and now >= wait.until:
                teams = decode_match_finished(wait.message.value, self.limits).teams
                if teams is None:
                    ctx.out.dead_letter(
                        _waiting_letter(
                            wait,
                            "match-finished: no teams, and no match-started arrived within "
                            "the grace period",
                        )
                    )
                    self._release(ctx, match_id, entry)
                    ctx.view.delete(match_id)
                    return
                # No start came (late, or never sent): the finish's line-up stands in for it.
                fin = entry.fin
                assert fin is not None  # a waiting finish keeps its result
                entry.teams = [list(team) for team in teams]
                entry.start = fin.at
                entry.wait = None
                problem = _result_problem(entry.teams, fin)
                if problem is not None:
                    ctx.out.dead_letter(_waiting_letter(wait, f"match-finished: {problem}"))
                    self._release(ctx, match_id, entry)
                    ctx.view.delete(match_id)
                    return
                self._join(ctx, match_id, entry)
                ctx.out.count("finished_without_start")
        else:
            self._settle(ctx, match_id, entry, entry.teams)
        ctx.view.put(match_id, entry)
        at = self._next_deadline(entry)
        self._watch(ctx, match_id, entry, at)
        if at is not None and (now is None or at > now):
            # A deadline already passed is settled above, or waits for what _settle waits for
            # (snapshots, abandon requests), which advances the entry when it comes: queued
            # again, it would rewrite the entry with every batch until then.
            ctx.partition.deadlines.add(at, match_id)

    def _watch(
        self, ctx: MatchContext, match_id: str, entry: MatchEntry, deadline: float | None
    ) -> None:
        """Note, for the liveness monitor, a match whose fate is decided (a result read, or a
        deadline passed) that is not settled: since when it waits, and for what."""
        waits = ctx.partition.waits
        now = ctx.now
        decided = entry.fin is not None or (
            now is not None and deadline is not None and now >= deadline
        )
        if entry.done is not None or entry.teams is None or not decided:
            waits.pop(match_id, None)
            return
        since = waits.get(match_id, (ctx.wall, ""))[0]
        waits[match_id] = (since, _missing(entry))

    def _settle(
        self, ctx: MatchContext, match_id: str, entry: MatchEntry, teams: list[list[str]]
    ) -> None:
        """Settle every player whose fate event time now decides (:func:`stream.settling.fate`:
        the result, abandonment or the timeout, whichever comes first in event time)."""
        players = [pid for team in teams for pid in team]
        snaps = entry.snaps
        if len(snaps) < len(players) or any(pid not in snaps for pid in players):
            return
        now, out = ctx.now, ctx.out
        settled = set(entry.settled)
        fin = entry.fin
        pending = self._pending(entry.mode)
        assert entry.start is not None  # an entry with teams has its start
        if (
            fin is not None
            and may_be_superseded(entry.start, fin.at, pending.grace_seconds)
            and self._awaits_abandons(ctx, match_id, fin.at - pending.grace_seconds)
        ):
            # A newer start of a player before fin.at - grace abandons them whatever the
            # result says: wait until every such start's abandon request has arrived.
            return
        fates = {
            pid: fate(
                entry.start,
                None if fin is None else fin.at,
                entry.aband.get(pid),
                grace_seconds=pending.grace_seconds,
                timeout_seconds=pending.timeout_seconds,
                now=now,
            )
            for pid in players
            if pid not in settled
        }
        if fin is None and any(f is not None and f.how is Settled.TIMEOUT for f in fates.values()):
            # An abandonment before the timeout comes first: wait for every abandon request
            # that could name one (as a result waits above).
            timeout_at = entry.start + pending.timeout_seconds
            if self._awaits_abandons(ctx, match_id, timeout_at - pending.grace_seconds):
                fates = {
                    pid: f for pid, f in fates.items() if f is None or f.how is not Settled.TIMEOUT
                }
        abandoned = sorted(
            (f.at, pid) for pid, f in fates.items() if f is not None and f.how is Settled.ABANDONED
        )
        for since, pid in abandoned:
            rated_player = RatedPlayer(pid, 0.0, Outcome.ABANDONED.value)
            self._send(out, match_id, entry, teams, since, [rated_player], [], settled, False)
            settled.add(pid)
        timed_out = [
            RatedPlayer(pid, 0.0, Outcome.TIMEOUT.value)
            for pid, f in fates.items()
            if f is not None and f.how is Settled.TIMEOUT
        ]
        if timed_out:
            timeout_at = entry.start + pending.timeout_seconds
            self._send(out, match_id, entry, teams, timeout_at, timed_out, [], settled, False)
            settled.update(p.player_id for p in timed_out)
            out.count("timed_out_matches")
        if fin is not None:
            mode = self.modes.get(entry.mode)
            rated = rated_players(mode, _tuples(teams), fin.quitters)
            to_rate = [RatedPlayer(pid, rated[pid], None) for pid in players if pid in rated]
            to_cancel = [pid for pid in players if pid not in rated]
            self._send(out, match_id, entry, teams, fin.at, to_rate, to_cancel, settled, True)
            settled.update(players)
        entry.settled = [pid for pid in players if pid in settled]
        if len(settled) == len(players):
            if fin is not None:
                entry.done = fin.at if now is None else max(now, fin.at)
            else:
                assert now is not None  # without a result only event time settles anyone
                entry.done = now

    def _awaits_abandons(self, ctx: MatchContext, match_id: str, since: float) -> bool:
        """Whether an abandon request for a start before ``since`` may still be on its way; if
        so, the match is held until the player partitions say they are all out."""
        out_to = ctx.partition.abandons_out(self.partitions)
        if out_to is not None and out_to >= since:
            return False
        ctx.partition.held.add(since, match_id)
        return True

    def _send(
        self,
        out: Outbox,
        match_id: str,
        entry: MatchEntry,
        teams: list[list[str]],
        at: float,
        to_rate: list[RatedPlayer],
        to_cancel: list[str],
        settled: set[str],
        by_result: bool,
    ) -> None:
        """One rate and one cancel command per player partition, skipping settled players.
        ``by_result``: rated from the result (else an abandonment or timeout, rated the same
        whether or not a result was read, so that read order cannot change it)."""
        fin = entry.fin if by_result else None
        ranks = fin.ranks if fin is not None else [0] * len(teams)
        by_partition: defaultdict[int, list[RatedPlayer]] = defaultdict(list)
        for item in to_rate:
            if item.player_id not in settled:
                by_partition[partition_for(item.player_id, self.partitions)].append(item)
        for target, items in by_partition.items():
            out.to_player(
                target,
                Rate(
                    match_id=match_id,
                    mode=entry.mode,
                    at=at,
                    teams=teams,
                    ranks=ranks,
                    stats=None if fin is None else fin.stats,
                    snapshots=entry.snaps,
                    players=items,
                    finished_ms=None if fin is None else fin.ts,
                ),
            )
        cancels: defaultdict[int, list[str]] = defaultdict(list)
        for pid in to_cancel:
            if pid not in settled:
                cancels[partition_for(pid, self.partitions)].append(pid)
        for target, pids in cancels.items():
            out.to_player(target, Cancel(match_id, pids))
        if cancels:
            out.count("cancelled_players", sum(len(p) for p in cancels.values()))

    def _next_deadline(self, entry: MatchEntry) -> float | None:
        if entry.done is not None:
            return float(entry.done) + self.retention
        if entry.teams is None:
            if entry.wait is not None:
                return float(entry.wait.until)
            # Commands read before the start: once event time passes the start a snapshot
            # names, or the newer start an abandon request names, the start cannot come.
            early = list(entry.aband.values())
            if entry.start is not None:
                early.append(entry.start)
            return None if not early else min(early) + 0.001
        if entry.fin is not None:
            return None
        assert entry.start is not None  # an entry with teams has its start
        pending = self._pending(entry.mode)
        candidates = [entry.start + pending.timeout_seconds]
        settled = set(entry.settled)
        candidates += [
            since + pending.grace_seconds
            for pid, since in entry.aband.items()
            if pid not in settled
        ]
        return float(min(candidates))

    def _early_entry(self, start: float | None) -> MatchEntry:
        """An entry for commands read before their match's start. After a crash a partition
        reads its inputs again from the last commit, each input in order but the inputs in any
        order, while what it sent before the crash stays sent: a snapshot or an abandon request
        answering a join may be read before the start that sent the join. Dropped, the
        snapshot would be asked for again and come back with the player's state after the
        match; the abandon request would cancel a match the player did play."""
        return MatchEntry(mode="", teams=None, start=start)

    def _release(self, ctx: MatchContext, match_id: str, entry: MatchEntry) -> None:
        """Cancel the match for the players whose snapshots or abandon requests it holds."""
        players = sorted({*entry.snaps, *entry.aband})
        by_partition: defaultdict[int, list[str]] = defaultdict(list)
        for pid in players:
            by_partition[partition_for(pid, self.partitions)].append(pid)
        for target, pids in by_partition.items():
            ctx.out.to_player(target, Cancel(match_id, pids))

    def _join(self, ctx: MatchContext, match_id: str, entry: MatchEntry) -> None:
        """Ask every participant's partition for its snapshot (and to note the match pending)."""
        assert entry.teams is not None and entry.start is not None
        home = ctx.partition.number
        for team in entry.teams:
            for pid in team:
                ctx.out.to_player(
                    partition_for(pid, self.partitions),
                    Join(match_id, pid, entry.mode, entry.start, home),
                )


def _new_entry(
    mode: str, teams: tuple[tuple[str, ...], ...] | None, started_at: float | None
) -> MatchEntry:
    return MatchEntry(
        mode=mode,
        teams=None if teams is None else [list(team) for team in teams],
        start=started_at,
    )


def _early(entry: MatchEntry) -> bool:
    """Whether the entry only holds commands read before the match's start."""
    return entry.teams is None and entry.wait is None


def _carry(early: MatchEntry, entry: MatchEntry, players: set[str] | None) -> MatchEntry:
    """Move what was read before the start into ``entry`` for ``players`` (None: all), and
    return an early entry with the rest: the commands of players outside the line-up."""
    rest = MatchEntry(mode=early.mode, teams=None, start=early.start)
    for pid, snap in early.snaps.items():
        (entry.snaps if players is None or pid in players else rest.snaps)[pid] = snap
    for pid, since in early.aband.items():
        (entry.aband if players is None or pid in players else rest.aband)[pid] = since
    entry.settled = [p for p in early.settled if players is None or p in players]
    return rest


def _missing(entry: MatchEntry) -> str:
    """What a decided match still waits for, in words (the liveness monitor's log line)."""
    assert entry.teams is not None
    absent = [p for team in entry.teams for p in team if p not in entry.snaps]
    if absent:
        shown = ", ".join(absent[:5]) + (f" and {len(absent) - 5} more" if len(absent) > 5 else "")
        return f"the snapshots of {shown}"
    return "every player partition's abandon watermark"


def _result_problem(teams: list[list[str]], fin: Finish | None) -> str | None:
    """Why a result does not fit the line-up, or None."""
    if fin is None:
        return None
    if len(fin.ranks) != len(teams):
        return f"ranks: expected one rank per team ({len(teams)}), got {len(fin.ranks)}"
    players = {pid for team in teams for pid in team}
    for pid in [*fin.quitters, *(fin.stats or {})]:
        if pid not in players:
            return f"player {pid!r} is not in the match's teams"
    return None


def _waiting_letter(wait: Waiting, reason: str) -> DeadLetter:
    message = wait.message
    return DeadLetter(message.key, message.value, message.origin, reason)


def _lineup(teams: list[list[str]] | tuple[tuple[str, ...], ...]) -> list[list[str]]:
    return sorted(sorted(team) for team in teams)


def _tuples(teams: list[list[str]]) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(team) for team in teams)
