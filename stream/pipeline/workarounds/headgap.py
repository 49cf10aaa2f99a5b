"""Never committing past a record that was not processed.

Faust commits, per partition, the end of the first run of consecutive acked offsets
(``Consumer._new_offset``). Before that it checks that the run starts where the partition's
committed offset (the next offset to read) is, but the check has two holes:

- it runs only when the committed offset is truthy (``if committed_offset:``): for a partition
  never committed (None), committed at 0, or between a revocation and the next seek (Faust
  forgets the committed offsets of revoked partitions first, then waits for the streams and
  commits), any run is committed, wherever it starts. Acks 5 and 6 with 0 to 4 unacked (a
  batch whose acks are withheld, workarounds/acks.py; a record dropped while a rebalance
  suspended the flow, watchdog.py) commit 7, and 0 to 4 are never read again by anyone;
- it tolerates a head gap of one record (``min(acked) - committed > 1``): with 10 committed
  and 11 acked, 12 is committed and record 10 is skipped for good;
- and it counts as done every offset its fetch loop jumped over (``Consumer._add_gap``, meant
  for holes in a compacted or transactional log): when a record arrives past the read offset
  Faust last set (after a seek back to the commit, a record fetched from further on still
  comes), the records in between are marked done without ever reaching the agent, and
  committed past. A chaos run caught it: ``match-finished[0]`` committed at 3, a record at 16
  delivered next, 4 to 15 marked done; the finishes at 14 and 15 were never processed and
  their matches never rated.

A worker killed in its first seconds leaves its partitions never committed (the first hole);
the chaos runs of issue 15 caught a replacement going through the second (docs/decisions.md,
bugs found by chaos, item 5). A commit past unacked records leaves nothing for the stall
watchdog to see (its position is the commit) and nothing to warn about.

With :func:`patch_head_gap` only acked offsets count (jumped-over ones do not: the
pipeline's inputs are neither compacted nor transactional, so their offsets have no holes), and
a run is committed only if it starts exactly at the committed offset, or, with none, at the
log's start (0, or the start the seek found: workarounds/committed.py reports it as the
committed offset of a partition it rewinds). A partition whose acked offsets do not all follow
its commit without a hole is held back there: :func:`held_back` says since when, and the stall
watchdog seeks a partition held back for long back to its commit, so the records never
processed are read again without a restart; whoever reads it next starts from there anyway.
A topic with real holes in its offsets would hold its commits back and be re-read every
15 s; do not feed such a topic to the pipeline.

Upstream: https://github.com/faust-streaming/faust/issues/606 (commits past an in-flight
message, the same function) and https://github.com/faust-streaming/faust/issues/629 (records
dropped during a rebalance); none filed for the head check itself.

Written for faust-streaming 0.15.3, aiokafka 0.14.0, mode-streaming 0.7.1.
tests/unit/pipeline/workarounds/test_head_gap.py fails when Faust stops committing past such a
head gap or jumped-over records (remove this) or when the patch stops holding the commit back.

Failure: none of its own (it reads the consumer's bookkeeping). Replay: a commit held back
means records after the last commit are read again; every handler is idempotent.
"""

from __future__ import annotations

import functools
import time
from typing import Any

from faust.transport.consumer import Consumer
from faust.types import TP

__all__ = ["head_is_acked", "held_back", "patch_head_gap"]

# The consumer attribute holding, per partition, since when (time.monotonic) its commit has
# been held back.
HELD_BACK = "skillstream_held_back"


def head_is_acked(consumer: Any, tp: TP) -> bool:
    """Whether the lowest offset acked on ``tp`` is the partition's next offset to commit (or
    below it): its committed offset, or 0 without one."""
    lowest: int = min(consumer._acked[tp])
    start: int = consumer._committed_offset[tp] or 0
    return lowest <= start


def held_back(consumer: Any) -> dict[TP, float]:
    """Since when (``time.monotonic()``) each partition's commit has been held back by an
    unacked head; a partition leaves it at its next commit."""
    found: dict[TP, float] | None = getattr(consumer, HELD_BACK, None)
    if found is None:
        found = {}
        setattr(consumer, HELD_BACK, found)
    return found


def patch_head_gap() -> None:
    """Make Faust's consumer commit a partition only through offsets acked from its head, and
    never count jumped-over offsets as done (once per process)."""
    if hasattr(Consumer._new_offset, "__wrapped__"):
        return
    original = Consumer._new_offset
    original_gap = Consumer._add_gap

    @functools.wraps(original)
    def new_offset(self: Any, tp: TP) -> int | None:
        if self._acked[tp] and not head_is_acked(self, tp):
            held_back(self).setdefault(tp, time.monotonic())
            return None
        result: int | None = original(self, tp)
        if self._acked[tp]:
            # Acked offsets left above the run: a hole of records never processed.
            held_back(self).setdefault(tp, time.monotonic())
        else:
            held_back(self).pop(tp, None)
        return result

    @functools.wraps(original_gap)
    async def add_gap(self: Any, tp: TP, offset_from: int, offset_to: int) -> None:
        return None

    Consumer._new_offset = new_offset  # type: ignore[method-assign]
    Consumer._add_gap = add_gap  # type: ignore[method-assign]
