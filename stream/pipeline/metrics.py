"""The worker's Prometheus metrics (served at ``/metrics`` on SKILLSTREAM_WEB_PORT).

One registry per worker, so tests and several pipelines in one process never share counters.
Names and meanings are listed in docs/operations.md (what to watch).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Protocol

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily
from prometheus_client.registry import Collector

from stream.offline.ratingdrift import DriftPoint
from stream.quality import PredictionQuality

__all__ = ["CONTENT_TYPE", "CacheStats", "WorkerMetrics"]

# Prometheus' text format 0.0.4; aiohttp adds the charset itself and refuses one given here.
CONTENT_TYPE = "text/plain; version=0.0.4"

# From a few ms (a fast broker) to the 2 h match timeout's scale of trouble.
LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)

# Outbox counts with a metric of their own; every other count goes to skillstream_events_total.
_OUTCOME_PREFIX = "ratings_"


class CacheStats(Protocol):
    """What the metrics read of a cache feed running beside the worker (its ``FeedStats``)."""

    @property
    def written(self) -> int: ...

    @property
    def errors(self) -> int: ...

    @property
    def lag_records(self) -> int: ...

    def lag_seconds(self) -> float: ...

    @property
    def dead_letter_reasons(self) -> Mapping[str, int]: ...

    @property
    def quality(self) -> PredictionQuality: ...

    @property
    def drift(self) -> Mapping[str, DriftPoint]: ...

    @property
    def season_started(self) -> Mapping[str, float]: ...


class WorkerMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.events_in = Counter(
            "skillstream_events_in_total", "Records consumed, by topic.", ["topic"], registry=r
        )
        self.events_out = Counter(
            "skillstream_events_out_total", "Records produced, by topic.", ["topic"], registry=r
        )
        self.dead_lettered = Counter(
            "skillstream_dead_lettered_total",
            "Inputs sent to the dead-letter topic, by the topic they came from and the kind of"
            " reason (stream/deadletters.py REASON_KINDS).",
            ["source", "reason"],
            registry=r,
        )
        self.ratings = Counter(
            "skillstream_ratings_applied_total",
            "Rating changes applied, by outcome (win, loss, draw, abandoned, timeout).",
            ["outcome"],
            registry=r,
        )
        self.pipeline_events = Counter(
            "skillstream_pipeline_events_total",
            "What the processors saw: duplicates, finishes without a start, timed-out matches,"
            " cancelled players, late snapshots, forwarded events, late events (published"
            " later than SKILLSTREAM_EVENT_LATENESS_SECONDS allows), events carrying fields"
            " skillstream does not read (unknown_fields).",
            ["kind"],
            registry=r,
        )
        self.latency = Histogram(
            "skillstream_rating_latency_seconds",
            "From match-finished produced (its Kafka timestamp) to rating-changed acknowledged.",
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.batch_seconds = Histogram(
            "skillstream_batch_seconds",
            "Time to process and deliver one batch, by agent.",
            ["agent"],
            registry=r,
        )
        self.consumer_lag = Gauge(
            "skillstream_consumer_lag",
            "Records not yet processed on the partitions this worker owns, by topic.",
            ["topic"],
            registry=r,
        )
        self.cache_lag = Gauge(
            "skillstream_cache_lag_records",
            "Rating changes in Kafka not yet written to Redis (this worker's partitions).",
            registry=r,
        )
        self.cache_lag_seconds = Gauge(
            "skillstream_cache_lag_seconds",
            "Seconds since the oldest rating change not yet in Redis was published (0: caught up).",
            registry=r,
        )
        # The cache feed counts for itself (it also runs without a worker, and beside the rating
        # app, not in it); read at scrape time. None: no feed runs in this process (yet).
        self.cache_stats: Callable[[], CacheStats | None] = lambda: None
        r.register(_CacheCounters(self))
        r.register(_PredictionQuality(self))
        r.register(_RatingDrift(self))
        self.ready = Gauge(
            "skillstream_ready",
            "1 when the worker has its partitions and its tables are recovered.",
            registry=r,
        )
        self.commits = Counter(
            "skillstream_commits_total",
            "Offset commits that went through (every SKILLSTREAM_COMMIT_INTERVAL_SECONDS while"
            " records are processed).",
            registry=r,
        )
        self.stuck = Gauge(
            "skillstream_stuck_waits",
            "Matches, players and match partitions waiting longer than"
            " SKILLSTREAM_STUCK_SECONDS for what should come in seconds (stream/pipeline/"
            "liveness.py), by kind (match, player, event_time).",
            ["kind"],
            registry=r,
        )
        self.stuck_total = Counter(
            "skillstream_stuck_waits_found_total",
            "Waits found stuck, each counted once, by kind.",
            ["kind"],
            registry=r,
        )
        self.tables_behind = Counter(
            "skillstream_tables_restored_behind_total",
            "Table partitions restored behind the committed offsets of an input (a changelog"
            " shorter than written), each read again from its checkpoint, by table"
            " (stream/pipeline/checkpoints.py).",
            ["table"],
            registry=r,
        )
        self.tables_unchecked = Counter(
            "skillstream_tables_unchecked_total",
            "Table partitions restored without a checkpoint although their inputs are committed"
            " (written by an older version, or the whole changelog lost), by table.",
            ["table"],
            registry=r,
        )
        self.refused_partitions = Gauge(
            "skillstream_refused_partitions",
            "Input partitions refused: a table behind records the inputs no longer hold;"
            " nothing of them is processed or committed.",
            registry=r,
        )
        self.uncommitted_seconds = Gauge(
            "skillstream_uncommitted_seconds",
            "Seconds since the oldest batch processed and not yet covered by a commit (0: none):"
            " how far back a crash now would make the worker's successor start again.",
            registry=r,
        )

    def count_outbox(self, counts: Mapping[str, int]) -> None:
        for name, n in counts.items():
            if not n:
                continue
            if name.startswith(_OUTCOME_PREFIX):
                self.ratings.labels(name[len(_OUTCOME_PREFIX) :]).inc(n)
            elif name != "dead_lettered":  # counted by source in dead_lettered
                self.pipeline_events.labels(name).inc(n)

    def totals(self) -> dict[str, int]:
        """Every counter's total per label, as ``/metrics`` serves them: the periodic log line's
        figures (``events_in{match-started}``, ``ratings_applied{win}``, ...)."""
        totals: dict[str, int] = {}
        for family in self.registry.collect():
            if family.type != "counter":
                continue
            for sample in family.samples:
                if not sample.name.endswith("_total"):
                    continue
                name = sample.name.removeprefix("skillstream_").removesuffix("_total")
                label = ",".join(sample.labels.values())
                totals[f"{name}{{{label}}}" if label else name] = int(sample.value)
        return totals

    def watch_cache(self, stats: Callable[[], CacheStats | None]) -> None:
        """Read the cache feed's figures from ``stats`` at every scrape."""
        self.cache_stats = stats

    def refresh_cache(self) -> None:
        stats = self.cache_stats()
        if stats is not None:
            self.cache_lag.set(stats.lag_records)
            self.cache_lag_seconds.set(stats.lag_seconds())

    def render(self) -> bytes:
        return generate_latest(self.registry)


class _CacheCounters(Collector):
    def __init__(self, metrics: WorkerMetrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterator[CounterMetricFamily]:
        stats = self.metrics.cache_stats()
        written, errors = (0, 0) if stats is None else (stats.written, stats.errors)
        dead = CounterMetricFamily(
            "skillstream_cache_dead_lettered",
            "Rating changes the cache feed sent to the dead-letter topic, by kind of reason.",
            labels=["reason"],
        )
        for reason, n in ({} if stats is None else stats.dead_letter_reasons).items():
            dead.add_metric([reason], n)
        yield dead
        yield CounterMetricFamily(
            "skillstream_cache_written",
            "Rating changes the cache writer applied to Redis.",
            value=written,
        )
        yield CounterMetricFamily(
            "skillstream_cache_errors",
            "Failed attempts to write a batch to Redis (each is retried).",
            value=errors,
        )


class _PredictionQuality(Collector):
    """The cache feed's prediction-quality windows (stream/quality.py), per mode, computed at
    scrape time. Each worker scores the rating changes of its own partitions: a dashboard
    averages the workers weighted by ``skillstream_prediction_observations``."""

    def __init__(self, metrics: WorkerMetrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterator[GaugeMetricFamily]:
        stats = self.metrics.cache_stats()
        summaries = {} if stats is None else stats.quality.summaries()
        window = f"the last {stats.quality.window} scored" if stats is not None else "the latest"
        per_mode = {
            name: GaugeMetricFamily(
                f"skillstream_prediction_{name}",
                f"{text}, over {window} rating changes of the mode on this worker.",
                labels=["mode"],
            )
            for name, text in [
                ("observations", "Rating changes scored (win, loss, draw)"),
                ("log_loss", "Mean log loss of the expected score against the outcome"),
                ("brier", "Mean Brier score of the expected score against the outcome"),
                (
                    "calibration_error",
                    "Mean gap between a calibration bucket's predicted and observed rate",
                ),
            ]
        }
        per_bucket = {
            name: GaugeMetricFamily(
                f"skillstream_prediction_calibration_{name}",
                f"{text}, by bucket of predicted probability, over {window} rating changes.",
                labels=["mode", "bucket"],
            )
            for name, text in [
                ("observations", "Rating changes scored"),
                ("predicted", "Mean expected score"),
                ("observed", "Observed score (a draw counts half)"),
            ]
        }
        for mode, summary in summaries.items():
            per_mode["observations"].add_metric([mode], summary.observations)
            per_mode["log_loss"].add_metric([mode], summary.log_loss)
            per_mode["brier"].add_metric([mode], summary.brier)
            per_mode["calibration_error"].add_metric([mode], summary.calibration_error)
            for bucket in summary.buckets:
                labels = [mode, bucket.label]
                per_bucket["observations"].add_metric(labels, bucket.count)
                if bucket.count:  # an empty bucket has no mean: no sample rather than NaN
                    per_bucket["predicted"].add_metric(labels, bucket.predicted)
                    per_bucket["observed"].add_metric(labels, bucket.observed)
        yield from per_mode.values()
        yield from per_bucket.values()


class _RatingDrift(Collector):
    """Where each mode's active players sit (stream/cache/drift.py), as the cache feed last
    read it from the boards. Every worker reads the same Redis, so every worker reports the
    same figures: a query takes ``max by (mode, stat)``, never a sum."""

    def __init__(self, metrics: WorkerMetrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterator[GaugeMetricFamily]:
        stats = self.metrics.cache_stats()
        drift = {} if stats is None else stats.drift
        starts = {} if stats is None else stats.season_started
        active = GaugeMetricFamily(
            "skillstream_active_players",
            "Players on the mode's current boards (those who played in the season, within the"
            " cache's inactivity window), as the cache feed last read them.",
            labels=["mode"],
        )
        spreads = {
            name: GaugeMetricFamily(
                f"skillstream_active_{name}",
                f"The mean and quantiles (stat: mean, p10, p25, p50, p75, p90) of the {text} of"
                " the mode's active players, as the cache feed last read them.",
                labels=["mode", "stat"],
            )
            for name, text in [("rating", "ratings"), ("rank_points", "Rank Points")]
        }
        start = GaugeMetricFamily(
            "skillstream_season_started_seconds",
            "When the mode's season being played started (epoch seconds, by the modes file's"
            " schedule; absent: the mode has no seasons).",
            labels=["mode"],
        )
        for mode, point in sorted(drift.items()):
            active.add_metric([mode], point.active)
            for name, spread in (("rating", point.rating), ("rank_points", point.rank_points)):
                for stat, value in spread.to_json().items():
                    spreads[name].add_metric([mode, stat], value)
        for mode, started in sorted(starts.items()):
            start.add_metric([mode], started)
        yield active
        yield from spreads.values()
        yield start
