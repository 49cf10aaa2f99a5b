"""Event time per partition, and the deadlines (grace, timeout, retention) waiting on it."""

from __future__ import annotations

import heapq
import math
from collections import deque
from collections.abc import Iterable, Sequence

# How long event time that leapt must have stood past a deadline before it is acted on
# (:func:`settled`): SETTLE_TICKS of the combiner's rounds (SKILLSTREAM_TICK_SECONDS apart: 0.5 s
# by default) or SETTLE_SECONDS of wall time, whichever comes first (ticks come late under
# load). A fleet that sends minutes of buffered events at once writes the two topics
# milliseconds apart, and the one fetched first moves event time past deadlines whose events
# are in the other (docs/event-time.md, "A burst read one topic ahead of the other"). Event
# time that moves with the wall clock (:func:`steady`) counts at once.
SETTLE_TICKS = 5
SETTLE_SECONDS = 0.5


# How many (wall time, value) steps a clock keeps for :meth:`PartitionClock.at`: a batch's
# events count as one step, and so does each tick that moves it (views, reports). Busy, that
# is about a second of wall time, well over the time between a broker's answer and the report
# that rests on it (a few batches); an older answer vouches only for what was read.
CLOCK_HISTORY = 256


class PartitionClock:
    """A match partition's event time.

    It is the latest event time seen on the partition; while no events arrive it moves on with
    wall time from the last one, so a quiet system still times matches out. A replay that runs
    faster than real time keeps its own, faster, clock: its events arrive continuously. It
    keeps its recent values by wall time, for what it said at an earlier moment (:meth:`at`).
    """

    __slots__ = ("_base", "_base_wall", "_history", "value")

    def __init__(self, value: float | None, wall: float) -> None:
        self.value = value
        self._base = value
        self._base_wall = wall
        self._history: deque[tuple[float, float]] = deque(maxlen=CLOCK_HISTORY)
        if value is not None:
            # Restored (from the clocks table): records read by an earlier owner, at the broker
            # before any answer this worker gets, so it held at any time this worker asks about.
            self._history.append((-math.inf, value))

    def observe(self, at: float, wall: float) -> None:
        """An event with event time ``at`` was processed at wall time ``wall``."""
        if self.value is None or at > self.value:
            self.value = at
            self._note(wall, at)
        self._base = self.value
        self._base_wall = wall

    def tick(self, wall: float) -> None:
        """Advance by the wall time since the last event (never backwards)."""
        if self._base is None:
            return
        estimate = self._base + max(0.0, wall - self._base_wall)
        if self.value is None or estimate > self.value:
            self.value = estimate
            self._note(wall, estimate)

    def at(self, wall: float) -> float | None:
        """The value the clock had at wall time ``wall`` (None: not known then, or longer ago
        than it keeps). What it knew then came from events read, views read and wall time
        passed by then, so it is no higher than what had reached the broker by then."""
        for when, value in reversed(self._history):
            if when <= wall:
                return value
        return None

    def before(self, wall: float) -> float | None:
        """The value the clock had before wall time ``wall`` (what batches before then read)."""
        for when, value in reversed(self._history):
            if when < wall:
                return value
        return None

    def _note(self, wall: float, value: float) -> None:
        history = self._history
        if history and history[-1][0] >= wall:
            history[-1] = (history[-1][0], value)
        else:
            history.append((wall, value))


class Deadlines:
    """Keys due at an event time: a heap with lazy deletion (callers re-check the state)."""

    __slots__ = ("_heap", "_queued")

    def __init__(self) -> None:
        self._heap: list[tuple[float, str]] = []
        self._queued: set[tuple[float, str]] = set()

    def add(self, at: float, key: str) -> None:
        item = (at, key)
        if item not in self._queued:
            self._queued.add(item)
            heapq.heappush(self._heap, item)

    def due(self, now: float | None) -> list[str]:
        """Keys whose deadline is at or before ``now``, each once, earliest first."""
        keys: dict[str, None] = {}
        if now is None:
            return []
        heap = self._heap
        while heap and heap[0][0] <= now:
            item = heapq.heappop(heap)
            self._queued.discard(item)
            keys[item[1]] = None
        return list(keys)


def steady(
    samples: Sequence[tuple[float, float | None]], clock: float | None, wall: float, lateness: float
) -> bool:
    """Whether event time has moved with the wall clock over the last SETTLE_TICKS ``samples``
    of the clock (wall time, its value): the ticks have come (each sample no more than
    SETTLE_SECONDS after the one before, the last no more than that before ``wall``), and
    since each, ``clock`` has moved no further than the wall time passed, up to ``lateness``.
    A fleet publishing as it plays does that; a burst of buffered events, a backlog read at
    speed, or the first events after a quiet spell do not."""
    if clock is None or len(samples) < SETTLE_TICKS:
        return False
    later = wall
    for at, value in reversed(samples):
        if value is None or later - at > SETTLE_SECONDS or clock - value > wall - at + lateness:
            return False
        later = at
    return True


def settled(
    samples: Iterable[tuple[float, float | None]],
    current: float | None,
    wall: float,
    *,
    moving: bool = False,
) -> float | None:
    """The event time that has stood at wall time ``wall`` (None: not known yet).

    ``moving``: event time has moved with the wall clock (:func:`steady`), so ``current``
    counts at once: the fleet publishes in event-time order up to the lateness, which every
    bound already allows for. Otherwise it may have leapt (a burst of buffered events read one
    topic ahead of the other) and counts only once it has stood: the lowest of ``current``,
    the ``samples`` (wall time, event time; the last SETTLE_TICKS ticks) taken within
    SETTLE_SECONDS, and the newest one taken before that (event time as it stood when the
    window began, however long ago the ticks stopped: none go out while nothing is pending,
    and they come late under load). Fewer samples than SETTLE_TICKS, none older than
    SETTLE_SECONDS: not stood anywhere long enough yet."""
    if current is None:
        return None
    kept = list(samples)
    since = wall - SETTLE_SECONDS
    if len(kept) < SETTLE_TICKS and (not kept or kept[0][0] > since):
        return None
    if moving:
        return current
    before: tuple[float, float | None] | None = None
    for at, sample in kept:
        if at < since:
            before = (at, sample)
            continue
        if sample is None:
            return None
        current = min(current, sample)
    if before is not None:
        if before[1] is None:
            return None
        current = min(current, before[1])
    return current


def sample(samples: deque[tuple[float, float | None]], wall: float, value: float | None) -> None:
    """Note event time ``value`` at wall time ``wall`` for :func:`settled`: several at one
    wall time (ticks queued in one batch) count as one, the lowest."""
    if samples and samples[-1][0] == wall:
        known = samples[-1][1]
        lowest = None if known is None or value is None else min(known, value)
        samples[-1] = (wall, lowest)
    else:
        samples.append((wall, value))


class EventTime:
    """What one match partition knows of event time across every match partition: the
    watermarks its decisions wait for (docs/event-time.md).

    Its own bounds (per input topic: the latest event time processed while records still
    wait there, or once it has read everything the broker held at its last answer, the latest
    event time it knew of then: stream/pipeline/watermarks.py, ``_bound``) are applied where
    it makes them; the other partitions' come from the combiner's views
    (stream/pipeline/combiner.py): the lowest bounds among them, each a promise about the
    moment it was made, so the highest view read is one too. ``clock`` is the latest event
    time read anywhere, moved on with wall time while nothing arrives
    (:class:`PartitionClock`). A topic's watermark is the lower of the two bounds, never above
    ``clock``, minus the lateness; None until both are known (a view read since this worker
    took the partition over, unless it is the only partition).
    """

    __slots__ = ("clock", "highest", "lateness", "others", "own", "partitions")

    def __init__(self, partitions: int, lateness: float, latest: float | None, wall: float):
        self.partitions = partitions
        self.lateness = lateness
        self.clock = PartitionClock(latest, wall)
        self.own: tuple[float, float] | None = None
        # The highest bounds this life has reported (what the combiner's promise for this
        # partition rests on: stream/pipeline/combiner.py, ``promise``).
        self.highest: tuple[float, float] | None = None
        self.others: tuple[float, float] | None = None

    def report(self, started: float, finished: float, latest: float | None, wall: float) -> None:
        """Note this partition's own bounds, as it reports them."""
        self.own = (started, finished)
        high = self.highest
        self.highest = (
            (started, finished) if high is None else (max(high[0], started), max(high[1], finished))
        )
        if latest is not None:
            self.clock.observe(latest, wall)

    @property
    def promised(self) -> float | None:
        """No player partition is told by this partition's current life that every join
        before a later time is out: the combiner's watermark rests on this life's reports,
        less the lateness, so it is at most the highest of them (docs/event-time.md, "Late
        starts"). None before this life has reported: not known."""
        high = self.highest
        return None if high is None else min(high) - self.lateness

    def view(
        self, started: float | None, finished: float | None, latest: float | None, wall: float
    ) -> None:
        """Note a view of the other partitions (the highest bounds kept)."""
        if started is not None and finished is not None:
            known = self.others
            if known is not None:
                started, finished = max(started, known[0]), max(finished, known[1])
            self.others = (started, finished)
        if latest is not None:
            self.clock.observe(latest, wall)

    def watermark(self, index: int) -> float | None:
        """Topic ``index``'s watermark (0: match-started, 1: match-finished)."""
        bound = self.clock.value
        own = self.own
        if bound is None or own is None:
            return None
        bound = min(bound, own[index])
        if self.partitions > 1:
            others = self.others
            if others is None:
                return None
            bound = min(bound, others[index])
        return bound - self.lateness

    @property
    def now(self) -> float | None:
        """The time decisions use: both topics' watermarks have passed it."""
        started = self.watermark(0)
        finished = self.watermark(1)
        if started is None or finished is None:
            return None
        return min(started, finished)
