"""The verdicts on a match's players: who event time now settles, and the ``rate`` and
``cancel`` commands that say so to their player partitions.

A player is settled exactly once per match, by whichever comes first in event time
(:func:`stream.ratings.settling.fate`, the rule replay applies too): the result, ``abandoned`` (the
grace period after the player started a newer match) or ``timeout`` (the start plus the mode's
timeout). A result or a timeout that an abandonment could still precede waits until every
player partition says its abandon requests up to then are out (``AbandonWatermark``): the match
is held on the partition (``MatchPartition.held``) and looked at again when they are.

Pure: (entry, line-up, clock) -> (entry, effects). The entry given is not changed (the one
returned is a new one when a player was settled); what the match side is to do is a list of
:data:`Effect` (commands to send, counts, the match held for abandon watermarks or for its
population, open for its result), applied by stream/pipeline/matches.py in order. Replay: a
player already settled is skipped, so deciding again sends nothing twice.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from dataclasses import dataclass

from stream.config.modes import Modes, PendingConfig
from stream.pipeline.learnedpopulation import Populations
from stream.pipeline.matchentry import parties_of, tuples
from stream.pipeline.partitioning import partition_for
from stream.protocol import Cancel, MatchEntry, PlayerCommand, PopulationRecord, Rate, RatedPlayer
from stream.ratings.engine import MatchView, match_shares
from stream.ratings.modeconfig import ModeConfig
from stream.ratings.population import Population
from stream.ratings.population.evidence import match_evidence, newcomers_of, rate_settled
from stream.ratings.resolution import Outcome, rated_players
from stream.ratings.settling import Fate, Settled, fate, may_be_superseded

__all__ = ["Awaiting", "Clock", "Count", "Effect", "Hold", "Send", "Unfold", "Verdicts"]


@dataclass(frozen=True, slots=True)
class Clock:
    """What a verdict reads besides the entry: the partition's event time for decisions
    (None: not known yet), how far every player partition's abandon requests are out (None:
    not known yet), its population record and its number; ``promised``: how far the player
    partitions may have been told that every join is out (a start before it is late:
    :meth:`stream.pipeline.eventtime.EventTime.promised`)."""

    now: float | None
    abandons_out: float | None
    populations: PopulationRecord
    partition: int
    promised: float | None = None


@dataclass(frozen=True, slots=True)
class Send:
    """Send ``command`` to player partition ``target``."""

    target: int
    command: PlayerCommand


@dataclass(frozen=True, slots=True)
class Count:
    name: str
    n: int = 1


@dataclass(frozen=True, slots=True)
class Hold:
    """Look at the match again once every abandon request for a start before ``since`` is out
    (``MatchPartition.held``)."""

    since: float


@dataclass(frozen=True, slots=True)
class Unfold:
    """Look at the match again once the population is known until ``until``
    (``MatchPartition.unfolded``)."""

    until: float


@dataclass(frozen=True, slots=True)
class Awaiting:
    """Whether the match is held open for its result (``MatchPartition.awaiting``)."""

    on: bool


Effect = Send | Count | Hold | Unfold | Awaiting


class Verdicts:
    """Settles the players of the match partitions' entries (one per worker)."""

    def __init__(self, modes: Modes, partitions: int, populations: Populations) -> None:
        self.modes = modes
        self.partitions = partitions
        self.populations = populations

    def settle(
        self, match_id: str, entry: MatchEntry, teams: list[list[str]], clock: Clock
    ) -> tuple[MatchEntry, list[Effect]]:
        """Settle every player whose fate event time now decides
        (:func:`stream.ratings.settling.fate`: the result, abandonment or the timeout, whichever
        comes first in event time): the entry as it is then, and what to do."""
        players = [pid for team in teams for pid in team]
        if not _ready(entry, players):
            return entry, []
        now, out = clock.now, _Effects()
        settled = set(entry.settled)
        fin = entry.finish
        pending = self.modes.pending(entry.mode)
        assert entry.start is not None  # an entry with teams has its start
        start = entry.start
        record = clock.populations
        known, population = self.populations.population_for(record, entry.mode, entry.start)
        if not known:
            # A mode that learns its population: wait until every partition has closed the
            # windows it folds (stream/pipeline/learnedpopulation.py).
            needs = self.populations.needs(entry.mode, entry.start)
            assert needs is not None  # only a learning mode waits
            return entry, [Unfold(needs)]
        if fin is not None and may_be_superseded(entry.start, fin.at, pending.grace_seconds):
            since = fin.at - pending.grace_seconds
            if not _abandons_out(clock, since):
                # A newer start of a player before fin.at - grace abandons them whatever the
                # result says: wait until every such start's abandon request has arrived.
                return entry, [Hold(since)]
        fates = self._fates(entry, players, settled, pending, now)
        if fin is None and any(f is not None and f.how is Settled.TIMEOUT for f in fates.values()):
            # An abandonment before the timeout comes first: wait for every abandon request
            # that could name one (as a result waits above).
            since = start + pending.timeout_seconds - pending.grace_seconds
            if not _abandons_out(clock, since):
                out.effects.append(Hold(since))
                fates = {
                    pid: f for pid, f in fates.items() if f is None or f.how is not Settled.TIMEOUT
                }
        sending = _Sending(out, match_id, entry, teams, settled, population)
        self._abandonments_and_timeouts(sending, fates, start + pending.timeout_seconds)
        if fin is not None:
            entry = sending.entry = self._with_evidence(entry, teams, population, pending)
            mode = self.modes.get(entry.mode)
            rated = rated_players(mode, tuples(teams), fin.quitters)
            to_rate = [RatedPlayer(pid, rated[pid], None) for pid in players if pid in rated]
            to_cancel = [pid for pid in players if pid not in rated]
            self._send(sending, fin.at, to_rate, to_cancel, by_result=True)
            settled.update(players)
        everyone = len(settled) == len(players)
        done, effects = entry.done, out.effects
        if everyone and fin is not None:
            done = fin.at if now is None else max(now, fin.at)
            effects.append(Awaiting(False))
        elif (
            everyone
            and now is not None
            and (
                fates
                or now >= start + pending.timeout_seconds
                or self.populations.sent(record, entry.mode, start, clock.partition)
            )
        ):
            # Settled by event time now; or every player said they have the match and no
            # result can add to what the population learned: event time is past the timeout,
            # or this partition has sent the match's window (a start read again after the
            # match was forgotten).
            done = now
            effects.append(Awaiting(False))
        elif everyone:
            # Every player said they have it before the result was read again (a restore): the
            # match stays open for its result, whose evidence its window still needs, for its
            # timeout, or until its window is known closed here.
            effects.append(Awaiting(True))
        entry = dataclasses.replace(
            entry, settled=[pid for pid in players if pid in settled], done=done
        )
        return entry, effects

    @staticmethod
    def _fates(
        entry: MatchEntry,
        players: list[str],
        settled: set[str],
        pending: PendingConfig,
        now: float | None,
    ) -> dict[str, Fate | None]:
        """Each unsettled player's fate by event time ``now`` (None: not decided yet)."""
        assert entry.start is not None
        fin = entry.finish
        return {
            pid: fate(
                entry.start,
                None if fin is None else fin.at,
                entry.abandons.get(pid),
                grace_seconds=pending.grace_seconds,
                timeout_seconds=pending.timeout_seconds,
                now=now,
            )
            for pid in players
            if pid not in settled
        }

    def _abandonments_and_timeouts(
        self, sending: _Sending, fates: dict[str, Fate | None], timeout_at: float
    ) -> None:
        """The players abandoned, each at their own time, and those timed out, together."""
        abandoned = sorted(
            (f.at, pid) for pid, f in fates.items() if f is not None and f.how is Settled.ABANDONED
        )
        for since, pid in abandoned:
            rated_player = RatedPlayer(pid, 0.0, Outcome.ABANDONED.value)
            self._send(sending, since, [rated_player], [], by_result=False)
            sending.settled.add(pid)
        timed_out = [
            RatedPlayer(pid, 0.0, Outcome.TIMEOUT.value)
            for pid, f in fates.items()
            if f is not None and f.how is Settled.TIMEOUT
        ]
        if timed_out:
            self._send(sending, timeout_at, timed_out, [], by_result=False)
            sending.settled.update(p.player_id for p in timed_out)
            sending.out.effects.append(Count("timed_out_matches"))

    def _with_evidence(
        self,
        entry: MatchEntry,
        teams: list[list[str]],
        population: Population | None,
        pending: PendingConfig,
    ) -> MatchEntry:
        """The entry with its evidence once a result settles its players (a learning mode)."""
        if population is None or entry.evidence is not None:
            return entry
        # Once per match, whoever settled its players: after a restore they may all have said
        # they have the match already (their snapshots read before the result was read again),
        # and the evidence must still be the match's.
        mode = self.modes.get(entry.mode)
        return dataclasses.replace(
            entry, evidence=self._evidence(entry, teams, mode, population, pending)
        )

    @staticmethod
    def _evidence(
        entry: MatchEntry,
        teams: list[list[str]],
        mode: ModeConfig,
        population: Population,
        pending: PendingConfig,
    ) -> list[int] | None:
        """A result that settles at least one player by event time: the match's evidence about
        its mode's population (encoded), computed as each player partition will rate it and as
        replay does (every player's fate by event time, the snapshots, the line-ups), kept in
        the entry until the partition sends it with its window
        (stream/pipeline/learnedpopulation.py). None when no player's fate is the result."""
        fin, start = entry.finish, entry.start
        assert fin is not None and start is not None
        fates = {
            pid: fate(
                start,
                fin.at,
                entry.abandons.get(pid),
                grace_seconds=pending.grace_seconds,
                timeout_seconds=pending.timeout_seconds,
            )
            for team in teams
            for pid in team
        }
        rules = population.rules(mode)
        states = {pid: s for pid, s in entry.snaps.items() if s is not None}
        match = MatchView(
            tuples(teams), tuple(fin.ranks), fin.at, fin.stats, parties_of(fin.parties)
        )
        decided = {pid: f for pid, f in fates.items() if f is not None}
        if not any(f.how is Settled.RESULT for f in decided.values()):
            # Evidence only from a result that settles someone, as replay counts it (a match
            # whose players were all abandoned or timed out first is not one).
            return None
        # Only newcomers' updates say anything of the prior: the others are not rated here.
        only = newcomers_of(match.teams, states)
        updates = rate_settled(rules, match, fin.quitters, states, decided, only)
        as_played = not fin.quitters and all(f.how is Settled.RESULT for f in decided.values())
        found = match_evidence(
            rules,
            population,
            match.teams,
            match.ranks,
            fin.at,
            states,
            updates,
            entry.lines,
            as_played=as_played,
            played=match_shares(rules, match),
            parties=match.parties,
        )
        return found.encode()

    def resend(self, match_id: str, entry: MatchEntry, pid: str, clock: Clock) -> list[Effect]:
        """``pid`` is settled here, yet their partition sent a snapshot that says it still
        waits for the verdict (a table of its restored behind the command): send the verdict
        again, as :meth:`settle` sent it. The player side applies it once, whatever else it
        has read (its rating record's recent matches and game count)."""
        teams, start, fin = entry.teams, entry.start, entry.finish
        if teams is None or start is None:
            return []
        record = clock.populations
        known, population = self.populations.population_for(record, entry.mode, start)
        if not known:
            return []
        pending = self.modes.pending(entry.mode)
        decided = fate(
            start,
            None if fin is None else fin.at,
            entry.abandons.get(pid),
            grace_seconds=pending.grace_seconds,
            timeout_seconds=pending.timeout_seconds,
            now=entry.done,
        )
        if decided is None:
            return []
        out = _Effects()
        sending = _Sending(out, match_id, entry, teams, set(), population)
        if decided.how is Settled.RESULT:
            assert fin is not None  # decided by its result
            rated = rated_players(self.modes.get(entry.mode), tuples(teams), fin.quitters)
            to_rate = [RatedPlayer(pid, rated[pid], None)] if pid in rated else []
            to_cancel = [] if pid in rated else [pid]
            self._send(sending, fin.at, to_rate, to_cancel, by_result=True)
        else:
            how = Outcome.ABANDONED if decided.how is Settled.ABANDONED else Outcome.TIMEOUT
            player = RatedPlayer(pid, 0.0, how.value)
            self._send(sending, decided.at, [player], [], by_result=False)
        out.effects.append(Count("resent_verdicts"))
        return out.effects

    def _send(
        self,
        sending: _Sending,
        at: float,
        to_rate: list[RatedPlayer],
        to_cancel: list[str],
        *,
        by_result: bool,
    ) -> None:
        """One rate and one cancel command per player partition, skipping settled players.
        ``by_result``: rated from the result (else an abandonment or timeout, rated the same
        whether or not a result was read, so that read order cannot change it)."""
        out, match_id, entry, teams = sending.out, sending.match_id, sending.entry, sending.teams
        settled, population = sending.settled, sending.population
        fin = entry.finish if by_result else None
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
                    population=population,
                    parties=None if fin is None else fin.parties,
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


@dataclass(slots=True)
class _Sending:
    """What every command of one verdict shares: where its effects go, the match, its entry
    and line-up, the players settled so far (none is sent twice) and the population in force
    for the match (a learning mode's; None: the mode's configured values)."""

    out: _Effects
    match_id: str
    entry: MatchEntry
    teams: list[list[str]]
    settled: set[str]
    population: Population | None


class _Effects:
    """The effects of one verdict, in order (the outbox's calls, recorded)."""

    __slots__ = ("effects",)

    def __init__(self) -> None:
        self.effects: list[Effect] = []

    def to_player(self, target: int, command: PlayerCommand) -> None:
        self.effects.append(Send(target, command))

    def count(self, name: str, n: int = 1) -> None:
        self.effects.append(Count(name, n))


def _abandons_out(clock: Clock, since: float) -> bool:
    """Whether every abandon request for a start before ``since`` has arrived."""
    return clock.abandons_out is not None and clock.abandons_out >= since


def _ready(entry: MatchEntry, players: list[str]) -> bool:
    """Whether every player's snapshot is in, and a late start's order: snapshots taken before
    it may be for another turn (Decider.position drops those), so nothing settles before."""
    if entry.late and entry.order is None:
        return False
    snaps = entry.snaps
    return len(snaps) >= len(players) and all(pid in snaps for pid in players)
