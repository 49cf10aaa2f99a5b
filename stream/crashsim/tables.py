"""The simulated worker's table port: the batch runner's ``Tables``, with the Faust port's
rules (stream/pipeline/changelogs.py) on the simulated broker.

- reads see every write at once (held writes over the store);
- writes are held until a flush, which appends them to their changelog partitions, each
  partition's batch ending with its checkpoint record (stream/pipeline/checkpoints.py), then
  applies them to the store (the store follows the changelog);
- a flush can be killed after any partition's batch (crash point ``flushing``): the batches
  appended so far stay in the changelogs, the rest are lost with the worker;
- a restore builds a partition from its changelog (which the schedule may have cut short:
  stream/crashsim/broker.py).

One store per table for every partition the worker owns, as Faust's memory store is; a key's
partition is remembered so a partition can be dropped when it leaves.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from stream.crashsim.broker import Broker
from stream.pipeline.checkpoints import Checkpoints
from stream.pipeline.heldview import Held, HeldView
from stream.protocol.checkpoints import checkpoint_key

__all__ = ["SimTables"]


class _View(HeldView):
    """One table as the batches see it: held writes over the store (nothing is ever being
    sent: a simulated flush is done at once)."""

    def __init__(self, held: dict[bytes, Held], store: dict[bytes, bytes]) -> None:
        super().__init__()
        self.held = held
        self._store = store

    @property
    def store(self) -> Mapping[bytes, bytes]:
        return self._store


class SimTables:
    """The table port of one simulated worker."""

    def __init__(
        self,
        broker: Broker,
        names: tuple[str, ...],
        checkpoints: Checkpoints,
        crash_point: Callable[[str], None],
    ) -> None:
        self.broker = broker
        self.checkpoints = checkpoints
        self.crash_point = crash_point
        self.store: dict[str, dict[bytes, bytes]] = {name: {} for name in names}
        self.held: dict[str, dict[bytes, Held]] = {n: {} for n in names}
        self.partition_of: dict[str, dict[bytes, int]] = {name: {} for name in names}
        self.views = {name: _View(self.held[name], self.store[name]) for name in names}

    # --- the port -------------------------------------------------------------------------------

    def contents(self, table: str) -> Mapping[bytes, bytes]:
        return self.views[table]

    async def write(
        self, table: str, partition: int, changes: dict[bytes, bytes | None], last: object
    ) -> None:
        held = self.held[table]
        for key, value in changes.items():
            held[key] = (partition, value)

    async def flush(self, chosen: Mapping[tuple[str, int], int] | None = None) -> bool:
        """Append every held write to its changelog partition, each batch ending with its
        checkpoint (``chosen``: the offsets the commit after it commits; None: none follows),
        then apply them to the store. A crash point after every partition's batch."""
        taken: dict[str, dict[int, dict[bytes, bytes | None]]] = {}
        for table, held in self.held.items():
            by_partition = taken[table] = {}
            for key, (partition, value) in held.items():
                by_partition.setdefault(partition, {})[key] = value
        written = [(table, p) for table, by_partition in taken.items() for p in by_partition]
        marks = self.checkpoints.records(chosen, written)
        sent_any = False
        for table, by_partition in taken.items():
            for partition, value in marks.get(table, {}).items():
                by_partition.setdefault(partition, {})[checkpoint_key(partition)] = value
            self.held[table] = {}
            self.views[table].held = self.held[table]
            for partition in sorted(by_partition):
                changes = by_partition[partition]
                self.broker.changelog(table, partition).append(list(changes.items()))
                self._apply(table, partition, changes)
                sent_any = True
                self.crash_point("flushing")
        self.checkpoints.wrote(chosen)
        if sent_any:
            self.crash_point("flushed")
        return True

    # --- assignment -----------------------------------------------------------------------------

    def empty(self, table: str, partition: int) -> bool:
        """Whether ``partition`` of ``table`` holds no record at all."""
        return partition not in self.partition_of[table].values()

    def restore(self, table: str, partition: int) -> None:
        """Rebuild ``partition`` of ``table`` from its changelog, as recovery does after an
        assignment."""
        self.drop(table, partition)
        self._apply(table, partition, self.broker.changelog(table, partition).restored())

    def drop(self, table: str, partition: int) -> None:
        """Forget ``partition`` of ``table`` (it left this worker)."""
        store, where = self.store[table], self.partition_of[table]
        for key in [k for k, p in where.items() if p == partition]:
            del where[key]
            store.pop(key, None)
        held = self.held[table]
        for key in [k for k, (p, _) in held.items() if p == partition]:
            del held[key]

    def _apply(self, table: str, partition: int, changes: Mapping[bytes, bytes | None]) -> None:
        store, where = self.store[table], self.partition_of[table]
        for key, value in changes.items():
            if value is None:
                store.pop(key, None)
                where.pop(key, None)
            else:
                store[key] = value
                where[key] = partition
