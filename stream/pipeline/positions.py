"""Where reading continues on each input partition, and the rule that every record is processed
exactly once, in offset order, per partition.

Why: every promise of the pipeline rests on Kafka's per-partition order. A watermark promises
that the joins sent before it on the same partition have arrived; a rating record says which
results were applied before; a commit says that everything below it was processed. The
framework under the agents does not keep that order by itself: in the first milliseconds after
an assignment Faust (faust-streaming 0.15.3) can pass a partition's next record to the agent
while the one before it, fetched just before Faust sought the partitions to their commits,
never reaches the agent and is never acked (seen on the local broker: ``match-finished[0]``
committed at 21, record 21 fetched and put in the agent's queue, never taken out of it, record
22 processed next). Processed in that order, a snapshot can go out before an older join of the
player has arrived, and the commit stays held back at the lost record until the stall watchdog
reads it again, redoing everything since the commit: the wedge and the unbounded redo window of
issue 28.

So the batch runner checks every record against the partition's *position*, the next offset it
must process, before it processes anything:

- the record at the position is processed, and the position moves past it when the batch's
  outputs are delivered and its state written;
- a record below the position was processed already (the framework read the partition again
  from its commit): it is skipped, its effects are in the state;
- a record above the position means the ones between were lost on the way: it is not
  processed, nor any later record of the partition in the batch, and the partition is read
  again from the position (``rewind``) at once;
- a partition whose position is not known yet (an assignment whose seek to the committed
  offsets has not finished) processes nothing until it is, and is read again from there once it
  is known.

The position starts where the consumer last sought the partition to its committed offset (or to
the log's start when the group never committed it) and is forgotten when the partition is
revoked. Offsets committed for a partition are never above its position
(stream/pipeline/workarounds/beforecommit.py), so a crash at any moment resumes at or below it.

Pure bookkeeping: no Kafka, no clock. The Faust adapter feeds it the seeks and acts on the
rewinds; the in-memory harness does the same with lists.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

__all__ = [
    "RESEEK_SECONDS",
    "SAY_AGAIN_SECONDS",
    "Admission",
    "InputPositions",
    "Positioned",
    "Reseeks",
]

TopicPartition = tuple[str, int]

# A partition read again from the same offset is sought again after this long if the gap is
# still there. Why at all: Faust (faust-streaming 0.15.3) drops a record below the partition's
# read offset and sets that offset from every record it hands over, so records fetched before a
# seek (past the gap) can undo it (seen on the local broker, 2026-12-06: after a fail-over, a
# gap's first seek undone and the next one, a second later, holding). Since 2026-12-07
# stream/pipeline/workarounds/unread.py keeps the first seek; this stays for the races that
# module leaves open. Why not sooner: every record fetched before the seek shows the same gap,
# and each seek discards what the consumer had fetched since.
RESEEK_SECONDS = 0.2
# A gap still there after seeks is logged and counted again at most this often.
SAY_AGAIN_SECONDS = 1.0


class Positioned(Protocol):
    """What the positions need of a record: where it comes from and its offset."""

    @property
    def topic(self) -> str: ...

    @property
    def partition(self) -> int: ...

    @property
    def offset(self) -> int: ...


M = TypeVar("M", bound=Positioned)


@dataclass
class Admission(Generic[M]):
    """What a batch may process, in the batch's order, and what happens to the rest.

    ``accepted``: exactly the next records of their partitions, in offset order. ``repeated``:
    records processed before (acknowledge them, nothing else). ``held``: records not processed
    now and not to be acknowledged (a gap before them, or their partition's start unknown): the
    partition is read again. ``rewind``: per partition after a gap, the offset to read it again
    from; ``restart``: the same for partitions whose records came before their start was known
    (routine in the first milliseconds after an assignment). ``reached``: per partition, the
    position once the accepted records are done.
    """

    accepted: list[M] = field(default_factory=list)
    repeated: list[M] = field(default_factory=list)
    held: list[M] = field(default_factory=list)
    rewind: dict[TopicPartition, int] = field(default_factory=dict)
    restart: dict[TopicPartition, int] = field(default_factory=dict)
    reached: dict[TopicPartition, int] = field(default_factory=dict)


class InputPositions:
    """The next offset to process on every input partition this worker owns."""

    def __init__(self) -> None:
        self._next: dict[TopicPartition, int] = {}
        # Where the last seek of each partition left it, for a partition whose position is
        # not known yet (assigned, nothing processed since).
        self._starts: dict[TopicPartition, int] = {}
        # Partitions whose records came before their start was known (held), and the
        # rewinds owed to them once it is.
        self._unplaced: set[TopicPartition] = set()
        self._owed: dict[TopicPartition, int] = {}

    def sought(self, offsets: Mapping[TopicPartition, int]) -> None:
        """The consumer sought these partitions to these offsets (their commits, or the log's
        start). A partition with a position keeps it: the records between are repeats. One
        whose records were held before this is read again from here (the next batch's
        ``restart``), since what was fetched in between was dropped."""
        for tp, offset in offsets.items():
            if tp not in self._next:
                self._starts[tp] = offset
                if tp in self._unplaced:
                    self._unplaced.discard(tp)
                    self._owed[tp] = offset

    def forget(self, partitions: Iterable[int]) -> None:
        """These partitions were revoked: whoever reads them next starts from their commit."""
        gone = set(partitions)
        for positions in (self._next, self._starts, self._owed):
            for tp in [tp for tp in positions if tp[1] in gone]:
                del positions[tp]
        self._unplaced = {tp for tp in self._unplaced if tp[1] not in gone}

    def position(self, topic: str, partition: int) -> int | None:
        """The next offset to process on (topic, partition), if known."""
        tp = (topic, partition)
        found = self._next.get(tp)
        return self._starts.get(tp) if found is None else found

    def positions(self) -> dict[TopicPartition, int]:
        """Every known position (a copy)."""
        return {**self._starts, **self._next}

    def admit(self, records: Sequence[M]) -> Admission[M]:
        """Sort a batch's records (in the order they came) into those to process now and the
        rest; no position moves until :meth:`advance`."""
        admission: Admission[M] = Admission(restart=dict(self._owed))
        expected: dict[TopicPartition, int | None] = {}
        blocked: set[TopicPartition] = set()
        for record in records:
            tp = (record.topic, record.partition)
            if tp not in expected:
                expected[tp] = self.position(*tp)
            at = expected[tp]
            if at is None:
                admission.held.append(record)
                self._unplaced.add(tp)
            elif tp in blocked:
                admission.held.append(record)
            elif record.offset < at:
                admission.repeated.append(record)
            elif record.offset == at:
                admission.accepted.append(record)
                expected[tp] = at + 1
                admission.reached[tp] = at + 1
            else:
                admission.held.append(record)
                admission.rewind[tp] = at
                blocked.add(tp)
        return admission

    def advance(self, admission: Admission[M]) -> None:
        """The admitted records are done (outputs delivered, state written) and the rewinds
        handed over."""
        for tp, offset in admission.reached.items():
            self._next[tp] = offset
            self._starts.pop(tp, None)
        for tp, offset in admission.restart.items():
            if self._owed.get(tp) == offset:
                del self._owed[tp]


class Reseeks:
    """When a partition with a gap is sought again (:data:`RESEEK_SECONDS`), and when a seek
    for a reason is said (logged and counted): a new gap, or the same one last said at least
    :data:`SAY_AGAIN_SECONDS` before (the stall watchdog's seeks of a partition stuck at one
    position, seconds apart, are each said; the seeks between them are not)."""

    def __init__(self, wait: float = RESEEK_SECONDS, say_again: float = SAY_AGAIN_SECONDS) -> None:
        self.wait = wait
        self.say_again = say_again
        # Per partition read again: the offset, and when it was last sought / said.
        self._sought: dict[TopicPartition, tuple[int, float]] = {}
        self._said: dict[TopicPartition, tuple[int, float]] = {}

    def due(self, tp: TopicPartition, offset: int, now: float) -> bool:
        """Whether to seek ``tp`` to ``offset`` now."""
        return _after(self._sought, tp, offset, now, self.wait)

    def say(self, tp: TopicPartition, offset: int, now: float) -> bool:
        """Whether a seek of ``tp`` to ``offset`` made now is worth a line and a count."""
        return _after(self._said, tp, offset, now, self.say_again)

    def failed(self, tp: TopicPartition) -> None:
        """The seek of ``tp`` failed: the next gap seeks at once."""
        self._sought.pop(tp, None)

    def forget(self, partitions: Iterable[int]) -> None:
        """These partitions were revoked."""
        gone = set(partitions)
        for kept in (self._sought, self._said):
            for tp in [tp for tp in kept if tp[1] in gone]:
                del kept[tp]


def _after(
    last: dict[TopicPartition, tuple[int, float]],
    tp: TopicPartition,
    offset: int,
    now: float,
    wait: float,
) -> bool:
    """Whether ``tp`` at ``offset`` is new or was last seen ``wait`` or more before ``now``
    (then ``now`` is noted)."""
    seen = last.get(tp)
    if seen is not None and seen[0] == offset and now - seen[1] < wait:
        return False
    last[tp] = (offset, now)
    return True
