"""stream/bench/pipeline.py's ``run_load`` stops waiting for ratings once the app that rates
them is gone, instead of waiting out its timeout."""

from __future__ import annotations

import asyncio
import time

from stream.bench.pipeline import last_rating_at, run_load
from stream.local.stack import LocalStack


def test_the_load_stops_waiting_when_nothing_can_rate() -> None:
    with LocalStack() as stack:
        started = time.monotonic()
        # No worker at all: nothing will ever rate these.
        run = asyncio.run(
            run_load(
                stack.bootstrap_servers,
                20,
                0.0,
                seed=3,
                players=10,
                timeout=120,
                alive=lambda: False,
            )
        )
        waited = time.monotonic() - started
    assert run.ratings == 0
    assert waited < 60  # the timeout was 120 s


def test_the_backlogs_reader_stops_waiting_when_nothing_can_rate() -> None:
    with LocalStack() as stack:
        started = time.monotonic()
        got, _last = asyncio.run(
            last_rating_at(stack.bootstrap_servers, {0: 0}, 40, timeout=120, alive=lambda: False)
        )
        waited = time.monotonic() - started
    assert got == 0
    assert waited < 60  # the timeout was 120 s
