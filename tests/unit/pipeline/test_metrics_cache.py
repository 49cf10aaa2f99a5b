"""The worker's metrics read a cache feed running beside it through ``watch_cache`` alone: zeros
before a feed is attached or started, the feed's figures after."""

from __future__ import annotations

from collections import Counter

from prometheus_client.parser import text_string_to_metric_families

from stream.cache.feed import FeedStats
from stream.offline.ratingdrift import DriftPoint, spread
from stream.pipeline.metrics import WorkerMetrics


def samples(metrics: WorkerMetrics) -> dict[str, float]:
    text = metrics.render().decode()
    return {s.name: s.value for f in text_string_to_metric_families(text) for s in f.samples}


def test_the_cache_figures_come_from_the_watched_feed() -> None:
    metrics = WorkerMetrics()
    metrics.refresh_cache()
    before = samples(metrics)
    assert before["skillstream_cache_written_total"] == 0
    assert before["skillstream_cache_lag_records"] == 0

    feed: list[FeedStats] = []
    metrics.watch_cache(lambda: feed[0] if feed else None)
    metrics.refresh_cache()  # attached, not started: still zeros, no error
    assert samples(metrics)["skillstream_cache_errors_total"] == 0

    feed.append(FeedStats(written=7, errors=2, lag_records=5))
    metrics.refresh_cache()
    after = samples(metrics)
    assert after["skillstream_cache_written_total"] == 7
    assert after["skillstream_cache_errors_total"] == 2
    assert after["skillstream_cache_lag_records"] == 5
    assert after["skillstream_cache_lag_seconds"] == 0


def test_the_feeds_dead_letters_by_kind_of_reason() -> None:
    metrics = WorkerMetrics()
    stats = FeedStats(dead_lettered=3, dead_letter_reasons=Counter(not_json=2, missing_field=1))
    metrics.watch_cache(lambda: stats)
    text = metrics.render().decode()
    got = {
        s.labels["reason"]: s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name == "skillstream_cache_dead_lettered_total"
    }
    assert got == {"not_json": 2, "missing_field": 1}


def test_the_drift_figures_are_the_feeds_last_reading_per_mode_and_stat() -> None:
    metrics = WorkerMetrics()
    stats = FeedStats()
    metrics.watch_cache(lambda: stats)
    text = metrics.render().decode()
    assert "skillstream_active_players{" not in text  # nothing read yet: no sample
    ratings = spread([1400.0, 1500.0, 1650.0])
    stats.drift["ranked"] = DriftPoint("ranked", 0.0, 3, ratings, spread([0.0, 10.0, 40.0]), 2)
    stats.season_started["ranked"] = 1_767_225_600.0
    found = {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for f in text_string_to_metric_families(metrics.render().decode())
        for s in f.samples
    }
    assert found[("skillstream_active_players", (("mode", "ranked"),))] == 3
    mean = ("skillstream_active_rating", (("mode", "ranked"), ("stat", "mean")))
    assert found[mean] == ratings.mean
    p90 = ("skillstream_active_rank_points", (("mode", "ranked"), ("stat", "p90")))
    assert found[p90] == 34.0
    assert found[("skillstream_season_started_seconds", (("mode", "ranked"),))] == 1_767_225_600
