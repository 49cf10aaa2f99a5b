"""The match side: line-ups, rating snapshots, results, abandonment and timeouts.

One match lives on its *home* partition (Kafka's default partitioner on the match id). Its
entry in the match table holds the line-up, each participant's rating snapshot as their player
partition reported it, the result once it arrives, and which players have been settled. When
every snapshot is in and a player's fate is known, one ``rate`` or ``cancel`` command per player
partition goes out; the player side does the rating.

A player is settled exactly once per match, by whichever comes first in event time: the
result, ``abandoned`` or ``timeout``. What each input and event time make of a match is decided
by one pure module (stream/pipeline/decision.py); this one reads the inputs (checked by
stream/pipeline/matchinput.py), forwards those of other partitions, carries out each decision
in one place (:meth:`MatchProcessor._decided`), runs the event-time protocol and the learning
windows' closing, and keeps the deadlines; a partition's state is
stream/pipeline/matchpartition.py.

Event time here is a watermark (:class:`EventTime`, docs/event-time.md): every match partition
reports how far it has read both input topics to the combiner (stream/pipeline/combiner.py,
which runs on match partition 0), after each view it sends and at the end of a busy batch (at
most every SKILLSTREAM_PROGRESS_SECONDS), and a decision waits until every partition has read
past its deadline. So "the result has not arrived within the grace period"
means exactly that, however far behind the workers are and in whatever order they read the
partitions. A finish read before its start waits the same way for the start.

On replay: every handler is idempotent. A duplicate start or finish, a repeated snapshot or
abandon request finds the entry already changed and does nothing; a settled match is kept for
``retention_seconds`` of event time to recognise late duplicates. After a crash the partition
reads its inputs again from its last commit, in another order across topics, while what it
sent since stays sent: a snapshot or abandon request answering a join can come before the
start that sent the join, and is kept for it (:func:`stream.pipeline.matchentry.early_entry`); the
partition's own progress report is applied where it is made, never read back.
"""

from __future__ import annotations

__all__ = ["FINISHED", "STARTED", "MatchProcessor"]

import heapq
from collections.abc import Callable

from stream.config.modes import Modes, PendingConfig
from stream.corrections.inputs import InputCorrections
from stream.deadletters import DeadLetter, Origin
from stream.events import (
    DEFAULT_LIMITS,
    FINISHED_FIELDS,
    STARTED_FIELDS,
    EventError,
    EventLimits,
    MatchFinished,
    MatchStarted,
    decode_match_finished,
    unknown_fields_text,
)
from stream.pipeline import watermarks
from stream.pipeline.combiner import Combiner, Sends, new_epoch
from stream.pipeline.decision import (
    Deadline,
    Decider,
    Decision,
    Letter,
    RunDue,
    Unjoined,
    Watch,
    Write,
    join_of,
)
from stream.pipeline.eventtime import EventTime, PartitionClock
from stream.pipeline.learnedpopulation import Populations
from stream.pipeline.matchentry import (
    missing,
    missing_snapshots,
)
from stream.pipeline.matchinput import read_event
from stream.pipeline.matchpartition import FINISHED, STARTED, MatchContext, MatchPartition
from stream.pipeline.outbox import Outbox
from stream.pipeline.partitioning import partition_for
from stream.pipeline.verdicts import Awaiting, Clock, Count, Hold, Send, Unfold
from stream.protocol import (
    Abandon,
    AbandonWatermark,
    Forward,
    MatchCommand,
    MatchEntry,
    PlayerReport,
    PopulationRecord,
    Position,
    Progress,
    Report,
    Snapshot,
    StoredMessage,
    Tick,
    View,
    WindowClosed,
)
from stream.ratings.modeconfig import ModeConfig

# How many distinct unknown (event kind, field name) pairs a worker says before it stops saying
# new ones (each is still counted): a fleet's own fields are few, a hostile fleet's unbounded.
UNKNOWN_NAMES_SAID = 64


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
        corrections: InputCorrections | None = None,
    ) -> None:
        self.modes = modes
        # A re-rating worker's voids and erasures (stream/corrections/inputs.py); None: none.
        self.corrections = corrections
        self.partitions = partitions
        self.retention = retention_seconds
        self.populations = Populations(modes, partitions)
        self.limits = limits
        self.decider = Decider(modes, partitions, self.populations, limits, retention_seconds)
        # How far out of event-time order the fleet may publish
        # (SKILLSTREAM_EVENT_LATENESS_SECONDS): every watermark is this much lower.
        self.lateness = lateness_seconds
        # A partition that read match events reports at the end of its batch at most this
        # often (SKILLSTREAM_PROGRESS_SECONDS; None: on the combiner's rounds only). The rounds
        # alone cost an instant match a hop and half a tick (docs/benchmarks.md, "The tick");
        # the rounds still move event time while nothing arrives.
        self.report_seconds = report_seconds
        # An event time this far past the wall clock is refused (None: no check). One event
        # from a server with a broken clock would otherwise move the partition's event time
        # on, and every match pending there would be abandoned or timed out.
        self.max_future_seconds = max_future_seconds
        # The unknown event fields already said, (kind, name): see _unknown_fields.
        self._unknown_said: set[tuple[str, str]] = set()

    # --- clocks and deadlines -----------------------------------------------------------------

    def restore(
        self,
        number: int,
        stored_latest: float | None,
        entries: list[tuple[str, MatchEntry]],
        wall: float,
        populations: PopulationRecord | None = None,
    ) -> MatchPartition:
        """The partition's event time, deadlines and learned populations from its tables
        (after assignment or recovery). The other partitions' progress is not stored: decisions
        wait for their next reports, one tick."""
        time = EventTime(self.partitions, self.lateness, stored_latest, wall)
        partition = MatchPartition(number, time, stored_latest, stored_latest, owned_since=wall)
        partition.life = new_epoch(wall)
        if number == 0:
            clock = PartitionClock(stored_latest, wall)
            partition.combiner = Combiner(self.partitions, self.lateness, new_epoch(wall), clock)
        if populations is not None:
            partition.populations = populations
        for match_id, entry in entries:
            self.populations.track(partition, match_id, entry)
            if entry.done is None:
                partition.open.add(match_id)
            if entry.done is None and entry.teams is not None:
                if missing_snapshots(entry):
                    partition.rejoin.append(match_id)
                elif entry.finish is None and all(
                    p in entry.settled for t in entry.teams for p in t
                ):
                    # Settled by every player's word, waiting for its result (verdicts.settle).
                    partition.awaiting.add(match_id)
            if entry.done is None and entry.teams is not None and entry.finish is not None:
                partition.waits[match_id] = (wall, missing(entry))
            wait = entry.wait
            if (
                wait is not None
                and entry.teams is None
                and entry.finish is not None
                and decode_match_finished(wait.message.value, self.limits).teams is not None
            ):
                heapq.heappush(partition.unjoined, (entry.finish.at, match_id))
            at = self.decider.next_deadline(entry)
            if at is not None:
                partition.deadlines.add(at, match_id)
            elif entry.finish is not None and entry.done is None and entry.teams is not None:
                # A result held for the abandon requests (or for snapshots): look again when
                # they are all out.
                grace = self._pending(entry.mode).grace_seconds
                partition.held.add(entry.finish.at - grace, match_id)
        return partition

    def _unknown_fields(self, out: Outbox, kind: str, event: MatchStarted | MatchFinished) -> None:
        """Count an event that carries fields skillstream does not read, and say each such
        name once per worker (a bounded number of names: a fleet's own metadata fields are
        said once, not per event)."""
        out.count("unknown_fields")
        said = self._unknown_said
        fresh = tuple(n for n in event.unknown_fields if (kind, n) not in said)
        if not fresh or len(said) >= UNKNOWN_NAMES_SAID:
            return
        said.update((kind, n) for n in fresh)
        known = STARTED_FIELDS if kind == STARTED else FINISHED_FIELDS
        out.note(
            f"match-{kind} events carry a field skillstream does not read, so it changes no"
            f" rating: {unknown_fields_text(fresh, known)} (first in match"
            f" {event.match_id!r}; counted in"
            ' skillstream_pipeline_events_total{kind="unknown_fields"}; said once per name)'
        )

    def ask_again(self, ctx: MatchContext) -> None:
        """After a restore: ask again for every snapshot a restored match still waits for. Its
        joins went out before, but the table may have come back behind what answered them
        (stream/pipeline/checkpoints.py), and a snapshot nobody sends would hold the match and
        the player for good. A player partition answers a join it has seen with its snapshot
        again (or that it has the match), and takes a join it has not seen as a late one."""
        partition = ctx.partition
        asked, partition.rejoin = partition.rejoin, []
        for match_id in asked:
            entry = ctx.view.get(match_id)
            if entry is None or entry.done is not None or entry.teams is None:
                continue
            assert entry.start is not None  # an entry with teams has its start
            for pid in missing_snapshots(entry):
                ctx.out.to_player(
                    partition_for(pid, self.partitions),
                    join_of(match_id, pid, entry, partition.number),
                )
            ctx.out.count("joins_asked_again")

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
        corrections = self.corrections
        if corrections is not None and value is not None:
            value = corrections.renamed(value)
        read = read_event(
            kind,
            key,
            value,
            limits=self.limits,
            mode_of=self._mode,
            wall=wall,
            max_future_seconds=self.max_future_seconds,
        )
        if isinstance(read, str):
            out.dead_letter(DeadLetter(key, value, origin, read))
            return
        event, mode, at = read.event, read.mode, read.at
        if event.unknown_fields and not forwarded:  # a forwarded copy was counted where read
            self._unknown_fields(out, kind, event)
        partition = ctx.partition
        watermarks.observe(partition, kind, at, wall, forwarded=forwarded)
        if corrections is not None and corrections.is_void(event.match_id):
            # Left out as if never sent; its time still counts, as every event's read does.
            out.count("voided")
            self.run_due(ctx)
            return
        home = partition_for(event.match_id, self.partitions)
        if home != partition.number:
            # Delivered before this partition's next report, which names the home: the
            # combiner's watermark waits until the home has read a view sent after that report,
            # so after this forward (stream/pipeline/combiner.py).
            out.to_match(home, Forward(kind, StoredMessage(key, value or b"", origin)))
            watermarks.forwarding(partition, home, at)
            out.count("forwarded")
            return
        # Behind event time as known now, settled or not (ctx.now waits for it to stand, and
        # after a quiet spell it must stand again: the count is of what was read late).
        now = ctx.partition.time.now
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
            case Position():
                self._position(ctx, command)
            case Forward(kind, message):
                self.on_event(ctx, kind, message.key, message.value, message.origin, forwarded=True)
            case View():
                for match_id in watermarks.on_view(ctx.partition, command, ctx.wall):
                    entry = ctx.view.get(match_id)
                    if entry is not None:
                        self._advance(ctx, match_id, entry)
            case Report() | PlayerReport() | Tick():
                self._combine(ctx, command)
            case Progress() | AbandonWatermark():
                pass  # a version 9 worker's, left in the topic at an upgrade: the combiner's now
            case WindowClosed():
                partition = ctx.partition
                until = self.populations.on_closed(partition.populations, command)
                partition.populations_changed = True
                for match_id in partition.unfolded.due(until):
                    entry = ctx.view.get(match_id)
                    if entry is not None:
                        self._advance(ctx, match_id, entry)
        self.run_due(ctx)

    def report_due(self, partition: MatchPartition, wall: float) -> bool:
        """Whether the batch ending now reports the partition's progress
        (:func:`stream.pipeline.watermarks.report_due`)."""
        return watermarks.report_due(partition, wall, self.report_seconds)

    def report(
        self,
        ctx: MatchContext,
        *,
        started_caught_up: float | None,
        finished_caught_up: float | None,
    ) -> None:
        """This partition's report (:func:`stream.pipeline.watermarks.report`), to the combiner
        once the broker has the rest of the batch."""

        sent = watermarks.report(
            ctx.partition,
            self._unjoined(ctx),
            ctx.wall,
            started_caught_up=started_caught_up,
            finished_caught_up=finished_caught_up,
        )
        # It may move event time past deadlines, as a view would.
        self.run_due(ctx)
        if sent is not None:
            ctx.out.to_match_after(0, sent)

    @staticmethod
    def _unjoined(ctx: MatchContext) -> Callable[[str], bool]:
        """Whether a match's finish still waits here for its start (its joins not sent)."""

        def unjoined(match_id: str) -> bool:
            entry = ctx.view.get(match_id)
            return entry is not None and entry.teams is None and entry.wait is not None

        return unjoined

    def _combine(self, ctx: MatchContext, command: Report | PlayerReport | Tick) -> None:
        """A report or the leader's tick, for the combiner (match partition 0; elsewhere a
        tick a version 9 leader sent, or a command sent amiss: nothing to do)."""
        combiner = ctx.partition.combiner
        if combiner is None:
            return
        match command:
            case Report():
                combiner.on_report(command, ctx.wall)
            case PlayerReport():
                combiner.on_player_report(command)
            case Tick():
                self._send_round(ctx, combiner.on_tick(ctx.wall))

    def combine(self, ctx: MatchContext) -> None:
        """At the end of a batch on the combiner's partition: what the reports it brought
        changed (stream/pipeline/combiner.py, ``end_of_batch``)."""
        combiner = ctx.partition.combiner
        if combiner is not None:
            every = 0.0 if self.report_seconds is None else self.report_seconds
            self._send_round(ctx, combiner.end_of_batch(ctx.wall, every))

    @staticmethod
    def _send_round(ctx: MatchContext, sends: Sends) -> None:
        """What the combiner sends: the views, then the watermarks."""
        for target, view in sends.views:
            ctx.out.to_match(target, view)
        for target, mark in sends.marks:
            ctx.out.to_player(target, mark)

    def close_windows(self, ctx: MatchContext) -> None:
        """At the end of a batch: once every match homed here that started before a learning
        window's end is settled, say so to every match partition, with the evidence of the
        windows that ended (stream/pipeline/learnedpopulation.py ``close``). Sent after the batch's
        ``rate`` commands, so no partition can rate with a population before the evidence it
        holds."""
        if not self.populations.any_learns:
            return
        partition = ctx.partition
        watermarks.joined(partition, self._unjoined(ctx), ctx.wall)
        if partition.awaiting:
            self._recheck_awaiting(ctx)
        closed, gathered, late = self.populations.close(partition, ctx.view.get)
        if late:
            ctx.out.count("late_evidence", late)
        if closed is None:
            return
        for target in range(self.partitions):
            if target != partition.number:
                ctx.out.to_match(target, closed)
        # Its own copy once every other partition has it: a partition that reads its own
        # ``closed`` back after a restore takes the windows it closes as sent (``sent``), so
        # a batch cut short after reaching itself alone would leave the others without that
        # evidence for good (the crash simulator's seed 3313).
        ctx.out.to_match_after(partition.number, closed)
        # Settled matches kept for their evidence alone may go now.
        for match_id in gathered:
            entry = ctx.view.get(match_id)
            if entry is not None:
                self._advance(ctx, match_id, entry)

    def _recheck_awaiting(self, ctx: MatchContext) -> None:
        """The matches every player said they have, held open for a result (verdicts.settle):
        once this partition has closed their window (its close, or its own ``closed`` read
        back after a restore), no result can add to what it sent, and they are done."""
        partition = ctx.partition
        for match_id in sorted(partition.awaiting):
            entry = ctx.view.get(match_id)
            if entry is None or entry.done is not None or entry.start is None:
                partition.awaiting.discard(match_id)
            elif self.populations.sent(
                partition.populations, entry.mode, entry.start, partition.number
            ):
                self._advance(ctx, match_id, entry)

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
        decision = self.decider.start(entry, event, mode.name, self._clock(ctx))
        self._decided(ctx, event.match_id, decision)

    def _finish(
        self, ctx: MatchContext, event: MatchFinished, mode: ModeConfig, message: StoredMessage
    ) -> None:
        entry = ctx.view.get(event.match_id)
        decision = self.decider.finish(entry, event, mode.name, message, self._clock(ctx))
        self._decided(ctx, event.match_id, decision)

    def _snapshot(self, ctx: MatchContext, snap: Snapshot) -> None:
        decision = self.decider.snapshot(ctx.view.get(snap.match_id), snap, self._clock(ctx))
        self._decided(ctx, snap.match_id, decision)

    def _position(self, ctx: MatchContext, position: Position) -> None:
        entry = ctx.view.get(position.match_id)
        decision = self.decider.position(entry, position, self._clock(ctx))
        self._decided(ctx, position.match_id, decision)

    def _abandon_request(self, ctx: MatchContext, request: Abandon) -> None:
        entry = ctx.view.get(request.match_id)
        decision = self.decider.abandon_request(entry, request, self._clock(ctx))
        self._decided(ctx, request.match_id, decision)

    def _advance(self, ctx: MatchContext, match_id: str, entry: MatchEntry) -> None:
        """What event time makes of the entry now (stream/pipeline/decision.py), carried out."""
        self._decided(ctx, match_id, self.decider.advance(match_id, entry, self._clock(ctx)))

    # --- the decision, carried out ------------------------------------------------------------

    def _clock(self, ctx: MatchContext) -> Clock:
        """What a decision reads of the partition."""
        partition = ctx.partition
        return Clock(
            ctx.now,
            partition.abandons,
            partition.populations,
            partition.number,
            partition.time.promised,
        )

    def _decided(self, ctx: MatchContext, match_id: str, decision: Decision) -> None:
        """Carry out a decision (stream/pipeline/decision.py): its effects in their order, then
        the entry written (and noted for the learning windows) or deleted."""
        out, partition = ctx.out, ctx.partition
        again = False
        for effect in decision.effects:
            match effect:
                case Send(target, command):
                    out.to_player(target, command)
                case Count(name, n):
                    out.count(name, n)
                case Letter(letter):
                    out.dead_letter(letter)
                case Hold(since):
                    partition.held.add(since, match_id)
                case Unfold(until):
                    partition.unfolded.add(until, match_id)
                case Awaiting(on):
                    if on:
                        partition.awaiting.add(match_id)
                    else:
                        partition.awaiting.discard(match_id)
                case Deadline(at):
                    partition.deadlines.add(at, match_id)
                case Unjoined(at):
                    heapq.heappush(partition.unjoined, (at, match_id))
                case Watch(waiting_for):
                    self._watch(ctx, match_id, waiting_for)
                case RunDue():
                    again = True
        entry = decision.entry
        if decision.write is Write.PUT:
            assert entry is not None
            ctx.view.put(match_id, entry)
            self.populations.track(partition, match_id, entry)
            if entry.done is None:
                partition.open.add(match_id)
            else:
                partition.open.discard(match_id)
        elif decision.write is Write.DELETE:
            ctx.view.delete(match_id)
            partition.open.discard(match_id)
        if again:
            self.run_due(ctx)

    @staticmethod
    def _watch(ctx: MatchContext, match_id: str, waiting_for: str | None) -> None:
        """Note, for the liveness monitor, a match whose fate is decided that is not settled:
        since when (wall time) it waits, and for what (None: it waits for nothing)."""
        waits = ctx.partition.waits
        if waiting_for is None:
            waits.pop(match_id, None)
            return
        since = waits.get(match_id, (ctx.wall, ""))[0]
        waits[match_id] = (since, waiting_for)
