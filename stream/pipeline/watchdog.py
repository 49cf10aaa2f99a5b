"""The stall watchdog: an input partition with records waiting past its position that stopped
moving is read again from its position.

The batch runner reads a partition again at once when a record arrives after a gap
(stream/pipeline/positions.py). A gap with nothing after it shows no such record: a lost
record at the end of a partition, or a partition Faust left believing it had delivered it
(faust-streaming issues 629 and 221: a message dropped while the flow was suspended still
counts as read; in the chaos runs a broker pause left a wave's commands unprocessed for good).
Here a partition whose high watermark is past its position and whose position has not moved
for :data:`STALL_SECONDS` is sought to its position.

A partition whose commit Faust holds back at a record never acked while later ones were
(workarounds/headgap.py) is sought back to its position the same way.

It runs whether or not the worker calls itself ready: a rebalance flag left set (Faust's
``app.rebalancing``) must not stop it, and during a rebalance every partition's position is
forgotten until its seek, so nothing is sought then.

Failure: a partition whose high watermark is not known yet, or whose position is not known yet
(assigned, its seek to the commit not finished), is skipped until the next check; a seek that
fails is logged and tried again at the next check. Replay:
seeking to the position re-reads nothing processed (the runner skips repeats); records fetched
twice cost a second delivery, nothing else.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Collection, MutableMapping
from dataclasses import dataclass, field
from typing import Any

from faust.types import TP

from stream.pipeline.metrics import WorkerMetrics
from stream.pipeline.positions import InputPositions
from stream.pipeline.workarounds import headgap, private

__all__ = ["STALL_CHECK_SECONDS", "STALL_SECONDS", "StallWatchdog"]

# A partition with records waiting that has not moved for this long is read again. Seeking a
# partition that was only slow costs a second delivery of what was already fetched, so this is
# short: a record lost at a partition's end waits at most this plus one check.
STALL_SECONDS = 3.0
STALL_CHECK_SECONDS = 1.0

# seek(topic, partition, offset, why): the pipeline's seek (logged and counted there).
Seek = Callable[[str, int, int, str], Awaitable[None]]


# A service, not a value: compared and hashed by identity.
@dataclass(eq=False)
class StallWatchdog:
    """Watches the agents' input partitions of one worker.

    ``positions`` is the batch runner's record of the next offset to process per partition;
    ``progress_at`` when each last moved (the pipeline keeps it)."""

    app: Any
    topics: Collection[str]
    positions: InputPositions
    progress_at: MutableMapping[TP, float]
    metrics: WorkerMetrics
    seek: Seek
    _stall_since: dict[TP, float] = field(default_factory=dict, init=False)

    async def unstick_partitions(self) -> None:
        """Read again, from its position, an input partition that has records waiting but
        stopped moving, or whose commit an unacked record has held back for as long."""
        if not private.consumer_exists(self.app):
            return
        consumer = self.app.consumer
        now = time.monotonic()
        held = headgap.held_back(consumer)
        for tp in consumer.assignment():
            if tp.topic not in self.topics:
                continue
            position = self.positions.position(tp.topic, tp.partition)
            if position is None:
                continue
            since_held = held.get(tp)
            if since_held is not None and now - since_held >= STALL_SECONDS:
                held.pop(tp, None)
                self.metrics.pipeline_events.labels("held_back_partitions").inc()
                await self.seek(
                    tp.topic,
                    tp.partition,
                    position,
                    f"has a record never acked while later ones were (commits held back "
                    f"{now - since_held:.0f} s)",
                )
                continue
            try:
                end = consumer.highwater(tp)
            except Exception:  # nothing fetched from it yet
                continue
            if end is None or end <= position:
                self._stall_since.pop(tp, None)
                continue
            since = self._stall_since.setdefault(tp, max(now, self.progress_at.get(tp, now)))
            if now - since < STALL_SECONDS or now - self.progress_at.get(tp, 0.0) < STALL_SECONDS:
                continue
            self.metrics.pipeline_events.labels("stalled_partitions").inc()
            await self.seek(
                tp.topic,
                tp.partition,
                position,
                f"stalled with {end - position} record(s) waiting",
            )
            self._stall_since.pop(tp, None)
            self.progress_at[tp] = now
