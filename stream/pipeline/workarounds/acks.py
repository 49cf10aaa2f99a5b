"""Leaving a batch unacked when it is abandoned (the worker stops, a rebalance cancels it).

Faust's ``Stream.take_events`` acks every event of a batch in a ``finally`` block, so a batch
whose agent raised or was cancelled is acked as if it had been processed, and its offsets are
committed with the next commit (faust-streaming 0.15.x; platform notes: "Agent exceptions ack
the failing event"; upstream issue 606 is the same mechanism with concurrency). A batch cut off
while its outputs were still being sent would be skipped for good.

:func:`withhold_acks` marks the batch's messages as acked *without* telling the consumer:
``Message.ack`` then does nothing, the consumer never records those offsets, and its commits
stop below the first of them (with workarounds/headgap.py: Faust alone commits past a withheld
batch at the head of a partition never committed, or past one withheld record). The
partition's next owner (or this worker, after the stall watchdog seeks back) reads the batch
again; every handler is idempotent.

Upstream: https://github.com/faust-streaming/faust/issues/189 (acks despite ``noack``),
https://github.com/faust-streaming/faust/issues/315, and the unmerged
https://github.com/faust-streaming/faust/pull/192 (a ``take`` acked by hand).

Written for faust-streaming 0.15.3, aiokafka 0.14.0, mode-streaming 0.7.1, where
``Message.ack`` checks ``Message.acked`` before it calls ``Consumer.ack``.
tests/unit/pipeline/workarounds/test_acks.py fails if that stops being true, and when Faust's
``take_events`` no longer acks its batch in a ``finally`` around the ``yield`` (then this may no
longer be needed).

Failure and replay: nothing is sent; the withheld batch is read again by whoever owns the
partitions next.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from faust.types import EventT

__all__ = ["withhold_acks"]


def withhold_acks(events: Iterable[EventT[Any]]) -> None:
    """Make Faust's later acks of ``events`` no-ops, so their offsets are never committed."""
    for event in events:
        event.message.acked = True
