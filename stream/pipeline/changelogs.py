"""The batch runner's table port on Faust's tables: writes are read at once and reach the
changelog when Faust commits.

Why hold them: a 1v1 match writes its record in three or four batches (start, snapshots,
finish, rated) and each player's pending record twice (the match added, then settled). Sent
batch by batch, that was about ten changelog records per match, most of the records the worker
wrote and most of its per-record cost. Held until the commit (every few seconds), the versions
of a key coalesce into its last one, and a pending entry created and settled within the interval
never reaches the changelog at all.

The contract:

- **Reads see every write at once**: :meth:`BufferedTables.contents` looks in the writes held
  since the last flush, then in those being sent, then in Faust's store.
- **The changelog covers every committed offset** (steps 3 and 5 of the commit protocol,
  stream/commits.py). :meth:`BufferedTables.flush` runs after Faust has chosen the
  offsets to commit and before it commits them
  (stream/pipeline/workarounds/beforecommit.py). Every record at those offsets was acked, so its
  batch had finished and its writes were held; the flush sends them all and waits for the
  broker's acknowledgement. After a crash the tables are recovered from the changelog and the
  inputs read again from the committed offsets, exactly as when every write was sent at once:
  what is lost is uncommitted work, replayed against state that recognises what was done.
- **The store follows the changelog**: a write reaches Faust's store (memory or RocksDB) only
  once the broker has it, so a RocksDB store never holds what its changelog lacks.

Failure: a flush whose sends fail keeps its writes (under any newer ones) for the next flush and
returns False, and that commit is skipped: the offsets stay where they were until a flush works
(one warning when flushes start failing, one when they work again). On revocation the held
writes are flushed while this worker still owns the partitions; if that fails, the revoked
partitions' writes are dropped, since their offsets were never committed past them and the next
owner redoes those records from the changelog it finds.

**Every batch ends with a checkpoint** (stream/pipeline/checkpoints.py): each changelog
partition a flush writes to, or whose agent's inputs moved since its last checkpoint, gets as
the last record of its batch the offsets its state holds everything below (before a commit,
the offsets the commit is about to commit), so a table restored short of a flush is seen by
the next owner and its inputs read again. They are records of the table like the
others (the store has them), but no reader of the table sees them: iterating a table skips
them.

Replay: a key's last value wins; sending one twice is harmless.

Every reach past Faust's tables (their stores, the persisted offsets, the record-batch send)
is in stream/pipeline/workarounds/tablestore.py; nothing here imports Faust.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from stream.pipeline.batches import Message
from stream.pipeline.checkpoints import Checkpoints
from stream.pipeline.heldview import HeldView
from stream.pipeline.workarounds.tablestore import (
    as_event,
    changelog_topic,
    partition_event,
    persists,
    send_record_batches,
    set_persisted,
    store_of,
    write_partition,
)
from stream.protocol.checkpoints import checkpoint_key
from stream.retry import Outage

log = logging.getLogger("skillstream.worker")


class TableWrites(HeldView):
    """One table as the batches see it: held writes over those being sent over the store
    (stream/pipeline/heldview.py), and their way to the changelog."""

    def __init__(self, table: Any) -> None:
        super().__init__()
        self.table = table
        # Per changelog partition, its latest event: Faust's RocksDB store picks a partition's
        # database by the current event (workarounds/events.py).
        self.events: dict[int, Any] = {}

    @property
    def store(self) -> Any:
        return store_of(self.table)

    def hold(self, partition: int, changes: dict[bytes, bytes | None], event: Any) -> None:
        """Hold a batch's changes; a key deleted before the changelog ever had it is forgotten."""
        held = self.held
        for key, value in changes.items():
            if value is None and key not in self.sending and key not in self.store:
                held.pop(key, None)
            else:
                held[key] = (partition, value)
        self.events[partition] = event

    def take(self) -> dict[int, dict[bytes, bytes | None]]:
        """Move the held writes to ``sending``; they are returned by changelog partition."""
        self.sending, self.held = self.held, {}
        by_partition: dict[int, dict[bytes, bytes | None]] = {}
        for key, (partition, value) in self.sending.items():
            by_partition.setdefault(partition, {})[key] = value
        return by_partition

    def sent(
        self, by_partition: Mapping[int, dict[bytes, bytes | None]], offsets: Mapping[int, int]
    ) -> None:
        """The broker has the writes being sent (``offsets``: the last changelog offset per
        partition): apply them to the store."""
        persist = persists(self.table)
        for partition, changes in by_partition.items():
            event = self.events.get(partition)
            with as_event(partition_event(partition) if event is None else event):
                write_partition(self.table, partition, changes)
                if persist and partition in offsets:
                    # The store remembers the changelog offset it holds, so recovery (a
                    # restart on RocksDB, a standby taking over) reads only the rest; set once
                    # the store holds everything up to it.
                    set_persisted(self.table, partition, offsets[partition])
        self.sending = {}

    def failed(self) -> None:
        """The writes being sent did not all reach the broker: hold them again, under any
        written since."""
        merged = self.sending
        merged.update(self.held)
        self.held, self.sending = merged, {}

    def drop(self, partitions: Iterable[int]) -> None:
        """Forget the held writes of ``partitions`` (revoked, and their flush failed)."""
        gone = set(partitions)
        self.held = {k: v for k, v in self.held.items() if v[0] not in gone}


class BufferedTables:
    """The table port (stream/pipeline/batches.py ``Tables``) on the app's Faust tables, with
    changelog writes held until :meth:`flush` (see the module's docstring)."""

    def __init__(
        self,
        app: Any,
        tables: Mapping[str, Any],
        crash_point: Callable[[str], None] = lambda point: None,
        checkpoints: Checkpoints | None = None,
    ) -> None:
        self.app = app
        self.tables = {name: TableWrites(table) for name, table in tables.items()}
        # What each flush ends every moved table partition with (None: no checkpoints).
        self.checkpoints = checkpoints
        # The soak harness's crash points (stream/pipeline/crashpoints.py).
        self.crash_point = crash_point
        self.outage = Outage("changelogs: flush before commit failed")
        self._lock = asyncio.Lock()

    def contents(self, table: str) -> Mapping[bytes, bytes]:
        return self.tables[table]

    async def write(
        self, table: str, partition: int, changes: dict[bytes, bytes | None], last: Message
    ) -> None:
        if changes:
            self.tables[table].hold(partition, changes, last.handle)

    def held(self) -> int:
        """How many writes wait for the next flush."""
        return sum(len(t.held) for t in self.tables.values())

    async def flush(self, chosen: Mapping[tuple[str, int], int] | None = None) -> bool:
        """Send every held write to its changelog and wait for the broker; True when all
        arrived (then they are in the stores), False when some did not (all are held again).
        ``chosen``: the offsets the commit after this flush commits (None: a flush before a
        revocation, which commits nothing). Every batch ends with its table partition's
        checkpoint, and every table partition whose inputs moved gets one
        (stream/pipeline/checkpoints.py)."""
        async with self._lock:
            taken = [(t, t.take()) for t in self.tables.values()]
            marks: dict[str, dict[int, bytes]] = {}
            if self.checkpoints is not None:
                written = [
                    (name, partition)
                    for name, (_, by_partition) in zip(self.tables, taken, strict=True)
                    for partition in by_partition
                ]
                marks = self.checkpoints.records(chosen, written)
            for name, (_, by_partition) in zip(self.tables, taken, strict=True):
                for partition, value in marks.get(name, {}).items():
                    # Last in the partition's batch: restored only with what precedes it.
                    by_partition.setdefault(partition, {})[checkpoint_key(partition)] = value
            offsets: list[dict[int, int]] = []
            try:
                for t, by_partition in taken:
                    topic = changelog_topic(t.table)
                    offsets.append(await send_record_batches(self.app, topic, by_partition))
                    if by_partition:
                        self.crash_point("flushing")
            except BaseException as exc:
                # Cancelled too (the worker stopping): the writes stay held, never lost.
                for t, _ in taken:
                    t.failed()
                if not isinstance(exc, Exception):
                    raise
                self.outage.failed(repr(exc), exc)
                return False
            for (t, by_partition), last in zip(taken, offsets, strict=True):
                t.sent(by_partition, last)
            if self.checkpoints is not None:
                self.checkpoints.wrote(chosen)
            self.outage.recovered()
            if any(by_partition for _, by_partition in taken):
                self.crash_point("flushed")
            return True

    async def flush_revoked(self, partitions: Iterable[int]) -> None:
        """Flush before ``partitions`` go; if that fails, drop their held writes."""
        numbers = list(partitions)
        if not await self.flush():
            log.warning(
                "changelogs: dropped the held writes of revoked partitions %s (not committed; "
                "their next owner redoes them)",
                numbers,
            )
            for t in self.tables.values():
                t.drop(numbers)
