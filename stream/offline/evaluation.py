"""Predict-then-apply evaluation of a rating configuration over a history, with breakdowns."""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from stream.history import HistoryMatch
from stream.offline.metrics import PredictionMetrics
from stream.offline.predictions import (
    EXPERIENCE_BUCKETS,
    Prediction,
    experience_bucket,
    predictions,
)
from stream.offline.replayer import Replayer

# What calibration is broken down by, in the order reports show them.
DIMENSIONS = ("experience", "team_size", "sides", "mode")
EVEN, UNEVEN = "even", "uneven"


def _bucket(prediction: Prediction, dimension: str) -> str:
    if dimension == "experience":
        return experience_bucket(prediction.games)
    if dimension == "team_size":
        return str(prediction.team_size)
    if dimension == "sides":
        a, b = prediction.sizes
        return EVEN if a == b else UNEVEN
    return prediction.mode


def _order(dimension: str, buckets: Iterable[str]) -> list[str]:
    if dimension == "experience":
        labels = [label for _, _, label in EXPERIENCE_BUCKETS]
        return [label for label in labels if label in buckets]
    if dimension == "team_size":
        return sorted(buckets, key=int)
    if dimension == "sides":
        return [label for label in (EVEN, UNEVEN) if label in buckets]
    return sorted(buckets)


@dataclass
class Evaluation:
    """The metrics of every scored prediction, overall and per bucket of each dimension.

    A match counts once per bucket it has a prediction in (a free-for-all match can fall in
    several experience buckets, one per pair of teams). ``bigger`` holds the predictions of
    uneven sides seen from the bigger side: its mean prediction against how often it won.
    """

    overall: PredictionMetrics = field(default_factory=PredictionMetrics)
    by: dict[str, dict[str, PredictionMetrics]] = field(
        default_factory=lambda: {d: {} for d in DIMENSIONS}
    )
    bigger: PredictionMetrics = field(default_factory=PredictionMetrics)
    _last_row: dict[tuple[str, str], int] = field(default_factory=dict)

    def add(self, prediction: Prediction) -> None:
        row = prediction.row
        self._count(self.overall, ("", ""), row)
        self.overall.add(prediction.p, prediction.actual)
        a, b = prediction.sizes
        if a != b:
            bigger_first = a > b
            self._count(self.bigger, ("bigger", ""), row)
            self.bigger.add(
                prediction.p if bigger_first else 1.0 - prediction.p,
                prediction.actual if bigger_first else 1.0 - prediction.actual,
            )
        for dimension, buckets in self.by.items():
            name = _bucket(prediction, dimension)
            metrics = buckets.get(name)
            if metrics is None:
                metrics = buckets[name] = PredictionMetrics()
            self._count(metrics, (dimension, name), row)
            metrics.add(prediction.p, prediction.actual)

    def _count(self, metrics: PredictionMetrics, where: tuple[str, str], row: int) -> None:
        if self._last_row.get(where) != row:
            self._last_row[where] = row
            metrics.matches += 1

    def breakdown(self, dimension: str) -> list[tuple[str, PredictionMetrics]]:
        buckets = self.by[dimension]
        return [(name, buckets[name]) for name in _order(dimension, buckets)]

    def summary(self) -> dict[str, Any]:
        """The overall figures, the calibration table, and the same per bucket (JSON-ready)."""
        out: dict[str, Any] = dict(self.overall.summary())
        out["calibration"] = _calibration(self.overall)
        out["breakdown"] = {
            dimension: {
                name: {**metrics.summary(), "calibration": _calibration(metrics)}
                for name, metrics in self.breakdown(dimension)
            }
            for dimension in DIMENSIONS
        }
        bigger = self.bigger
        if bigger.predictions:
            out["bigger_side"] = {
                "matches": bigger.matches,
                "predictions": bigger.predictions,
                "predicted": bigger.mean_predicted,
                "won": bigger.mean_observed,
                "log_loss": bigger.log_loss,
                "calibration": _calibration(bigger),
            }
        return out


def _calibration(metrics: PredictionMetrics) -> list[dict[str, float | int]]:
    return [
        {"predicted": predicted, "observed": observed, "predictions": n}
        for predicted, observed, n in metrics.calibration()
    ]


def evaluate(
    matches: Iterable[HistoryMatch],
    replayer: Replayer,
    since: float | None = None,
    skip: int = 0,
) -> PredictionMetrics:
    """The overall metrics of :func:`~stream.offline.predictions.predictions` (same arguments)."""
    metrics = PredictionMetrics()
    last_row = 0
    for prediction in predictions(matches, replayer, since, skip):
        if prediction.row != last_row:
            last_row = prediction.row
            metrics.matches += 1
        metrics.add(prediction.p, prediction.actual)
    return metrics


def evaluate_in_detail(scored: Iterable[Prediction]) -> Evaluation:
    evaluation = Evaluation()
    for prediction in scored:
        evaluation.add(prediction)
    return evaluation


@dataclass
class Tally:
    """What passed through :meth:`track`: how many matches, the last time, the largest team,
    how many matches had sides of different sizes."""

    matches: int = 0
    last_at: float = -math.inf
    largest_team: int = 0
    uneven: int = 0

    def track(self, matches: Iterable[HistoryMatch]) -> Iterator[HistoryMatch]:
        for match in matches:
            self.add(match)
            yield match

    def add(self, match: HistoryMatch) -> None:
        self.matches += 1
        self.last_at = max(self.last_at, match.at)
        sizes = [len(team) for team in match.teams]
        self.largest_team = max(self.largest_team, *sizes)
        self.uneven += min(sizes) != max(sizes)
