"""What a worker reports about itself: readiness (/ready, /health) and the gauges refreshed at
each scrape of /metrics and each report.

Reads only; an error while reading a partition's high watermark (nothing fetched from it yet)
leaves that partition out of the lag.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Mapping
from typing import Any

from stream.pipeline.metrics import WorkerMetrics
from stream.pipeline.workarounds import private

__all__ = ["readiness", "refresh_gauges"]


def readiness(app: Any, refused: Collection[tuple[str, int]] = ()) -> dict[str, Any]:
    """Ready: started, no rebalance or table recovery in progress, no input partition refused
    (a table behind records its inputs no longer hold: stream/pipeline/checkpoints.py). A
    worker without partitions (more replicas than partitions) is ready too: it waits for one."""
    started = private.started(app)
    rebalancing = bool(app.rebalancing)
    recovering = bool(getattr(app, "in_recovery", False))
    assigned = len(app.consumer.assignment()) if started and app.consumer else 0
    ready = started and not rebalancing and not recovering and not refused
    return {
        "ready": ready,
        "rebalancing": rebalancing,
        "recovering": recovering,
        "assigned_partitions": assigned,
        "refused_partitions": [f"{topic}[{partition}]" for topic, partition in sorted(refused)],
    }


def refresh_gauges(
    app: Any,
    metrics: WorkerMetrics,
    next_offsets: Mapping[tuple[str, int], int],
    refused: Collection[tuple[str, int]] = (),
) -> None:
    """Readiness, the consumer lag per topic (from the next offset to process on each owned
    partition, keyed by (topic, partition)), and the cache feed's lag, if one runs beside the
    worker."""
    metrics.ready.set(1 if readiness(app, refused)["ready"] else 0)
    metrics.refused_partitions.set(len(refused))
    consumer = app.consumer if private.consumer_exists(app) else None
    lag: defaultdict[str, int] = defaultdict(int)
    if consumer is not None:
        for tp in consumer.assignment():
            position = next_offsets.get((tp.topic, tp.partition))
            if position is None:
                continue
            try:
                end = consumer.highwater(tp)
            except Exception:  # not fetched yet on this partition
                continue
            if end is not None:
                lag[tp.topic] += max(0, end - position)
    for topic, n in lag.items():
        metrics.consumer_lag.labels(topic).set(n)
    metrics.refresh_cache()
