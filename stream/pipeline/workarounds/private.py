"""Read-only accessors for the private state of Faust and aiokafka the worker needs.

What: whether the app has started (``App._started``), whether its consumer exists yet
(``App._consumer``: the public ``App.consumer`` *creates* it), the offsets the consumer last
committed (``Consumer._committed_offset``), the aiokafka producer under Faust's
(``Producer._ensure_producer()``), and when the aiokafka consumer under Faust's last had a
fetch answer for a partition (``last_poll_timestamp``, public in aiokafka, reached through the
consumer thread, ``_thread._ensure_consumer()``). Faust exposes none of them.

Why: readiness (/ready) must not build a consumer as a side effect of being asked, and the
stall watchdog (stream/pipeline/watchdog.py) needs the committed offset of a partition this
worker has not processed yet to see that records are waiting on it. The changelog flush
(stream/pipeline/changelogs.py) hands aiokafka whole record batches (``create_batch``,
``send_batch``), which Faust's producer cannot send: one future per batch instead of one per
record. A caught-up input partition's event-time bound is the clock as it stood when the
broker last answered for the partition (stream/pipeline/watermarks.py): Faust gives the end
(``highwater``) but not when it was given.

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

__all__ = [
    "ANSWER_SLACK",
    "committed_offsets",
    "consumer_exists",
    "fetched_end",
    "kafka_producer",
    "started",
]

# How long after the broker made a fetch answer the consumer may handle it (the way back over
# the network, decoding, Faust's consumer thread waiting for the interpreter): aiokafka dates
# an answer when it handles it, and :func:`fetched_end` dates it this much earlier. Each
# millisecond of it delays every watermark by one (0.05 s cost instant matches about 50 ms at
# the median, docs/benchmarks.md); a longer wait is left to the lateness (0.1 s by default).
ANSWER_SLACK = 0.01


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


def fetched_end(consumer: Any, tp: Any) -> tuple[int, float] | None:
    """The end (high watermark) of ``tp`` in the consumer's last fetch answer for it, and when
    the broker made that answer, at the latest (wall seconds, ``time.time``); None before any
    answer. Raises when ``tp`` is not assigned to the consumer.

    aiokafka dates an answer when it handles it (``last_poll_timestamp``, in milliseconds), a
    moment after the broker made it: the time given is ANSWER_SLACK before that. A consumer
    thread that takes longer to handle an answer leaves the difference to the lateness. The
    time is read before the end, and aiokafka sets the end before the time (``Fetcher.
    _proc_fetch_request``), so an answer handled between the two reads pairs a newer end with
    an older time, which only makes a bound resting on them lower."""
    kafka = consumer._thread._ensure_consumer()
    at = kafka.last_poll_timestamp(tp)
    end = kafka.highwater(tp)
    if at is None or end is None:
        return None
    return int(end), at / 1000.0 - ANSWER_SLACK
