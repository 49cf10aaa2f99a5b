"""The match decision: (entry, input, clock) -> decision. Pure: no outbox, no table, no
partition, no wall clock; the entry given is never changed.

Read top to bottom, in the order of docs/event-time.md:

1. **An input reaches the match's home partition**: a start, a finish, a player's snapshot or
   an abandon request. What it makes of the entry is a transition of
   stream/pipeline/lifecycle.py (a new entry and what it asks for: a dead letter, a count,
   players released, a verdict sent again, a finish waiting for its start, joins).
2. **Event time passes a deadline** (or an input changed the entry): :meth:`Decider.advance`
   asks stream/pipeline/matchentry.py ``due`` what event time makes of the entry: forget a
   settled match past its retention, give up on commands whose start cannot come any more,
   let a finish whose start never came stand in for it, or settle.
3. **Settling**: stream/pipeline/verdicts.py decides who event time settles (the result,
   abandonment or the timeout, whichever comes first) and the ``rate`` and ``cancel``
   commands that say so, or holds the match for the abandon watermarks or its population.
4. **The next deadline** and what the liveness monitor is to know (a decided match still
   waiting, and for what) are effects of the decision like the commands.

The match side (stream/pipeline/matches.py) carries out a :class:`Decision` in one place:
its effects in order, then the entry written or deleted.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from enum import Enum

from stream.config.modes import Modes, PendingConfig
from stream.deadletters import DeadLetter
from stream.events import EventLimits, MatchFinished, MatchStarted, decode_match_finished
from stream.pipeline import lifecycle
from stream.pipeline.learnedpopulation import Populations
from stream.pipeline.lifecycle import Effects
from stream.pipeline.matchentry import (
    Due,
    copied,
    due,
    missing,
    next_deadline,
    stand_in,
    waiting_letter,
)
from stream.pipeline.partitioning import partition_for
from stream.pipeline.verdicts import Clock, Count, Effect, Send, Verdicts
from stream.protocol import (
    Abandon,
    Cancel,
    Join,
    MatchEntry,
    Ordered,
    Position,
    Snapshot,
    StoredMessage,
)

__all__ = [
    "Deadline",
    "Decider",
    "Decision",
    "Letter",
    "RunDue",
    "Unjoined",
    "Watch",
    "Write",
    "join_of",
]


@dataclass(frozen=True, slots=True)
class Letter:
    letter: DeadLetter


@dataclass(frozen=True, slots=True)
class Deadline:
    """Look at the match again when the partition's event time reaches ``at``."""

    at: float


@dataclass(frozen=True, slots=True)
class Unjoined:
    """A finish with a line-up waiting for its start, dated ``at``: the watermark to the
    player partitions stays at or below it (stream/pipeline/watermarks.py, ``mark``)."""

    at: float


@dataclass(frozen=True, slots=True)
class Watch:
    """For the liveness monitor: what a decided, unsettled match waits for (None: nothing)."""

    waiting_for: str | None


@dataclass(frozen=True, slots=True)
class RunDue:
    """Act on every match whose deadline has passed, once the entry is written."""


class Write(Enum):
    NONE = "none"  # the table keeps what it has
    PUT = "put"  # the entry is written
    DELETE = "delete"  # the entry is deleted


Outcome = Effect | Letter | Deadline | Unjoined | Watch | RunDue


@dataclass(frozen=True, slots=True)
class Decision:
    """The entry to keep, how the table takes it, and the effects, in their order."""

    entry: MatchEntry | None
    write: Write = Write.NONE
    effects: list[Outcome] = field(default_factory=list)


# A service, not a value: compared and hashed by identity.
@dataclass(eq=False)
class Decider:
    """The decisions of every match partition of a worker (module docstring)."""

    modes: Modes
    partitions: int
    populations: Populations
    limits: EventLimits
    retention: float
    verdicts: Verdicts = field(init=False)

    def __post_init__(self) -> None:
        self.verdicts = Verdicts(self.modes, self.partitions, self.populations)

    # --- 1. inputs ----------------------------------------------------------------------------

    def start(
        self, entry: MatchEntry | None, event: MatchStarted, mode: str, clock: Clock
    ) -> Decision:
        """A match-started of mode ``mode`` (the modes file's name for it); one that may be
        late asks its players' positions (:func:`_mark_late`)."""
        entry, asked = lifecycle.start(entry, event, mode, self.limits)
        if asked.join and entry is not None:
            _mark_late(entry, clock)
        return self._transition(event.match_id, entry, asked, clock)

    def finish(
        self,
        entry: MatchEntry | None,
        event: MatchFinished,
        mode: str,
        message: StoredMessage,
        clock: Clock,
    ) -> Decision:
        """A match-finished of mode ``mode``; ``message``: its bytes and origin."""
        grace = self.modes.pending(mode).grace_seconds
        before = entry
        entry, asked = lifecycle.finish(
            entry, event, mode, message, grace_seconds=grace, now=clock.now
        )
        if entry is not None and entry is not before and entry.teams is None and entry.wait:
            # A finish that waits for its start: if that never comes, the finish stands in
            # for it, and its joins are dated at the finish (advance, Due.NO_START).
            fin = entry.finish
            promised = clock.promised
            if fin is not None and (promised is None or fin.at < promised):
                entry.late = True
        return self._transition(event.match_id, entry, asked, clock)

    def snapshot(self, entry: MatchEntry | None, snap: Snapshot, clock: Clock) -> Decision:
        entry, asked = lifecycle.snapshot(entry, snap, clock.now)
        return self._transition(snap.match_id, entry, asked, clock)

    def position(self, entry: MatchEntry | None, position: Position, clock: Clock) -> Decision:
        """A player's position for a match whose start was read late: once every player's
        is in, the match's order is the latest of them and its start, sent to every player
        (docs/event-time.md, "Late starts"). One read again after the order was decided gets
        it again (a player partition restored behind its answer asks once more)."""
        start = None if entry is None else entry.start
        if entry is None or entry.teams is None or start is None or entry.done is not None:
            return Decision(entry, Write.NONE, [Count("stray_positions")])
        pid = position.player_id
        players = [p for team in entry.teams for p in team]
        if pid not in players:
            return Decision(entry, Write.NONE, [Count("stray_positions")])
        if entry.order is not None:
            target = partition_for(pid, self.partitions)
            ordered = Ordered(position.match_id, entry.order, [pid])
            return Decision(entry, Write.NONE, [Send(target, ordered)])
        known = entry.positions.get(pid)
        if entry.late and known is not None and known >= position.floor:
            return Decision(entry, Write.NONE, [])
        asked: list[Outcome] = []
        entry = copied(entry)
        if not entry.late:
            # Taken for on time here (this entry was made again after a table came back
            # behind the one that asked), late at a player: ask every player now.
            entry.late = True
            asked = self._join(position.match_id, entry, clock)
        entry.positions[pid] = max(position.floor, known or position.floor)
        if any(p not in entry.positions for p in players):
            return Decision(entry, Write.PUT, asked)
        order = max(start, *entry.positions.values())
        entry.order = order
        for p in players:
            if p in entry.snaps and entry.positions[p] != order and p not in entry.settled:
                # Taken at the player's own position, before a later turn: it sends another
                # once the order has come and its turn with it.
                del entry.snaps[p]
                entry.lines.pop(p, None)
        by_partition: defaultdict[int, list[str]] = defaultdict(list)
        for p in players:
            by_partition[partition_for(p, self.partitions)].append(p)
        sends: list[Outcome] = [
            Send(target, Ordered(position.match_id, order, pids))
            for target, pids in sorted(by_partition.items())
        ]
        # The snapshots taken for that turn may all be in: settle what they allow.
        decided = self.advance(position.match_id, entry, clock)
        return Decision(decided.entry, decided.write, [*asked, *sends, *decided.effects])

    def abandon_request(self, entry: MatchEntry | None, request: Abandon, clock: Clock) -> Decision:
        entry, asked = lifecycle.abandon_request(entry, request, clock.now)
        return self._transition(request.match_id, entry, asked, clock)

    def _transition(
        self, match_id: str, entry: MatchEntry | None, asked: Effects, clock: Clock
    ) -> Decision:
        """What a transition asks (stream/pipeline/lifecycle.py), in the order of its fields."""
        effects: list[Outcome] = []
        if asked.letter is not None:
            effects.append(Letter(asked.letter))
        if asked.count is not None:
            effects.append(Count(asked.count))
        if asked.release is not None:
            effects += self._release(match_id, asked.release)
        if asked.release_player is not None:
            player = asked.release_player
            target = partition_for(player, self.partitions)
            effects.append(Send(target, Cancel(match_id, [player])))
        if entry is None:
            return Decision(None, Write.NONE, effects)
        if asked.resend is not None:
            effects += self.verdicts.resend(match_id, entry, asked.resend, clock)
        wait = asked.wait
        if wait is not None:
            fin = entry.finish
            assert fin is not None  # a waiting finish keeps its result
            if wait.unjoined:
                effects.append(Unjoined(fin.at))
            effects += [Deadline(wait.until), RunDue()]
            return Decision(entry, Write.PUT, effects)
        if asked.join:
            effects += self._join(match_id, entry, clock)
        if not asked.advance:
            return Decision(entry, Write.NONE, effects)
        decided = self.advance(match_id, entry, clock)
        return Decision(decided.entry, decided.write, effects + decided.effects)

    # --- 2. event time ------------------------------------------------------------------------

    def advance(self, match_id: str, entry: MatchEntry, clock: Clock) -> Decision:
        """What event time makes of the entry now (:func:`matchentry.due`), then its next
        deadline and what it waits for."""
        now = clock.now
        effects: list[Outcome] = []
        kept = entry.evidence is not None and not self._evidence_out(entry, clock)
        match due(entry, now, self._policy(entry), self.retention, kept=kept):
            case Due.FORGET:
                return Decision(None, Write.DELETE, [Watch(None)])
            case Due.GIVE_UP:
                # The match is unknown here for good: release the players waiting on it.
                return Decision(None, Write.DELETE, [*self._release(match_id, entry), Watch(None)])
            case Due.NO_START:
                wait = entry.wait
                assert wait is not None  # a waiting finish
                teams = decode_match_finished(wait.message.value, self.limits).teams
                problem: str | None = (
                    "no teams, and no match-started arrived within the grace period"
                )
                if teams is not None:
                    entry, problem = stand_in(entry, teams)
                if problem is not None:
                    letter = waiting_letter(wait, f"match-finished: {problem}")
                    released = self._release(match_id, entry)
                    return Decision(None, Write.DELETE, [Letter(letter), *released, Watch(None)])
                # Dated at its finish, which the watermark stays below from the moment the
                # finish was read until these joins are out: late only if the finish was
                # (Decider.finish marked it then).
                effects += self._join(match_id, entry, clock)
                effects.append(Count("finished_without_start"))
                # Snapshots read before the stand-in (a crash after an earlier stand-in of it:
                # its joins' answers, read again first) settle it now; none: nothing yet.
                entry = self._settle(match_id, entry, clock, effects)
            case Due.SETTLE:
                entry = self._settle(match_id, entry, clock, effects)
            case Due.KEEP:
                pass
        at = self.next_deadline(entry)
        effects.append(Watch(self._waiting_for(entry, now, at)))
        if at is not None and (now is None or at > now):
            # A deadline already passed is settled above, or waits for what the verdicts wait
            # for (snapshots, abandon requests), which advances the entry when it comes: queued
            # again, it would rewrite the entry with every batch until then.
            effects.append(Deadline(at))
        return Decision(entry, Write.PUT, effects)

    # --- 3. settling --------------------------------------------------------------------------

    def _settle(
        self, match_id: str, entry: MatchEntry, clock: Clock, effects: list[Outcome]
    ) -> MatchEntry:
        assert entry.teams is not None
        entry, verdicts = self.verdicts.settle(match_id, entry, entry.teams, clock)
        effects += verdicts
        return entry

    # --- 4. what it waits for -----------------------------------------------------------------

    @staticmethod
    def _waiting_for(entry: MatchEntry, now: float | None, deadline: float | None) -> str | None:
        """A match whose fate is decided (a result read, or a deadline passed) that is not
        settled: what it waits for (None: it waits for nothing, or is not decided yet)."""
        decided = entry.finish is not None or (
            now is not None and deadline is not None and now >= deadline
        )
        if entry.done is not None or entry.teams is None or not decided:
            return None
        return missing(entry)

    # --- helpers ------------------------------------------------------------------------------

    def _evidence_out(self, entry: MatchEntry, clock: Clock) -> bool:
        """Whether a settled match's evidence has gone out in a ``closed`` (or its mode does
        not learn): until then the entry is kept, whatever its retention."""
        assert entry.start is not None  # a settled match has its start
        return self.populations.sent(clock.populations, entry.mode, entry.start, clock.partition)

    def next_deadline(self, entry: MatchEntry) -> float | None:
        """When event time next makes something of the entry (:func:`matchentry.next_deadline`)."""
        return next_deadline(entry, self._policy(entry), self.retention)

    def _policy(self, entry: MatchEntry) -> PendingConfig | None:
        """The pending policy of a running match (only it is timed by one; read here only)."""
        running = entry.done is None and entry.teams is not None and entry.finish is None
        return self.modes.pending(entry.mode) if running else None

    def _release(self, match_id: str, entry: MatchEntry) -> list[Outcome]:
        """Cancel the match for the players whose snapshots or abandon requests it holds."""
        players = sorted({*entry.snaps, *entry.abandons})
        by_partition: defaultdict[int, list[str]] = defaultdict(list)
        for pid in players:
            by_partition[partition_for(pid, self.partitions)].append(pid)
        return [Send(target, Cancel(match_id, pids)) for target, pids in by_partition.items()]

    def _join(self, match_id: str, entry: MatchEntry, clock: Clock) -> list[Outcome]:
        """Ask every participant's partition for its snapshot (and to note the match pending);
        the answers come to this partition, the match's home."""
        assert entry.teams is not None and entry.start is not None
        return [
            Send(
                partition_for(pid, self.partitions),
                join_of(match_id, pid, entry, clock.partition),
            )
            for team in entry.teams
            for pid in team
        ]


def _mark_late(entry: MatchEntry, clock: Clock) -> None:
    """Whether the match's start (or the finish standing in for it) may be late: before what
    the player partitions may have been told every join is out for (``clock.promised``; not
    known yet: may be). Then a player may have had the snapshot of a later match sent before
    this join comes, and another player not: the joins ask each player's position, and the
    match is ordered for all of them by the latest (:meth:`Decider.position`)."""
    promised = clock.promised
    if entry.start is not None and (promised is None or entry.start < promised):
        entry.late = True


def join_of(match_id: str, pid: str, entry: MatchEntry, home: int) -> Join:
    """The join ``pid``'s partition gets: with the match's order once known, asking for the
    player's position while a late start's is not."""
    assert entry.start is not None  # a match with a line-up has its start
    ask = entry.late and entry.order is None
    return Join(match_id, pid, entry.mode, entry.start, home, entry.order, ask)
