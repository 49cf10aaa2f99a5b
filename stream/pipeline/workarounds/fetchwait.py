"""The worker consumer's fetch wait, which Faust hard-codes.

What: Faust's ``AIOKafkaConsumerThread._create_worker_consumer`` builds the worker's consumer with
``fetch_max_wait_ms=1500`` and no setting to change it.

Why: aiokafka leaves a partition that still has buffered records out of the fetch in flight, so
a command arriving on it waits for that fetch to return: up to 1.5 s per hop when the other
partitions are quiet, and every hop of the pipeline pays it (platform notes: a group consumer
over several topics waits out the fetch, median 130 ms at 500 ms, 9 ms at 20 ms). The patched
factory sets the consumer's wait to SKILLSTREAM_FETCH_MAX_WAIT_MS (50 ms by default).

Upstream: none found (searched 2026-11-25): faust-streaming has no setting for it;
``broker_max_poll_interval`` and friends are configurable, the fetch wait is not.

Written for faust-streaming 0.15.3, aiokafka 0.14.0, mode-streaming 0.7.1.
tests/unit/pipeline/workarounds/test_fetch_wait.py fails when Faust stops hard-coding 1500 ms
(remove this) or when the patched consumer no longer has the wait set.

Failure and replay: nothing is sent or stored; a consumer built before the patch keeps Faust's
wait, the next one built (after a rebalance or restart) gets this one.
"""

from __future__ import annotations

import functools
from typing import Any

from faust.transport.drivers import aiokafka as aiokafka_driver

__all__ = ["FAUST_FETCH_MAX_WAIT_MS", "patch_fetch_wait"]

# What faust-streaming 0.15.3 passes to aiokafka for the worker's consumer.
FAUST_FETCH_MAX_WAIT_MS = 1500


def patch_fetch_wait(wait_ms: int) -> None:
    """Build the worker's consumers with ``wait_ms`` as their fetch wait (patched once per
    process; a later call changes the wait of the consumers built after it)."""
    thread = aiokafka_driver.AIOKafkaConsumerThread
    # The value lives on the patched class: the factory reads it when it builds a consumer.
    thread.skillstream_fetch_max_wait_ms = wait_ms  # type: ignore[attr-defined]
    if hasattr(thread._create_worker_consumer, "__wrapped__"):
        return
    original = thread._create_worker_consumer

    @functools.wraps(original)
    def create(self: Any, transport: Any) -> Any:
        consumer = original(self, transport)
        consumer._fetch_max_wait_ms = type(self).skillstream_fetch_max_wait_ms
        return consumer

    thread._create_worker_consumer = create  # type: ignore[method-assign]
