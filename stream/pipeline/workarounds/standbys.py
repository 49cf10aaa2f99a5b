"""A memory store whose standby copy becomes the active table at a fail-over.

What: :class:`StandbyMemoryStore`, the store of ``SKILLSTREAM_STORE=memory``: Faust's memory
store that remembers, per changelog partition, the last changelog offset its contents hold
(``persisted_offset``, as RocksDB's store does), keeps the partitions it holds as a standby when a
recovery ends, and forgets a partition (its keys and its offset) the moment it is no longer
assigned. :class:`GuardedRocksDBStore`, the store of ``SKILLSTREAM_STORE=rocksdb``. Both apply
only the changelog records newer than what they hold (:func:`newer_records`) and show what they
hold to the store audit. :func:`patch_standby_records_kept`: the standby records fetched when a
recovery ends are kept, not cleared (below).

Why: Faust's memory store reports no persisted offset, and when a recovery ends it deletes every
key of a partition that is not active on this worker, standby copies included
(``faust/stores/memory.py``, ``on_recovery_completed``). The standby copies Faust keeps
(``table_standby_replicas``, one by default) were therefore never used: a worker that stood by a
lost worker's partitions read their whole changelogs again before it rated them (about 45 s
for half of a million players on the development machine, docs/benchmarks.md), and a worker
read its own partitions' changelogs again from where its last recovery had stopped at every
rebalance. With
the offset known, Faust's recovery starts a partition at it (``Recovery._add`` reads
``persisted_offset``) and reads only the tail.

Why it is safe: a store's contents for a partition are always the changelog applied up to the
offset it reports, because only three things change them: records read by a recovery or a
standby, applied in order and only when newer than that offset
(:meth:`StandbyMemoryStore.apply_changelog_batch`); the worker's own writes, which reach the
store once the broker has them, with the offset it gave them (stream/pipeline/changelogs.py);
and dropping a partition whole (keys and offset) the moment it is no longer assigned here
(:meth:`StandbyMemoryStore.on_rebalance`), after which nothing of it is applied until it is
assigned again. The changelog is the truth and applying it is last-write-wins per key, so that
prefix plus the tail read from its offset is the whole changelog applied: the same table as a
full recovery. The first version (2026-12-05, `6a7ced7`) applied every record Faust's reader
delivered: Faust delivers some late, after the worker's own newer writes (see
``apply_changelog_batch``), and a kept copy then differed from its changelog for good; Faust's
own store hides the same late records by reading every active changelog whole at each
rebalance. The crash simulator does not model Faust's reader; the fault harness
(tests/e2e/test_chaos.py, `skillstream chaos`) found it. Not closed here: a record fetched
before a rebalance and delivered after it for a partition the store holds nothing of (revoked
and assigned again, or newly assigned) is taken as where the partition starts; Faust's reader
then skips every record below it (its own offset check, with any store). It needs a record
fetched under one assignment to reach the reader's queue after the next one began.

The records kept (:func:`patch_standby_records_kept`): Faust's standby reader loses records.
Standby partitions start (sought to the copy's offset, resumed) before the recovery's end,
whose ``flow_control.resume()`` clears every queue Faust marks to clear on resume, the changelog
queue included: the standby records fetched and not yet taken were dropped, and nothing fetched
them again, so the copy went on without them, for good (seen by the store audit,
stream/pipeline/storeaudit.py, in 1 of 5 fault runs; docs/decisions.md, "Fail-over: standby
copies, kept whole"). That resume now leaves the changelog queue as it is (the other queues
are cleared as before): the generation was checked just before it and the records in the queue
were fetched for this assignment, in order. A first fix (2026-12-05, not landed) sought the
standby partitions back instead; Faust's consumer drops a record below the last offset it
delivered unless Faust's own seek reset that, and the rest of a fetched batch is delivered
after the clear, so the seek could not bring every record back. Not closed (found by reading
Faust, never seen): a standby partition whose queue was full when a rebalance began can be
resumed by Faust's buffer-drop callback before the next recovery seeks it, and its records
read from the old position, after a hole left by the rebalance's clear; the store audit would
show it.

Upstream: none asks for it in faust-streaming (searched 2026-12-05). Late records: the nearest
is https://github.com/robinhood/faust/pull/583 (records dropped or delayed around rebalances:
the changelog buffer and the queue cleared on resume). For kept copies, the nearest:
https://github.com/robinhood/faust/issues/106 (RocksDB standbys did not persist their offsets:
fixed there, the memory store was left out); https://github.com/faust-streaming/faust/issues/212
(standby records fetched after "Worker ready" not applied; perhaps why a standby copy was seen
not read at all in small runs here, docs/operations.md "Fail-over"); Kafka Streams made the same
change for its in-memory stores (https://github.com/apache/kafka/pull/4239, KAFKA-6214).

Written for faust-streaming 0.15.3. tests/unit/pipeline/workarounds/test_standbys.py fails when
the memory store no longer keeps ``data`` and ``_key_partition``, recovery no longer calls
``apply_changelog_batch`` and ``on_recovery_completed`` as used here, or that method no longer
resumes the flow through ``app.flow_control.resume()``.

Failure: nothing here does I/O. Replay: a changelog record delivered twice is applied once, and
the offset only grows while the partition is assigned.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Container, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from faust.stores import STORES
from faust.stores.memory import Store as MemoryStore
from faust.stores.rocksdb import Store as RocksDBStore
from faust.types import TP
from mode.utils.queues import FlowControlEvent, FlowControlQueue

__all__ = [
    "ROCKSDB_SCHEME",
    "SCHEME",
    "GuardedRocksDBStore",
    "StandbyMemoryStore",
    "newer_records",
    "register",
]

# The store URL scheme of StandbyMemoryStore (stream/config/stores.py names it).
SCHEME = "skillstream-memory"
ROCKSDB_SCHEME = "skillstream-rocksdb"

log = logging.getLogger("skillstream.worker")


class StandbyMemoryStore(MemoryStore[bytes, bytes]):
    """Faust's memory store, with its offsets and its standby copies kept (see the module)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        # Per partition of the table's changelog: the last offset the contents hold.
        self._offsets: dict[int, int] = {}
        # The changelog partitions assigned to this worker, active or standby.
        self._assigned: set[int] = set()
        # Records not applied (see apply_changelog_batch): older than what the store holds,
        # and of a partition not assigned here or of another table's changelog.
        self.skipped_late = 0
        self.skipped_other = 0
        self._topic_name: str | None = None

    async def on_rebalance(
        self,
        assigned: set[TP],
        revoked: set[TP],
        newly_assigned: set[TP],
        generation_id: int = 0,
    ) -> None:
        """Called by Faust before the recovery of each new assignment: a partition no longer
        assigned is dropped at once (contents and offset), so nothing delivered late can add to
        a copy this worker will not keep up."""
        topic = self._topic()
        self._assigned = {tp.partition for tp in assigned if tp.topic == topic}
        self._drop({tp.partition for tp in revoked if tp.topic == topic} - self._assigned)

    def apply_changelog_batch(
        self,
        batch: Iterable[Any],
        to_key: Callable[[Any], Any],
        to_value: Callable[[Any], Any],
    ) -> None:
        """Apply, in order, the records newer than what the store holds of their partition.

        A record at or below that offset is skipped: the contents already hold it or a newer
        value. Faust's reader delivers some records late: one taken from its queue while a
        rebalance runs sits in its buffer, unapplied, until the next flush of the buffer, by
        then under the worker's own newer writes; applied, it put an old value back under a
        newer offset, a table no longer equal to its changelog that nothing noticed (a
        match rated twice, found by `skillstream chaos --seed 7`). Skipped as well: a record
        of a partition not assigned here, and one of another table's changelog (Faust applies
        a record of a partition it no longer tracks to the table of the record before it)."""
        apply = functools.partial(super().apply_changelog_batch, to_key=to_key, to_value=to_value)
        _apply_newer(self, apply, batch, self._topic(), self._offsets, self._assigned)

    def persisted_offset(self, tp: TP) -> int | None:
        if tp.topic != self._topic():
            return None
        return self._offsets.get(tp.partition)

    def set_persisted_offset(self, tp: TP, offset: int) -> None:
        if tp.topic == self._topic() and tp.partition in self._assigned:
            self._offsets[tp.partition] = offset

    def write(self, partition: int, changes: Iterable[tuple[bytes, bytes | None]]) -> None:
        """The worker's own writes to ``partition`` (already in the changelog). Writes to a
        partition no longer assigned here are left to its next owner's recovery."""
        if partition not in self._assigned:
            return
        data = self.data
        where = self._key_partition
        for key, value in changes:
            if value is None:
                data.pop(key, None)
                where.pop(key, None)
            else:
                data[key] = value
                where[key] = partition

    async def on_recovery_completed(self, active_tps: set[TP], standby_tps: set[TP]) -> None:
        held = {tp.partition for tp in active_tps | standby_tps}
        self._drop({p for p in self._key_partition.values() if p not in held})
        self._drop({p for p in self._offsets if p not in held})

    def held_offsets(self) -> dict[int, int]:
        """Per partition it holds: the last changelog offset its contents hold (a copy)."""
        return dict(self._offsets)

    def partition_contents(self, partition: int) -> dict[bytes, bytes]:
        """What it holds of ``partition``: key to value, raw bytes (a copy)."""
        where = self._key_partition
        return {k: v for k, v in self.data.items() if where.get(k) == partition}

    def _topic(self) -> str:
        """The table's changelog topic (the only one whose records this store applies)."""
        if self._topic_name is None:
            self._topic_name = self.table.changelog_topic.get_topic_name()
        return self._topic_name

    def _drop(self, partitions: set[int]) -> None:
        """Forget ``partitions`` whole: their keys and the offset they held."""
        if not partitions:
            return
        gone = [key for key, p in self._key_partition.items() if p in partitions]
        for key in gone:
            self.data.pop(key, None)
            del self._key_partition[key]
        for partition in partitions:
            self._offsets.pop(partition, None)


class GuardedRocksDBStore(RocksDBStore):
    """Faust's RocksDB store, applying only changelog records newer than what each partition's
    database holds (see :meth:`StandbyMemoryStore.apply_changelog_batch`: Faust's RocksDB
    store applies every record it is given and sets the partition's offset to the record's,
    so a late record put an old value back and moved the offset back with it)."""

    skipped_late = 0
    skipped_other = 0

    def apply_changelog_batch(
        self,
        batch: Iterable[Any],
        to_key: Callable[[Any], Any],
        to_value: Callable[[Any], Any],
    ) -> None:
        topic = self.table.changelog_topic.get_topic_name()
        events = list(batch)
        held: dict[int, int] = {}
        for event in events:
            tp = event.message.tp
            if tp.topic == topic and tp.partition not in held:
                offset = self.persisted_offset(tp)
                held[tp.partition] = -1 if offset is None else offset
        apply = functools.partial(super().apply_changelog_batch, to_key=to_key, to_value=to_value)
        _apply_newer(self, apply, events, topic, held, None)

    def held_offsets(self) -> dict[int, int]:
        """Per partition open here: the last changelog offset its database holds."""
        held: dict[int, int] = {}
        for partition, db in list(self._dbs.items()):
            offset = db.get(self.offset_key)
            if offset is not None:
                held[partition] = int(offset)
        return held

    def partition_contents(self, partition: int) -> dict[bytes, bytes]:
        """What its database holds of ``partition``: key to value, raw bytes (a copy)."""
        return dict(self._visible_items(self._dbs[partition]))


def newer_records(
    batch: Iterable[Any], topic: str, held: dict[int, int], assigned: Container[int] | None
) -> tuple[list[Any], dict[int, int], int]:
    """The records of ``batch`` to apply, in order: those of ``topic`` (and of a partition in
    ``assigned``, unless None) newer than ``held`` (per partition, the last offset the store
    holds; moved on as records are taken). Also returns, per partition, how many were older
    than held (late), and how many were of another topic or partition."""
    fresh: list[Any] = []
    late: dict[int, int] = {}
    other = 0
    for event in batch:
        tp = event.message.tp
        if tp.topic != topic or (assigned is not None and tp.partition not in assigned):
            other += 1
            continue
        offset = event.message.offset
        last = held.get(tp.partition, -1)
        if offset <= last:
            if offset < last:
                late[tp.partition] = late.get(tp.partition, 0) + 1
            continue
        held[tp.partition] = offset
        fresh.append(event)
    return fresh, late, other


def _apply_newer(
    store: Any,
    apply: Callable[[list[Any]], None],
    batch: Iterable[Any],
    topic: str,
    held: dict[int, int],
    assigned: Container[int] | None,
) -> None:
    """Give ``apply`` the records of ``batch`` :func:`newer_records` keeps; count the others on
    ``store`` (``skipped_other``, ``skipped_late``) and say the late ones."""
    fresh, late, other = newer_records(batch, topic, held, assigned)
    store.skipped_other += other
    if fresh:
        apply(fresh)
    store.skipped_late += sum(late.values())
    _say_late(topic, late, held)


def _say_late(topic: str, late: Mapping[int, int], held: Mapping[int, int]) -> None:
    for partition, count in late.items():
        log.info(
            "%s[%d]: skipped %d changelog record(s) older than the offset the store holds"
            " (%d): delivered late by Faust's changelog reader",
            topic,
            partition,
            count,
            held[partition],
        )


def register() -> None:
    """Make ``skillstream-memory://`` name :class:`StandbyMemoryStore` and
    ``skillstream-rocksdb://`` :class:`GuardedRocksDBStore` (idempotent)."""
    STORES.aliases[SCHEME] = f"{__name__}:StandbyMemoryStore"
    STORES.aliases[ROCKSDB_SCHEME] = f"{__name__}:GuardedRocksDBStore"
    patch_standby_records_kept()


def resume_keeping(resume: Callable[[], None], queue: FlowControlQueue[Any]) -> int:
    """Call ``resume`` (a FlowControlEvent's own, which clears every queue it manages) with
    ``queue`` left as it is: its records stay to be taken in order; returns how many stayed."""
    kept = queue.qsize()

    def keep() -> None:
        pass

    queue.clear = keep  # type: ignore[method-assign]  # shadows the method for this resume
    try:
        resume()
    finally:
        vars(queue).pop("clear", None)
    return kept


@contextmanager
def changelog_records_kept(flow: FlowControlEvent, queue: FlowControlQueue[Any]) -> Iterator[None]:
    """While inside, ``flow.resume()`` (as Faust's code calls it) clears every queue but
    ``queue``, and logs how many records stayed there."""
    flow_resume = flow.resume  # Faust's own, before it is shadowed below

    def resume() -> None:
        kept = resume_keeping(flow_resume, queue)
        if kept:
            log.info(
                "recovery complete: %d changelog record(s) of standby partitions kept in the"
                " queue (Faust would clear them)",
                kept,
            )

    flow.resume = resume  # type: ignore[method-assign]
    try:
        yield
    finally:
        if vars(flow).get("resume") is resume:
            del flow.resume


# Logged once per assignment by a worker whose standby copies have read their changelogs to the
# ends those had when the copies started (:class:`StandbyWatch`).
STANDBYS_READY = "standby copies ready for a fail-over"


def standby_lag(recovery: Any) -> int | None:
    """The changelog records the standby copies still have to read to reach the ends their
    changelogs had when they started; None when there is no standby partition or its end is
    not read yet (Faust reads the ends when it starts the standbys, before "Worker ready")."""
    tps = set(recovery.standby_tps)
    ends = recovery.standby_highwaters
    if not tps or any(tp not in ends for tp in tps):
        return None
    offsets = recovery.standby_offsets
    lag: int = sum(max(0, ends[tp] - offsets.get(tp, -1)) for tp in tps)
    return lag


class StandbyWatch:
    """Says once per assignment when the standby copies are ready (Faust's own signal,
    ``TableManager.on_standbys_ready``, fires before the copies have started)."""

    def __init__(self) -> None:
        self.said: int | None = None

    def check(self, app: Any) -> bool:
        """Log :data:`STANDBYS_READY` the first time this assignment's copies have caught up;
        whether it did now."""
        generation = app.consumer_generation_id
        if self.said == generation or app.rebalancing:
            return False
        recovery = app.tables.recovery
        if standby_lag(recovery) != 0:
            return False
        self.said = generation
        log.info("%s: %d partition(s)", STANDBYS_READY, len(recovery.standby_tps))
        return True


def patch_standby_records_kept() -> None:
    """Make ``Recovery.on_recovery_completed`` keep the changelog queue's records when it resumes
    the flow (idempotent)."""
    from faust.tables.recovery import Recovery

    if getattr(Recovery.on_recovery_completed, "_skillstream_keeps", False):
        return
    original = Recovery.on_recovery_completed

    async def on_recovery_completed(self: Any, generation_id: int = 0) -> None:
        with changelog_records_kept(self.app.flow_control, self.tables.changelog_queue):
            await original(self, generation_id)

    on_recovery_completed._skillstream_keeps = True  # type: ignore[attr-defined]
    Recovery.on_recovery_completed = on_recovery_completed  # type: ignore[method-assign]
