"""Event time per partition, and the deadlines (grace, timeout, retention) waiting on it."""

from __future__ import annotations

import heapq


class PartitionClock:
    """A match partition's event time.

    It is the latest event time seen on the partition; while no events arrive it moves on with
    wall time from the last one, so a quiet system still times matches out. A replay that runs
    faster than real time keeps its own, faster, clock: its events arrive continuously.
    """

    __slots__ = ("_base", "_base_wall", "value")

    def __init__(self, value: float | None, wall: float) -> None:
        self.value = value
        self._base = value
        self._base_wall = wall

    def observe(self, at: float, wall: float) -> None:
        """An event with event time ``at`` was processed at wall time ``wall``."""
        if self.value is None or at > self.value:
            self.value = at
        self._base = self.value
        self._base_wall = wall

    def tick(self, wall: float) -> None:
        """Advance by the wall time since the last event (never backwards)."""
        if self._base is None:
            return
        estimate = self._base + max(0.0, wall - self._base_wall)
        if self.value is None or estimate > self.value:
            self.value = estimate


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


class EventTime:
    """What one match partition knows of event time across every match partition: the
    watermarks its decisions wait for (docs/event-time.md).

    Each match partition reports (:class:`stream.protocol.Progress`), per input topic, the
    latest event time it processed while records were still waiting there, or that it has read
    everything the broker holds. ``clock`` is the latest event time read anywhere, moved on
    with wall time while nothing arrives (:class:`PartitionClock`). A topic's watermark is the
    lowest bound among the partitions still behind (a caught-up partition bounds nothing: what
    it reads next cannot be older than the latest event time, up to the lateness), never above
    ``clock``, minus the lateness; None until every partition has reported since this worker
    took the partition over. Each partition's latest report is a promise on its own, so the
    minimum over the latest reports is one whenever they were made: no round of reports has to
    be complete.
    """

    __slots__ = ("clock", "lateness", "partitions", "reports")

    def __init__(self, partitions: int, lateness: float, latest: float | None, wall: float):
        self.partitions = partitions
        self.lateness = lateness
        self.clock = PartitionClock(latest, wall)
        self.reports: dict[int, tuple[float | None, float | None]] = {}

    def report(
        self,
        source: int,
        started: float | None,
        finished: float | None,
        latest: float | None,
        wall: float,
    ) -> None:
        """Note a partition's latest report."""
        self.reports[source] = (started, finished)
        if latest is not None:
            self.clock.observe(latest, wall)

    def watermark(self, index: int) -> float | None:
        """Topic ``index``'s watermark (0: match-started, 1: match-finished)."""
        bound = self.clock.value
        if bound is None or len(self.reports) < self.partitions:
            return None
        for report in self.reports.values():
            behind = report[index]
            if behind is not None and behind < bound:
                bound = behind
        return bound - self.lateness

    @property
    def now(self) -> float | None:
        """The time decisions use: both topics' watermarks have passed it."""
        started = self.watermark(0)
        finished = self.watermark(1)
        if started is None or finished is None:
            return None
        return min(started, finished)
