"""stream/retry.py: one backoff policy and one outage log for every retry loop."""

from __future__ import annotations

import asyncio
import itertools
import logging
import time

import pytest

from stream.retry import MAX_DELAY_SECONDS, Backoff, Outage


def test_the_delay_doubles_from_a_tenth_to_five_seconds_and_resets() -> None:
    backoff = Backoff()
    delays = [backoff.next() for _ in range(9)]
    assert delays[:4] == pytest.approx([0.1, 0.2, 0.4, 0.8])
    assert max(delays) == MAX_DELAY_SECONDS == delays[-1]
    assert all(b >= a for a, b in itertools.pairwise(delays))
    backoff.reset()
    assert backoff.next() == pytest.approx(0.1)


async def test_a_wait_ends_when_the_loop_is_told_to_stop() -> None:
    backoff = Backoff(first=30.0)
    stop = asyncio.Event()
    stop.set()
    began = time.monotonic()
    await backoff.wait(stop)
    assert time.monotonic() - began < 5.0
    assert backoff.delay == MAX_DELAY_SECONDS  # the wait counted as one attempt


def test_an_outage_says_when_it_starts_and_ends_never_per_attempt(
    caplog: pytest.LogCaptureFixture,
) -> None:
    outage = Outage("outputs: Kafka send failed", logging.getLogger("test.retry"))
    with caplog.at_level(logging.WARNING, "test.retry"):
        for _ in range(5):
            outage.failed("KafkaConnectionError()")
        outage.recovered()
        outage.recovered()  # no outage: nothing to say
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2
    assert lines[0] == (
        "outputs: Kafka send failed: KafkaConnectionError(); retrying with backoff until it works"
    )
    assert lines[1].startswith("outputs: Kafka send failed: working again after ")
    assert lines[1].endswith("(5 failed attempts)")
    assert outage.since is None and outage.failures == 0


def test_an_outage_keeps_a_documented_wording(caplog: pytest.LogCaptureFixture) -> None:
    outage = Outage(
        "cache feed",
        logging.getLogger("test.retry"),
        start="{what}: Redis write failed ({error}); retrying with backoff",
        end="{what}: Redis is back after {seconds:.1f} s; writing the backlog",
    )
    with caplog.at_level(logging.WARNING, "test.retry"):
        outage.failed("Connection refused {0}")  # braces in an error are its own text
        assert outage.since is not None
        outage.recovered()
    start, end = (r.getMessage() for r in caplog.records)
    assert start == "cache feed: Redis write failed (Connection refused {0}); retrying with backoff"
    assert end.startswith("cache feed: Redis is back after 0.0 s")
