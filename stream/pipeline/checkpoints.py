"""What each table partition says it has read: the checkpoint record every changelog batch ends
with, and where a worker restarts its inputs from them.

Why: a table's changelog and the group's committed offsets are two writes. The commit protocol
(stream/commits.py) writes the changelog first, so a committed offset is never ahead of the
changelog *as written*; but a changelog can come back shorter than it was written: a broker
that reports its end too low (Tansu 0.6 reports the start of the last record batch plus one:
docs/decisions.md), records lost to an unclean leader election, a changelog deleted and made
again, a store restored from an older copy. A successor then restores a table one flush or
more behind the offsets it reads from, and nothing in the records themselves shows it: a match
entry waits for snapshots read before the commit, a player is rated from a record without
their last result (issue 44).

The rule, in three parts:

1. **Every batch a flush sends to a changelog partition ends with a checkpoint record**
   (stream/protocol/checkpoints.py): the offsets, per input topic of the agent that writes the
   table, up to which that partition's state holds everything. Before a commit they are the
   offsets the commit is about to commit, and every table of an agent partition whose inputs
   moved gets one, written or not; a flush with nothing chosen (before a revocation) gives the
   batches it sends the offsets of the last commit. Written last in its batch, a checkpoint is
   restored only with the records before it: a restored checkpoint never claims more than the
   restored state holds, and a table that has records of this version has a checkpoint.
2. **A worker restarts each input where the oldest checkpoint of its agent's tables says**, if
   that is below the committed offset (:meth:`Checkpoints.restart`), and says so (one line, a
   metric). The records in between are read again against the older state, which is what a
   crash between a batch's delivery and the flush already makes a successor do
   (docs/guarantees.md, "What a crash can interrupt"): every handler is idempotent, and a table
   restored ahead of the others (a flush cut between tables) recognises what it has. A table
   partition with nothing in it at all, while a sibling has a checkpoint or while every table
   of the partition is as empty with its inputs committed, lost its whole changelog: the
   inputs are read again from their start.
3. **A restart the inputs no longer hold is refused**: if the records to read again are gone
   (retention), the state cannot be repaired from them; the caller says which table and
   partition and processes nothing of it (stream/pipeline/app.py).

A table partition with records but no checkpoint was written by a version before checkpoints
(a rolling upgrade): nothing to compare with, so it is reported and the committed offsets are
trusted as before.

Pure bookkeeping, no Kafka: the Faust adapter (stream/pipeline/app.py, changelogs.py) and the
crash simulator (stream/crashsim/) drive the same object. Replay: a checkpoint written twice is
the same record; a later one supersedes it (compaction keeps each partition's last).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from stream.protocol.checkpoints import decode_checkpoint, encode_checkpoint

__all__ = ["AgentInputs", "Behind", "Checkpoints", "Restart"]

TopicPartition = tuple[str, int]


@dataclass(frozen=True, slots=True)
class AgentInputs:
    """An agent's input topics and the tables it writes: a table partition's state is what
    the agent made of those topics' same-numbered partitions."""

    name: str
    topics: tuple[str, ...]
    tables: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Behind:
    """A table partition restored behind its committed offset on one input (``checkpoint``
    None: the table came back with nothing at all)."""

    table: str
    partition: int
    topic: str
    checkpoint: int | None
    committed: int

    def describe(self) -> str:
        held = (
            "came back empty"
            if self.checkpoint is None
            else f"holds {self.topic}[{self.partition}] up to offset {self.checkpoint}"
        )
        return f"table {self.table}[{self.partition}] {held}, committed at {self.committed}"


@dataclass
class Restart:
    """Where each input partition starts: the committed offset, or lower where a table of its
    agent is behind it. ``behind``: every such table partition and input; ``unchecked``: table
    partitions with records but no checkpoint, whose inputs are committed (trusted)."""

    offsets: dict[TopicPartition, int] = field(default_factory=dict)
    behind: list[Behind] = field(default_factory=list)
    unchecked: list[tuple[str, int]] = field(default_factory=list)

    def rewound(self, committed: Mapping[TopicPartition, int]) -> dict[TopicPartition, int]:
        """The input partitions that start below their committed offset, and where."""
        return {tp: o for tp, o in self.offsets.items() if o < committed.get(tp, o)}


class Checkpoints:
    """The checkpoints of one worker's table partitions: what each flush writes, and where a
    newly assigned partition restarts."""

    def __init__(self, agents: Sequence[AgentInputs]) -> None:
        self.agents = tuple(agents)
        self._agent_of = {topic: agent for agent in self.agents for topic in agent.topics}
        self._agent_of_table = {table: agent for agent in self.agents for table in agent.tables}
        # The offsets every assigned input partition has been processed up to, as the last
        # commit (or the restart) left them.
        self._read: dict[TopicPartition, int] = {}

    def started(self, offsets: Mapping[TopicPartition, int]) -> None:
        """Reading starts at ``offsets`` (after an assignment): the state holds everything
        below them (what :meth:`restart` chose)."""
        for tp, offset in offsets.items():
            if tp[0] in self._agent_of:
                self._read[tp] = offset

    def forget(self, partitions: Iterable[int]) -> None:
        """These partitions were revoked."""
        gone = set(partitions)
        self._read = {tp: o for tp, o in self._read.items() if tp[1] not in gone}

    def records(
        self,
        chosen: Mapping[TopicPartition, int] | None,
        written: Collection[tuple[str, int]] = (),
    ) -> dict[str, dict[int, bytes]]:
        """The checkpoint records of a flush, per table and changelog partition: the value to
        write last in that partition's batch. ``chosen``: the offsets the commit after the
        flush commits (None: no commit follows); ``written``: the (table, partition)s the flush
        sends records to. Nothing changes here until :meth:`wrote` says the flush arrived."""
        chosen = chosen or {}
        read = {**self._read, **{tp: o for tp, o in chosen.items() if tp[0] in self._agent_of}}
        due: set[tuple[AgentInputs, int, str]] = set()
        for (topic, partition), offset in chosen.items():
            agent = self._agent_of.get(topic)
            if agent is not None and self._read.get((topic, partition)) != offset:
                due.update((agent, partition, table) for table in agent.tables)
        for table, partition in written:
            agent = self._agent_of_table.get(table)
            if agent is not None:
                due.add((agent, partition, table))
        out: dict[str, dict[int, bytes]] = {}
        for agent, partition, table in due:
            offsets = {t: read[t, partition] for t in agent.topics if (t, partition) in read}
            if offsets:
                out.setdefault(table, {})[partition] = encode_checkpoint(offsets)
        return out

    def wrote(self, chosen: Mapping[TopicPartition, int] | None) -> None:
        """The flush with :meth:`records` of ``chosen`` reached every changelog: the state
        holds everything below those offsets. (After a flush that failed the last ones stay,
        and the next flush writes the checkpoints again.)"""
        for tp, offset in (chosen or {}).items():
            if tp[0] in self._agent_of:
                self._read[tp] = offset

    def restart(
        self,
        committed: Mapping[TopicPartition, int],
        read: Callable[[str, int], bytes | None],
        empty: Callable[[str, int], bool],
    ) -> Restart:
        """Where each of ``committed``'s input partitions starts, given each table partition's
        checkpoint (``read(table, partition)``: its value, None without one) and whether it
        came back with no record at all (``empty``)."""
        restart = Restart(offsets=dict(committed))
        partitions = sorted({p for (topic, p) in committed if topic in self._agent_of})
        for agent in self.agents:
            for partition in partitions:
                inputs = [(t, partition) for t in agent.topics if (t, partition) in committed]
                if not inputs or not any(committed[tp] > 0 for tp in inputs):
                    continue
                held = {table: _decoded(read(table, partition)) for table in agent.tables}
                gone = {table: empty(table, partition) for table in agent.tables}
                if all(h is None for h in held.values()) and not all(gone.values()):
                    # Records, none of them checkpoints: written before checkpoints existed.
                    restart.unchecked.extend(
                        (table, partition) for table in agent.tables if not gone[table]
                    )
                    continue
                for table, found in held.items():
                    if found is None and not gone[table]:
                        restart.unchecked.append((table, partition))
                        continue
                    for tp in inputs:
                        # A table that came back empty is read again from the inputs' start.
                        at = 0 if found is None else found.get(tp[0])
                        if at is not None and at < committed[tp]:
                            cp = None if found is None else at
                            restart.behind.append(
                                Behind(table, partition, tp[0], cp, committed[tp])
                            )
                            restart.offsets[tp] = min(restart.offsets[tp], at)
        return restart


def _decoded(raw: bytes | None) -> dict[str, int] | None:
    if raw is None:
        return None
    try:
        return decode_checkpoint(raw)
    except ValueError:
        return None
