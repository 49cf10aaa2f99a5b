"""Crash points: a worker that kills itself (SIGKILL) at a named point of its commit protocol.

For the soak harness (``skillstream soak``) and tests only. A kill from outside lands wherever
the worker happens to be; these land exactly between two effects whose order the guarantees
rest on (docs/guarantees.md, "What a crash can interrupt"):

=================  ==========================================================================
point              the worker dies...
=================  ==========================================================================
``processed``      after a batch was processed, before any of its outputs were sent
``delivering``     with the batch's outputs handed to the producer, before Kafka acked them
``written``        after the outputs were acked and the state changes held, before the flush
``flushing``       during the changelog flush: one table's writes sent, the others not
``flushed``        after the flush, before the offsets are committed
``committed``      right after a commit
``revoked``        in a rebalance, after the held writes were flushed, before the partitions go
=================  ==========================================================================

``SKILLSTREAM_CRASH_AT=point:n`` kills the worker the ``n``-th time it reaches ``point``,
counting from the first batch with a match event it processed (before that only ticks and
watermarks flow, and a crash there would land with nothing in flight); the points:
``stream.config.settings.CRASH_POINTS``. Unset, every call is one comparison.
"""

from __future__ import annotations

import os
import signal

__all__ = ["CrashPoints"]


class CrashPoints:
    """Counts the points reached and kills the process at the armed one
    (``Settings.crash_at``: the point and n)."""

    def __init__(self, armed: tuple[str, int] | None = None) -> None:
        self.armed = armed
        self.counts: dict[str, int] = {}
        # Set by the first batch with a match event: counting starts there.
        self.active = False

    def reached(self, point: str) -> None:
        if self.armed is None or point != self.armed[0] or not self.active:
            return
        count = self.counts[point] = self.counts.get(point, 0) + 1
        if count == self.armed[1]:
            os.kill(os.getpid(), signal.SIGKILL)
