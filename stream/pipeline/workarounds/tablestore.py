"""Writing Faust tables' stores and changelogs directly, a record batch at a time.

What: the changelog writes of a table are held until the commit and then sent by the worker
itself (stream/pipeline/changelogs.py), not by Faust's ``Table.__setitem__``: it writes the
table's store (``Table.data``) once the broker has them, tells a persistent store which
changelog offset it holds (``Store.set_persisted_offset``, as Faust's recovery does), and
sends whole record batches to the changelog partitions through the aiokafka producer under
Faust's (``create_batch``, ``send_batch``).

Why: Faust sends one changelog record per table write, at the write, and keeps the store and
the changelog in step only for writes made inside an agent's iteration of one event. The
pipeline writes a whole batch's changes at once and holds them until the commit so that the
versions of a key coalesce (about ten changelog records per match became about two:
docs/decisions.md, "Changelog writes wait for the commit"). Faust has no API for that; these
functions are everything that reaches past it to do it. The send is aiokafka's record-batch
API, which Faust's producer does not expose: one future per batch instead of one per record.

Upstream: https://github.com/faust-streaming/faust/issues/497 is the nearest (tables cannot be
written outside one event's iteration); no issue asks for buffered or batched changelog writes
(searched 2026-11-25).

Written for faust-streaming 0.15.3, aiokafka 0.14.0, mode-streaming 0.7.1.
tests/unit/pipeline/workarounds/test_table_store.py fails when a table no longer has its store
in ``data``, a store its ``set_persisted_offset``, a memory store its type, or the producer its
batch API.

Failure: a send that fails raises (the caller keeps the writes for the next flush). Replay:
writing a key's value again, or its tombstone, is harmless.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, MutableMapping
from contextlib import AbstractContextManager
from typing import Any

from faust.stores.memory import Store as MemoryStore
from faust.types import TP

from stream.pipeline.workarounds.events import EventContext
from stream.pipeline.workarounds.private import kafka_producer
from stream.pipeline.workarounds.standbys import StandbyMemoryStore

__all__ = [
    "as_event",
    "changelog_topic",
    "partition_event",
    "persists",
    "send_record_batches",
    "set_persisted",
    "store_of",
    "write_partition",
]


def store_of(table: Any) -> MutableMapping[bytes, bytes]:
    """The table's store (memory or RocksDB), read and written without its changelog."""
    store: MutableMapping[bytes, bytes] = table.data
    return store


def persists(table: Any) -> bool:
    """Whether the table's store must be told which changelog offset it holds: RocksDB's,
    which outlives the process, and the memory store whose standby copies take over
    (workarounds/standbys.py); Faust's own memory store keeps none."""
    return isinstance(table.data, StandbyMemoryStore) or not isinstance(table.data, MemoryStore)


def write_partition(table: Any, partition: int, changes: Mapping[bytes, bytes | None]) -> None:
    """Apply ``changes`` (the broker has them) to the table's store for ``partition``; the
    caller makes a RocksDB store's current event the partition's (:func:`as_event`)."""
    store = table.data
    if isinstance(store, StandbyMemoryStore):
        store.write(partition, changes.items())
        return
    for key, value in changes.items():
        if value is None:
            if key in store:
                del store[key]
        else:
            store[key] = value


def changelog_topic(table: Any) -> str:
    name: str = table.changelog_topic.get_topic_name()
    return name


def set_persisted(table: Any, partition: int, offset: int) -> None:
    """Tell a persistent store it holds the changelog up to ``offset`` on ``partition``, so
    recovery reads only the rest."""
    table.data.set_persisted_offset(TP(changelog_topic(table), partition), offset)


def as_event(event: Any) -> AbstractContextManager[None]:
    """Make ``event`` Faust's current event while a partition's store is written: a RocksDB
    store picks the partition's database by it (stream/pipeline/workarounds/events.py)."""
    return EventContext(event)


class _Message:
    __slots__ = ("partition",)

    def __init__(self, partition: int) -> None:
        self.partition = partition


class _PartitionEvent:
    """What a store reads of the current event: its message's partition (a RocksDB store
    picks the partition's database by it; a memory store reads nothing)."""

    __slots__ = ("__weakref__", "message")

    def __init__(self, partition: int) -> None:
        self.message = _Message(partition)


def partition_event(partition: int) -> Any:
    """A stand-in current event for writes to ``partition`` that no input event made: a
    checkpoint record of a table partition that had no write of its own since the worker
    started (stream/pipeline/checkpoints.py)."""
    return _PartitionEvent(partition)


async def send_record_batches(
    app: Any, topic: str, by_partition: Mapping[int, Mapping[bytes, bytes | None]]
) -> dict[int, int]:
    """Send the records to ``topic``'s partitions, a record batch at a time, and wait until
    the broker has all; the last offset written per partition."""
    producer = kafka_producer(app)
    sends: list[tuple[int, int, asyncio.Future[Any]]] = []
    for partition, changes in by_partition.items():
        batch = producer.create_batch()
        for key, value in changes.items():
            if batch.append(key=key, value=value, timestamp=None) is None:
                future = await _submit(producer, batch, topic, partition)
                sends.append((partition, batch.record_count(), future))
                batch = producer.create_batch()
                batch.append(key=key, value=value, timestamp=None)
        if batch.record_count():
            future = await _submit(producer, batch, topic, partition)
            sends.append((partition, batch.record_count(), future))
    last: dict[int, int] = {}
    results = await asyncio.gather(*(future for _, _, future in sends))
    for (partition, count, _), metadata in zip(sends, results, strict=True):
        last[partition] = max(last.get(partition, -1), metadata.offset + count - 1)
    return last


async def _submit(producer: Any, batch: Any, topic: str, partition: int) -> asyncio.Future[Any]:
    future: asyncio.Future[Any] = await producer.send_batch(batch, topic, partition=partition)
    return future
