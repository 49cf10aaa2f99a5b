"""A match partition's state across batches (:class:`MatchPartition`) and within one batch
(:class:`MatchContext`): what the match side (stream/pipeline/matches.py), its verdicts
(stream/pipeline/verdicts.py) and the liveness monitor read and change."""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field

from stream.pipeline.combiner import Combiner
from stream.pipeline.eventtime import (
    SETTLE_SECONDS,
    SETTLE_TICKS,
    Deadlines,
    EventTime,
    settled,
    steady,
)
from stream.pipeline.outbox import Outbox
from stream.pipeline.view import StateView
from stream.protocol import MATCHES, MatchEntry, PopulationRecord, Report

__all__ = [
    "FINISHED",
    "SETTLE_SECONDS",
    "SETTLE_TICKS",
    "STARTED",
    "MatchContext",
    "MatchPartition",
]

# The two input topics, as a partition names them (its ``read`` positions, ``Forward.kind``).
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
    # Names this life of the partition on this worker (its reports carry it: the combiner
    # holds a new life's part of the watermark until it has caught up).
    life: int = 0
    # A view arrived in this batch: report at its end. ``seen``: the combiner's life and round
    # of the latest view read (0, 0: none), which a report repeats. ``moved``: a match event
    # was read since the last report (only such a batch reports on the interval rule, so a
    # batch of commands alone, as the combiner's tick, says nothing new).
    viewed: bool = False
    moved: bool = False
    seen: tuple[int, int] = (0, 0)
    # When (wall time) this partition last reported (see watermarks.report_due), and whether
    # that report said it was pending (None: no report since the assignment).
    reported: float = float("-inf")
    reported_pending: bool | None = None
    last_report: Report | None = None
    # Per home partition it forwarded events to since its last report, the earliest event time
    # among them (the combiner holds its watermark below that until the home has read them).
    forwarded: dict[int, float] = field(default_factory=dict)
    # The matches homed here not settled yet (entries without ``done``): while there is one,
    # the partition is pending and the combiner keeps event time moving.
    open: set[str] = field(default_factory=set)
    # Every start homed here before this has been read and its joins sent (watermarks.joined;
    # None: not known yet): the learning windows close on it.
    joined: float | None = None
    # Finishes with a line-up waiting for a start that may not come, as (finish time, match
    # id), earliest first (lazily deleted: check the entry). Each sends its joins, dated at its
    # finish, only once event time passes it: the watermark sent to the player partitions
    # stays at or below the earliest, or it would promise those joins before they are sent.
    unjoined: list[tuple[float, str]] = field(default_factory=list)
    # How far every player partition's abandon requests are all out (from the views), and the
    # results waiting for it: a result at ``fin.at`` waits until every start before
    # ``fin.at - grace`` has had its abandon requests delivered here.
    abandons: float | None = None
    held: Deadlines = field(default_factory=Deadlines)
    # The liveness monitor's view (stream/pipeline/liveness.py): per match whose fate event
    # time has decided and that is not settled yet, since when (wall time) and what it waits
    # for. In memory only: after a restart each such match starts again from its restore.
    waits: dict[str, tuple[float, str]] = field(default_factory=dict)
    # Since when (wall time) this worker has owned the partition.
    owned_since: float = 0.0
    # Matches restored waiting for snapshots: their joins go out again at the partition's
    # first batch (MatchProcessor.ask_again), so no wait outlives the sender it waits on.
    rejoin: list[str] = field(default_factory=list)
    # Matches whose every player said they have it already while their result had not been
    # read (again, after a restore): open until the result, the timeout, or this partition's
    # close of their window (stream/pipeline/verdicts.py, settle).
    awaiting: set[str] = field(default_factory=set)
    # The learned populations (stream/pipeline/learnedpopulation.py): the partition's record (table
    # ``populations``), whether this batch changed it, the matches held until their window's
    # population is known (by the ``known_until`` they need), the starts of the matches with a
    # line-up not settled yet, earliest first (lazily deleted: check the entry), which bound
    # the partition's ``until``, and per mode and window the settled matches whose evidence
    # has not gone out yet (rebuilt from the entries after an assignment).
    populations: PopulationRecord = field(default_factory=PopulationRecord)
    populations_changed: bool = False
    unfolded: Deadlines = field(default_factory=Deadlines)
    unsettled: list[tuple[float, str]] = field(default_factory=list)
    tracked: set[str] = field(default_factory=set)
    evidence: dict[str, dict[int, set[str]]] = field(default_factory=dict)
    # (wall time, event time ``time.now``) at each of the last SETTLE_TICKS views read.
    settling: deque[tuple[float, float | None]] = field(
        default_factory=lambda: deque(maxlen=SETTLE_TICKS)
    )
    # (wall time, the clock) at the same moments: whether event time moved with the wall.
    pace: deque[tuple[float, float | None]] = field(
        default_factory=lambda: deque(maxlen=SETTLE_TICKS)
    )
    # The combiner, on match partition 0 only (stream/pipeline/combiner.py).
    combiner: Combiner | None = None

    def settled(self, wall: float) -> float | None:
        """The event time decisions use at wall time ``wall`` (None: not known yet): now, when
        the clock moved with the wall clock (up to the lateness) over the last SETTLE_TICKS
        views (:func:`stream.pipeline.eventtime.steady`); otherwise the lowest event time stood
        at over those views within SETTLE_SECONDS, and now, so a decision waits until a leap
        has stood that long (:func:`stream.pipeline.eventtime.settled`)."""
        moving = steady(self.pace, self.time.clock.value, wall, self.time.lateness)
        return settled(self.settling, self.time.now, wall, moving=moving)

    @property
    def pending(self) -> bool:
        """Whether the partition waits for event time: a match homed here is not settled (a
        finish waiting for its start is one)."""
        return bool(self.open)


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
        """The event time decisions use: :meth:`MatchPartition.settled`."""
        return self.partition.settled(self.wall)
