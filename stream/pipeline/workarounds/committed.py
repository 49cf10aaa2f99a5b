"""Seeking to the committed offsets, including partitions the group never committed.

After every rebalance (and whenever its fetcher returns while the flow is stopped) Faust seeks
each assigned partition back to its committed offset, so records it fetched and then threw
away (the flow stopped mid-batch, the generation changed) are read again. aiokafka's
``seek_to_committed`` seeks only partitions with a committed offset above 0: a partition the
group never committed keeps its fetch position, past the records thrown away, and they are
never read. A chaos run showed it: a worker killed 1.4 s after the fleet started (before any
commit) left its partitions to a survivor, which then rated nothing from them for good.

With :func:`patch_seek_to_committed` a stream partition without a committed offset is sought
to its beginning instead, as a fresh consumer with ``auto_offset_reset=earliest`` would start,
and the log's start is reported as its committed offset: Faust keeps that as the offset a
commit must start from (workarounds/headgap.py; 0 reads as "none" there, which is the same).
Changelog partitions are left alone: Faust's recovery positions them itself and commits none.
The app's listener (:func:`on_seek`) learns where every partition was sought, with each
partition's log start, and says where reading starts: at the committed offset, or lower where
a table restored from its changelog is behind it (stream/pipeline/checkpoints.py); partitions
it lowers are sought there, and reported to Faust as committed there, so Faust's own read and
commit bookkeeping starts from the same place. The batch runner starts each partition's
position where the listener said (stream/pipeline/positions.py), since Faust keeps no record of
it that tells "committed at 0" from "not sought yet".

Upstream: https://github.com/aio-libs/aiokafka/issues/1003 (open: ``seek_to_committed`` skips
an offset of 0 or none).

Written for faust-streaming 0.15.3, aiokafka 0.14.0, mode-streaming 0.7.1.
tests/integration/pipeline/workarounds/test_committed_seek.py fails when aiokafka alone starts
seeking such a partition (remove this) or when the patched seek stops rewinding it;
tests/unit/pipeline/workarounds/test_committed_patch.py checks that Faust's consumer thread uses it.

Failure: errors of the seek propagate to Faust, as its own would. Replay: records after the
beginning are read again; every handler is idempotent.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition
from faust.transport.drivers import aiokafka as aiokafka_driver

__all__ = ["on_seek", "patch_seek_to_committed", "seek_to_committed"]

# The app attribute holding its listener.
LISTENER = "skillstream_on_seek"

# (committed offsets, log starts) -> where each partition starts: its committed offset or lower.
Listener = Callable[
    [Mapping[TopicPartition, int], Mapping[TopicPartition, int]], Mapping[TopicPartition, int]
]


def on_seek(app: Any, listener: Listener) -> None:
    """Call ``listener`` every time ``app``'s consumer seeks its stream partitions to their
    commits (the log's start for those never committed), with those offsets and each
    partition's log start, before any record fetched from there is handed over; the partitions
    it returns a lower offset for are sought there."""
    setattr(app, LISTENER, listener)


async def _log_starts(
    consumer: AIOKafkaConsumer, tps: list[TopicPartition]
) -> Mapping[TopicPartition, int]:
    if not tps:
        return {}
    starts: Mapping[TopicPartition, int] = await consumer.beginning_offsets(tps)
    return starts


async def _seek(consumer: AIOKafkaConsumer, offsets: Mapping[TopicPartition, int]) -> None:
    for tp, offset in offsets.items():
        consumer.seek(tp, offset)


async def seek_to_committed(
    consumer: AIOKafkaConsumer, keep_position: Callable[[TopicPartition], bool]
) -> Mapping[TopicPartition, int | None]:
    """Seek every assigned partition to its committed offset; one with none (or 0) to its
    beginning, unless ``keep_position`` says to leave it. Returns the committed offsets, with
    the log's start for the partitions sought to their beginning."""
    committed: Mapping[TopicPartition, int | None] = await consumer.seek_to_committed()
    rewind = [tp for tp, offset in committed.items() if not offset and not keep_position(tp)]
    if not rewind:
        return committed
    await consumer.seek_to_beginning(*rewind)
    starts: Mapping[TopicPartition, int] = await consumer.beginning_offsets(rewind)
    return {**committed, **starts}


def patch_seek_to_committed() -> None:
    """Make Faust's consumer thread use :func:`seek_to_committed` (once per process)."""
    thread = aiokafka_driver.AIOKafkaConsumerThread
    if hasattr(thread.seek_to_committed, "__wrapped__"):
        return
    original = thread.seek_to_committed

    @functools.wraps(original)
    async def patched(self: Any) -> Mapping[TopicPartition, int | None]:
        is_changelog = self.consumer._is_changelog_tp
        consumer = self._ensure_consumer()
        result: Mapping[TopicPartition, int | None] = await self.call_thread(
            seek_to_committed, consumer, is_changelog
        )
        listener: Listener | None = getattr(self.consumer.app, LISTENER, None)
        if listener is None:
            return result
        committed = {
            tp: offset
            for tp, offset in result.items()
            if offset is not None and not is_changelog(tp)
        }
        starts = await self.call_thread(_log_starts, consumer, list(committed))
        wanted = listener(committed, starts)
        lower = {tp: o for tp, o in wanted.items() if tp in committed and o < committed[tp]}
        if lower:
            await self.call_thread(_seek, consumer, lower)
        return {**result, **lower}

    thread.seek_to_committed = patched  # type: ignore[method-assign,assignment]
