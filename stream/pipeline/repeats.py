"""A watch on commands sent again and again: an identical command delivered ``limit`` times
within one generation of the group is counted when it goes out once more
(``repeated_commands``, said at most once a minute by stream/pipeline/packing.py).

Why it goes out anyway: a receiver's state can shrink within a generation, so a copy it read
before may not be a copy it still has. A settled match's entry is forgotten after the
retention; a copy of its start read later (the fleet's duplicate, or an older worker life's
forward still in the log) makes it anew, and only its players' answers settle it again, in
the same bytes as the copies read before. Until 2026-12-06 an identical command delivered
three times was held back, a defence against a loop of commands (issue 28, whose cause was
fixed where it arose: records processed only in their order, stream/pipeline/positions.py);
it held back those answers and left the match waiting for good (crash simulator seed 2664; and
seed 2905 before the counts started afresh at every revocation). Repeats of that kind are few
and end; a loop repeats without end, which the count shows and the alert
``SkillstreamCommandsRepeating`` (deploy/prometheus/rules.yml) reports.

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

    def repeated(self, partition: int, encoded: bytes) -> bool:
        """Whether this command (its bytes, to this partition) has been delivered ``limit``
        times already in this generation."""
        return self._delivered.get(hash((partition, encoded)), 0) >= self.limit

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
