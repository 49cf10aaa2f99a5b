"""stream/bench/pipeline.py's backlog is dated after what was rated before it (an outage's
backlog), within the span a worker accepts, in the simulated history's order; a late one keeps
the history's own dates, months back."""

from __future__ import annotations

import asyncio
import time

from topic_values import topic_values

from stream.bench.pipeline import BACKLOG_SECONDS, publish_backlog
from stream.events import parse_time
from stream.local.stack import LocalStack


def test_the_backlog_is_dated_after_now_within_its_span_in_order() -> None:
    with LocalStack() as stack:
        before = time.time()
        asyncio.run(publish_backlog(stack.bootstrap_servers, 40, seed=2, players=4))
        starts = asyncio.run(topic_values(stack.bootstrap_servers, "match-started", 40))
    assert len(starts) == 40
    times = {str(e["match_id"]): parse_time(e["started_at"]) for e in starts}
    assert min(times.values()) >= before
    assert max(times.values()) <= before + BACKLOG_SECONDS + 5
    # The simulated history numbers its matches in order of play.
    ordered = sorted(times, key=lambda mid: int(mid.rsplit("-", 1)[1]))
    assert [times[m] for m in ordered] == sorted(times.values())


def test_a_late_backlog_keeps_the_historys_own_dates_before_now() -> None:
    """``--backlog-late``: every start months behind the wall clock, so behind event time."""
    with LocalStack() as stack:
        before = time.time()
        asyncio.run(publish_backlog(stack.bootstrap_servers, 40, seed=2, players=4, late=True))
        starts = asyncio.run(topic_values(stack.bootstrap_servers, "match-started", 40))
    assert len(starts) == 40
    assert max(parse_time(e["started_at"]) for e in starts) < before - 86_400
