"""The stall watchdog seeks a partition whose commit an unacked head has held back for
STALL_SECONDS to its commit (workarounds/headgap.py), and leaves one held back briefly alone."""

from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace

from faust.types import TP

from stream.pipeline.metrics import WorkerMetrics
from stream.pipeline.watchdog import STALL_SECONDS, StallWatchdog
from stream.pipeline.workarounds.headgap import held_back

HELD, FRESH = TP("in", 0), TP("in", 1)


class Consumer:
    """The calls the watchdog makes, with both partitions caught up (nothing waiting)."""

    def __init__(self) -> None:
        self._committed_offset = {HELD: 10, FRESH: 4}
        self.sought: list[tuple[TP, int]] = []

    def assignment(self) -> set[TP]:
        return {HELD, FRESH}

    def highwater(self, tp: TP) -> int:
        return 20

    async def seek(self, tp: TP, offset: int) -> None:
        self.sought.append((tp, offset))


def test_a_partition_held_back_for_long_is_sought_back_to_its_commit() -> None:
    consumer = Consumer()
    event = asyncio.Event()
    event.set()
    app = SimpleNamespace(_started=event, rebalancing=False, consumer=consumer)
    now = time.monotonic()
    held = held_back(consumer)
    held[HELD] = now - STALL_SECONDS - 1
    held[FRESH] = now - 1
    next_offsets = {HELD: 20, FRESH: 20}
    metrics = WorkerMetrics()
    watchdog = StallWatchdog(app, {"in"}, next_offsets, {}, metrics)

    asyncio.run(watchdog.unstick_partitions())

    assert consumer.sought == [(HELD, 10)]
    assert held == {FRESH: now - 1}
    assert metrics.pipeline_events.labels("held_back_partitions")._value.get() == 1
