"""The prediction-quality gauges: the cache feed's windows as ``/metrics`` serves them, per
mode and per calibration bucket."""

from __future__ import annotations

import math

from prometheus_client.parser import text_string_to_metric_families

from stream.cache.feed import FeedStats
from stream.pipeline.metrics import WorkerMetrics


def samples(metrics: WorkerMetrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    text = metrics.render().decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def test_no_feed_no_quality_samples() -> None:
    names = {name for name, _ in samples(WorkerMetrics())}
    assert not {n for n in names if n.startswith("skillstream_prediction_")}


def test_the_gauges_are_the_feeds_windows() -> None:
    stats = FeedStats()
    for expected, outcome in [(0.8, "win"), (0.8, "loss"), (0.25, "draw"), (0.3, "abandoned")]:
        stats.quality.observe_event(
            {"mode": "ranked-1v1", "expected_score": expected, "outcome": outcome}
        )
    stats.quality.observe_event({"mode": "arena-ffa", "expected_score": 0.5, "outcome": "win"})
    metrics = WorkerMetrics()
    metrics.watch_cache(lambda: stats)
    got = samples(metrics)
    summary = stats.quality.summaries()["ranked-1v1"]
    mode = (("mode", "ranked-1v1"),)
    assert got["skillstream_prediction_observations", mode] == 3
    assert math.isclose(got["skillstream_prediction_log_loss", mode], summary.log_loss)
    assert math.isclose(got["skillstream_prediction_brier", mode], summary.brier)
    assert math.isclose(
        got["skillstream_prediction_calibration_error", mode], summary.calibration_error
    )
    assert got["skillstream_prediction_observations", (("mode", "arena-ffa"),)] == 1
    high = (("bucket", "0.8-0.9"), ("mode", "ranked-1v1"))
    assert got["skillstream_prediction_calibration_observations", high] == 2
    assert math.isclose(got["skillstream_prediction_calibration_predicted", high], 0.8)
    assert got["skillstream_prediction_calibration_observed", high] == 0.5
    # Every bucket has a count; an empty one has no mean rather than a NaN sample.
    empty = (("bucket", "0.5-0.6"), ("mode", "ranked-1v1"))
    assert got["skillstream_prediction_calibration_observations", empty] == 0
    assert ("skillstream_prediction_calibration_predicted", empty) not in got
    buckets = {
        labels for name, labels in got if name == "skillstream_prediction_calibration_observations"
    }
    assert len(buckets) == 2 * 10
