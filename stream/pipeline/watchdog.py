"""The stall watchdog: an input partition with records waiting that stopped moving is sought
back.

After a rebalance Faust can leave a partition it believes it delivered (faust-streaming issues
629 and 221: a message dropped while the flow was suspended still counts as read), and nothing
is fetched from it again: in the chaos runs a broker pause left a wave's commands unprocessed
for good.

A partition whose commit has been held back for as long by a record at its head that was never
acked while later ones were (workarounds/headgap.py: Faust would have committed past it) is
sought back to its commit the same way: the record is read again without a restart.

Failure: a partition whose high watermark is not known yet is skipped until the next check.
Replay: seeking re-reads records; redelivery is harmless, every state change being idempotent.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Collection, Mapping, MutableMapping
from typing import Any

from faust.types import TP

from stream.pipeline.health import readiness
from stream.pipeline.metrics import WorkerMetrics
from stream.pipeline.workarounds import headgap, private

__all__ = ["STALL_CHECK_SECONDS", "STALL_SECONDS", "StallWatchdog"]

log = logging.getLogger("skillstream.worker")

# A partition with records waiting that has not moved for this long is sought back.
STALL_SECONDS = 15.0
STALL_CHECK_SECONDS = 5.0


class StallWatchdog:
    """Watches the agents' input partitions of one worker.

    ``next_offsets`` and ``progress_at`` are the pipeline's own records of the next offset to
    process per partition and when it last moved (the batch code keeps them)."""

    def __init__(
        self,
        app: Any,
        topics: Collection[str],
        next_offsets: Mapping[TP, int],
        progress_at: MutableMapping[TP, float],
        metrics: WorkerMetrics,
    ) -> None:
        self.app = app
        self.topics = topics
        self.next_offsets = next_offsets
        self.progress_at = progress_at
        self.metrics = metrics
        self._stall_since: dict[TP, float] = {}

    async def unstick_partitions(self) -> None:
        """Seek back an input partition that has records waiting but stopped moving.

        Records are waiting when the partition's high watermark is past the next offset this
        worker would process (for a partition it has not processed yet: past the committed
        offset, or past the log's start if the group never committed one).
        """
        if not readiness(self.app)["ready"]:
            self._stall_since.clear()
            return
        consumer = self.app.consumer
        committed = private.committed_offsets(consumer)
        now = time.monotonic()
        held = headgap.held_back(consumer)
        for tp in consumer.assignment():
            if tp.topic not in self.topics:
                continue
            since_held = held.get(tp)
            if since_held is not None and now - since_held >= STALL_SECONDS:
                start = committed.get(tp) or 0
                await self._seek_back(
                    consumer,
                    tp,
                    start,
                    "held_back_partitions",
                    f"offset {start} never acked, later ones were; commits held back for "
                    f"{now - since_held:.0f} s",
                )
                held.pop(tp, None)
                continue
            try:
                end = consumer.highwater(tp)
            except Exception:  # nothing fetched from it yet
                continue
            position = self.next_offsets.get(tp, committed.get(tp))
            if position is None and end:
                # Neither processed here nor ever committed: it starts at the log's start.
                position = (await consumer.earliest_offsets(tp)).get(tp)
            if end is None or position is None or end <= position:
                self._stall_since.pop(tp, None)
                continue
            since = self._stall_since.setdefault(tp, max(now, self.progress_at.get(tp, now)))
            if now - since < STALL_SECONDS or now - self.progress_at.get(tp, 0.0) < STALL_SECONDS:
                continue
            await self._seek_back(
                consumer,
                tp,
                position,
                "stalled_partitions",
                f"stalled at offset {position} with {end - position} record(s) waiting",
            )
            self._stall_since.pop(tp, None)
            self.progress_at[tp] = now

    async def _seek_back(self, consumer: Any, tp: TP, offset: int, kind: str, why: str) -> None:
        """Log why, count it as ``kind`` and seek ``tp`` back to ``offset``."""
        log.warning(
            "partition %s[%d] %s; seeking back",
            tp.topic,
            tp.partition,
            why,
            extra={"topic": tp.topic, "partition": tp.partition, "offset": offset},
        )
        self.metrics.pipeline_events.labels(kind).inc()
        await consumer.seek(tp, offset)
