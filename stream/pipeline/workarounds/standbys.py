"""A memory store whose standby copy becomes the active table at a fail-over.

What: :class:`StandbyMemoryStore`, the store of ``SKILLSTREAM_STORE=memory``: Faust's memory
store that remembers, per changelog partition, the last changelog offset its contents hold
(``persisted_offset``, as RocksDB's store does), keeps the partitions it holds as a standby when a
recovery ends, and forgets a partition (its keys and its offset) only when it holds it no longer.

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
offset it reports: records read by a recovery or a standby are applied in order
(:meth:`StandbyMemoryStore.apply_changelog_batch`), and the worker's own writes reach the store
only once the broker has them, with the offset it gave them (stream/pipeline/changelogs.py).
The changelog is the truth and applying it is last-write-wins per key, so that prefix plus the
tail read from its offset is the whole changelog applied: the same table as a full recovery.
A partition this worker no longer holds is dropped whole, so no copy outlives the records it
would need to stay true (a deletion compacted away while another worker owned the partition).

Upstream: none asks for it in faust-streaming (searched 2026-12-05). The nearest:
https://github.com/robinhood/faust/issues/106 (RocksDB standbys did not persist their offsets:
fixed there, the memory store was left out); https://github.com/faust-streaming/faust/issues/212
(standby records fetched after "Worker ready" not applied; perhaps why a standby copy was seen
not read at all in small runs here, docs/operations.md "Fail-over"); Kafka Streams made the same
change for its in-memory stores (https://github.com/apache/kafka/pull/4239, KAFKA-6214).

Written for faust-streaming 0.15.3. tests/unit/pipeline/workarounds/test_standbys.py fails when
the memory store no longer keeps ``data`` and ``_key_partition`` or recovery no longer calls
``apply_changelog_batch`` and ``on_recovery_completed`` as used here.

Failure: nothing here does I/O. Replay: a changelog record applied twice leaves the same
contents, and the offset only grows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from faust.stores import STORES
from faust.stores.memory import Store as MemoryStore
from faust.types import TP

__all__ = ["SCHEME", "StandbyMemoryStore", "register"]

# The store URL scheme of StandbyMemoryStore (stream/config/stores.py names it).
SCHEME = "skillstream-memory"


class StandbyMemoryStore(MemoryStore[bytes, bytes]):
    """Faust's memory store, with its offsets and its standby copies kept (see the module)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self._offsets: dict[TP, int] = {}

    def apply_changelog_batch(
        self,
        batch: Iterable[Any],
        to_key: Callable[[Any], Any],
        to_value: Callable[[Any], Any],
    ) -> None:
        events = list(batch)
        super().apply_changelog_batch(events, to_key, to_value)
        offsets = self._offsets
        for event in events:
            message = event.message
            if message.offset > offsets.get(message.tp, -1):
                offsets[message.tp] = message.offset

    def persisted_offset(self, tp: TP) -> int | None:
        return self._offsets.get(tp)

    def set_persisted_offset(self, tp: TP, offset: int) -> None:
        self._offsets[tp] = offset

    def write(self, partition: int, changes: Iterable[tuple[bytes, bytes | None]]) -> None:
        """The worker's own writes to ``partition`` (already in the changelog)."""
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
        held = active_tps | standby_tps
        partitions = {tp.partition for tp in held}
        gone = [key for key, p in self._key_partition.items() if p not in partitions]
        for key in gone:
            self.data.pop(key, None)
            del self._key_partition[key]
        for tp in [tp for tp in self._offsets if tp not in held]:
            del self._offsets[tp]


def register() -> None:
    """Make ``skillstream-memory://`` name :class:`StandbyMemoryStore` (idempotent)."""
    STORES.aliases[SCHEME] = f"{__name__}:StandbyMemoryStore"
