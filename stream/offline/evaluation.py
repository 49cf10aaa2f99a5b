"""Predict-then-apply evaluation of a rating configuration over a history."""

from __future__ import annotations

from collections.abc import Iterable

from stream.history import HistoryMatch
from stream.offline.metrics import PredictionMetrics
from stream.offline.replayer import Replayer


def evaluate(
    matches: Iterable[HistoryMatch],
    replayer: Replayer,
    since: float | None = None,
    skip: int = 0,
) -> PredictionMetrics:
    """Predict every match from the states before it, then apply it.

    Only matches at or after ``since`` (epoch seconds) and after the first ``skip`` matches are
    scored; earlier ones only train. Matches with quitters are applied but not scored: their
    ranks record who stayed, not who played better. Each pair of teams is one prediction.
    """
    metrics = PredictionMetrics()
    for index, match in enumerate(matches):
        if index >= skip and (since is None or match.at >= since) and not match.quitters:
            metrics.matches += 1
            for p, actual in replayer.predict(match):
                metrics.add(p, actual)
        replayer.apply(match)
    return metrics
