"""The periodic ``counts:`` log line reads the Prometheus counters themselves (no parallel tally):
one total per counter and label, the figures ``/metrics`` serves."""

from __future__ import annotations

from collections import Counter

from stream.pipeline.metrics import WorkerMetrics


def test_the_totals_are_the_counters_by_label() -> None:
    metrics = WorkerMetrics()
    metrics.events_in.labels("match-started").inc(3)
    metrics.events_in.labels("match-finished").inc(2)
    metrics.count_outbox(Counter({"ratings_win": 4, "duplicate_starts": 1, "dead_lettered": 9}))
    totals = metrics.totals()
    assert totals["events_in{match-started}"] == 3
    assert totals["events_in{match-finished}"] == 2
    assert totals["ratings_applied{win}"] == 4
    assert totals["pipeline_events{duplicate_starts}"] == 1
    # Dead letters are counted by source when delivered, not from the outbox count.
    assert not any(name.startswith("dead_lettered") for name in totals)


def test_a_fresh_worker_counts_nothing_but_zeros_of_unlabelled_counters() -> None:
    # The cache feed's counters are always served (zeros until a feed runs beside the worker),
    # and the commits from the start.
    assert WorkerMetrics().totals() == {"cache_written": 0, "cache_errors": 0, "commits": 0}
