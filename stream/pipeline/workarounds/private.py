"""Read-only accessors for the private state of Faust and aiokafka the worker needs.

What: whether the app has started (``App._started``), whether its consumer exists yet
(``App._consumer``: the public ``App.consumer`` *creates* it), the offsets the consumer last
committed (``Consumer._committed_offset``), and the aiokafka producer under Faust's
(``Producer._ensure_producer()``). Faust exposes none of them.

Why: readiness (/ready) must not build a consumer as a side effect of being asked, and the
stall watchdog (stream/pipeline/watchdog.py) needs the committed offset of a partition this
worker has not processed yet to see that records are waiting on it. The changelog flush
(stream/pipeline/changelogs.py) hands aiokafka whole record batches (``create_batch``,
``send_batch``), which Faust's producer cannot send: one future per batch instead of one per
record.

Upstream: none found for public accessors of these (searched 2026-11-25).

Written for faust-streaming 0.15.3, aiokafka 0.14.0, mode-streaming 0.7.1.
tests/unit/pipeline/workarounds/test_private.py fails when one of the attributes is gone or
changes its type.

Failure and replay: reads only; an attribute that is missing reads as "not started", "no
consumer" or "nothing committed".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["committed_offsets", "consumer_exists", "kafka_producer", "standby_lag", "started"]


def started(app: Any) -> bool:
    """Whether the Faust app has started (without creating anything)."""
    event = getattr(app, "_started", None)
    return bool(event is not None and event.is_set())


def consumer_exists(app: Any) -> bool:
    """Whether the app's consumer has been created (``app.consumer`` would create it)."""
    return bool(getattr(app, "_consumer", None))


def committed_offsets(consumer: Any) -> Mapping[Any, int]:
    """The offsets the consumer last committed, per topic partition (empty before any)."""
    committed: Mapping[Any, int] = getattr(consumer, "_committed_offset", {})
    return committed


def kafka_producer(app: Any) -> Any:
    """The started aiokafka producer under the app's Faust producer (raises Faust's
    ``NotReady`` before it starts)."""
    return app.producer._ensure_producer()


def standby_lag(app: Any) -> int:
    """Changelog records the app's standby table partitions still have to read to reach the
    ends their changelogs had when they were assigned (0 before any standby is assigned).

    Faust's recovery keeps, per standby partition, the last offset read (-1 or None: nothing
    yet) and the last offset there was at assignment; its own ``standby_remaining`` leaves out
    the partitions not read at all yet, which are the furthest behind."""
    tables = vars(app).get("tables")  # a cached property: never create it here
    recovery = getattr(tables, "_recovery", None)
    if recovery is None:
        return 0
    offsets = recovery.standby_offsets
    behind = 0
    for tp, last in recovery.standby_highwaters.items():
        read = offsets.get(tp)
        behind += max(0, last - (-1 if read is None else read))
    return behind
