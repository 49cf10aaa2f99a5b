"""The stall watchdog reads a partition again from its position when records wait past it and
it stopped moving, or when an unacked record has held its commit back for STALL_SECONDS
(workarounds/headgap.py); it leaves alone a partition that moves, one held back briefly and
one whose position is not known yet."""

from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace

from faust.types import TP

from stream.pipeline.metrics import WorkerMetrics
from stream.pipeline.positions import InputPositions
from stream.pipeline.watchdog import STALL_SECONDS, StallWatchdog
from stream.pipeline.workarounds.headgap import held_back

HELD, FRESH, STALLED, MOVING, UNPLACED = (TP("in", n) for n in range(5))


class Consumer:
    """The calls the watchdog makes: records wait on every partition (high watermark 20)."""

    def assignment(self) -> set[TP]:
        return {HELD, FRESH, STALLED, MOVING, UNPLACED}

    def highwater(self, tp: TP) -> int:
        return 20


def test_partitions_stuck_are_read_again_from_their_positions() -> None:
    consumer = Consumer()
    event = asyncio.Event()
    event.set()
    # A rebalance flag left set does not stop it.
    app = SimpleNamespace(_started=event, rebalancing=True, consumer=consumer, _consumer=consumer)
    now = time.monotonic()
    held = held_back(consumer)
    held[HELD] = now - STALL_SECONDS - 1
    held[FRESH] = now - 1
    positions = InputPositions()
    positions.sought({("in", 0): 10, ("in", 1): 20, ("in", 2): 12, ("in", 3): 5})
    progress = {STALLED: now - STALL_SECONDS - 1, MOVING: now - 0.5}
    sought: list[tuple[str, int, int]] = []

    async def seek(topic: str, partition: int, offset: int, why: str) -> None:
        sought.append((topic, partition, offset))

    metrics = WorkerMetrics()
    watchdog = StallWatchdog(app, {"in"}, positions, progress, metrics, seek)
    asyncio.run(watchdog.unstick_partitions())
    # The stalled partition is only due once it has been seen stalled for as long.
    watchdog._stall_since[STALLED] = now - STALL_SECONDS - 1
    asyncio.run(watchdog.unstick_partitions())

    assert sought == [("in", 0, 10), ("in", 2, 12)]
    assert held == {FRESH: now - 1}
    assert metrics.pipeline_events.labels("held_back_partitions")._value.get() == 1
    assert metrics.pipeline_events.labels("stalled_partitions")._value.get() == 1
