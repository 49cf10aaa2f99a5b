"""A bound on commands sent again and again: an identical command delivered ``limit`` times is
not sent again (counted, and said once per command).

Why it is safe: every receiver of a command is idempotent, and a copy Kafka has acknowledged
is either part of the receiver's durable state already (read before its last commit, flushed
before that commit) or will be read again by it after a crash (after its last commit). So a
further identical copy can change nothing, within one generation of the group: after a
rebalance a receiver may rebuild its state from an earlier flush, in which a copy it dropped
then (a snapshot read before the start it answers) matters again, so the counts start afresh
at every revocation (crash simulator seed 2905). Legitimate repeats are rare and few: a partition
read again after a crash or a rebalance sends the same snapshots and settlements once more.
Many identical copies can only come from a loop, which this stops and makes visible instead of
letting it run silently (issue 28: a replacement worker wrote 19,500 commands in 90 s with no
input).

Bounded memory: the last ``capacity`` distinct commands are remembered (a hash each), so a
repeat is recognised within roughly that many commands (seconds flat out, minutes when quiet).

Pure bookkeeping: the batch runner asks before packing and reports what was delivered.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable

__all__ = ["RepeatedCommands"]


class RepeatedCommands:
    def __init__(self, limit: int = 3, capacity: int = 65_536) -> None:
        self.limit = limit
        self.capacity = capacity
        self._delivered: OrderedDict[int, int] = OrderedDict()

    def allows(self, partition: int, encoded: bytes) -> bool:
        """Whether this command (its bytes, to this partition) may go out again."""
        return self._delivered.get(hash((partition, encoded)), 0) < self.limit

    def clear(self) -> None:
        """Forget every count (a rebalance: see BatchRunner.revoked)."""
        self._delivered.clear()

    def delivered(self, sent: Iterable[tuple[int, bytes]]) -> None:
        """Kafka has these (partition, command bytes)."""
        seen = self._delivered
        for item in sent:
            key = hash(item)
            seen[key] = seen.get(key, 0) + 1
            seen.move_to_end(key)
        while len(seen) > self.capacity:
            seen.popitem(last=False)
