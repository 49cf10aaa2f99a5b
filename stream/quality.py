"""Live prediction quality: log loss, Brier score and calibration of the expected scores the
worker publishes, per mode, over a sliding window of the latest observations.

Quick start::

    quality = PredictionQuality(window=1000)
    quality.observe("ranked-1v1", expected=0.7, actual=1.0)
    quality.observe_event(rating_changed)  # a decoded rating-changed event
    summary = quality.summaries()["ranked-1v1"]
    summary.log_loss, summary.brier, summary.calibration_error, summary.buckets

Pure: no Kafka, Redis or clock; the same observations in the same order give the same figures.
The arithmetic is ``skillstream evaluate``'s (the same log loss with the same clipping, the same
ten calibration bins), so a window's figures are what it reports for the same predictions
(docs/quality.md says where the two differ in what they count).

The window holds the last ``window`` observations of each mode, in the order they arrived, not
a span of event time: every figure then rests on the same number of observations, so its noise
does not swell in quiet hours and one threshold fits every hour of the day (docs/quality.md).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "BUCKETS",
    "CALIBRATION_BINS",
    "DEFAULT_WINDOW",
    "MAX_MODES",
    "Bucket",
    "ModeQuality",
    "PredictionQuality",
    "actual_score",
    "bucket_label",
    "log_loss",
]

# A prediction is clipped this far from 0 and 1, so a certain miss costs ~34.5, not infinity.
_EPS = 1e-15
# Ten bins of the predicted score (0-0.1, ..., 0.9-1), live and offline alike.
CALIBRATION_BINS = 10


def log_loss(p: float, actual: float) -> float:
    """The log loss of predicting ``p`` for a result ``actual`` (1, 0.5 or 0)."""
    q = min(max(p, _EPS), 1.0 - _EPS)
    return -(actual * math.log(q) + (1.0 - actual) * math.log(1.0 - q))


# Per mode. Measured on simulated 1v1 traffic (docs/quality.md): the windowed log loss then moves
# by about 0.01 between disjoint windows, well below the drifts worth an alert.
DEFAULT_WINDOW = 5000
# A modes file with unlisted = "default" lets any mode name through: a flood of made-up names
# must not grow memory (one window each) or Prometheus series without bound.
MAX_MODES = 64
BUCKETS = CALIBRATION_BINS

# A quit or a timeout scores the player 0 whatever the ratings said: the result records who
# stayed, not who played better (offline evaluation skips those matches for the same reason).
_SCORES = {"win": 1.0, "draw": 0.5, "loss": 0.0}


def actual_score(outcome: object) -> float | None:
    """The score a rating-changed ``outcome`` records (win 1, draw 0.5, loss 0), or None for an
    outcome that says nothing about the prediction (abandoned, timeout, anything unknown)."""
    return _SCORES.get(outcome) if isinstance(outcome, str) else None


def bucket_label(index: int) -> str:
    """The Prometheus label of calibration bucket ``index``: its range of predicted
    probability, ``"0.0-0.1"`` ... ``"0.9-1.0"``."""
    return f"{index / BUCKETS:.1f}-{(index + 1) / BUCKETS:.1f}"


@dataclass(frozen=True, slots=True)
class Bucket:
    """Predictions between ``label``'s bounds: how many, their mean and how often they came
    true (a draw counts half). Calibrated when ``predicted`` and ``observed`` agree."""

    label: str
    count: int
    predicted: float
    observed: float


@dataclass(frozen=True, slots=True)
class ModeQuality:
    """One mode's figures over its window. ``calibration_error`` is the mean over observations
    of |bucket's mean prediction - bucket's observed rate| (the expected calibration error):
    0 for a calibrated source, up to 1."""

    observations: int
    log_loss: float
    brier: float
    calibration_error: float
    buckets: tuple[Bucket, ...]


class PredictionQuality:
    """Sliding windows of (expected score, actual score) per mode."""

    def __init__(self, window: int = DEFAULT_WINDOW, max_modes: int = MAX_MODES) -> None:
        if window < 1:
            raise ValueError(f"window must be at least 1, got {window}")
        self.window = window
        self.max_modes = max_modes
        self._windows: dict[str, _Window] = {}
        # Events not counted: abandoned or timed out, without a usable expected score, or of a
        # mode beyond max_modes.
        self.skipped = 0

    def observe(self, mode: str, expected: float, actual: float) -> bool:
        """Count one prediction; False (and not counted) when ``mode`` would exceed
        ``max_modes``. ``expected`` must lie in [0, 1] and ``actual`` be 0, 0.5 or 1."""
        window = self._windows.get(mode)
        if window is None:
            if len(self._windows) >= self.max_modes:
                self.skipped += 1
                return False
            window = self._windows[mode] = _Window(self.window)
        window.add(expected, actual)
        return True

    def observe_event(self, event: Mapping[str, Any]) -> bool:
        """Count a decoded rating-changed event's prediction; False when it has none to count
        (see :func:`actual_score`) or carries a mode or expected score no worker writes."""
        actual = actual_score(event.get("outcome"))
        expected = event.get("expected_score")
        mode = event.get("mode")
        if (
            actual is None
            or not isinstance(mode, str)
            or isinstance(expected, bool)
            or not isinstance(expected, int | float)
            or not 0.0 <= expected <= 1.0  # also refuses NaN
        ):
            self.skipped += 1
            return False
        return self.observe(mode, float(expected), actual)

    def summaries(self) -> dict[str, ModeQuality]:
        """Every mode seen so far, with its window's figures."""
        return {mode: window.summary() for mode, window in self._windows.items() if window.items}


class _Window:
    """One mode's last ``size`` predictions with running sums: adding one and reading the
    figures cost the same whatever the size, so a scrape never holds the worker's event loop
    (recomputing 5 windows of 5,000 at each scrape took 23 ms; docs/quality.md, "Cost")."""

    def __init__(self, size: int) -> None:
        self.size = size
        # (expected, actual, bucket, log loss, squared error)
        self.items: deque[tuple[float, float, int, float, float]] = deque()
        self._evicted = 0
        self._reset_sums()

    def _reset_sums(self) -> None:
        self.log_loss = 0.0
        self.brier = 0.0
        self.count = [0] * BUCKETS
        self.predicted = [0.0] * BUCKETS
        self.observed = [0.0] * BUCKETS

    def add(self, expected: float, actual: float) -> None:
        item = (
            expected,
            actual,
            min(int(expected * BUCKETS), BUCKETS - 1),  # as PredictionMetrics bins
            log_loss(expected, actual),
            (expected - actual) ** 2,
        )
        self.items.append(item)
        self._count(item, 1)
        if len(self.items) > self.size:
            self._count(self.items.popleft(), -1)
            self._evicted += 1
            if self._evicted >= self.size:
                # Adding and subtracting floats leaves rounding behind: start the sums afresh
                # from the window once per window's worth of evictions.
                self._evicted = 0
                self._reset_sums()
                for kept in self.items:
                    self._count(kept, 1)

    def _count(self, item: tuple[float, float, int, float, float], sign: int) -> None:
        expected, actual, b, loss, squared = item
        self.log_loss += sign * loss
        self.brier += sign * squared
        self.count[b] += sign
        self.predicted[b] += sign * expected
        self.observed[b] += sign * actual

    def summary(self) -> ModeQuality:
        n = len(self.items)
        buckets = []
        gap = 0.0
        for b, count in enumerate(self.count):
            predicted = observed = math.nan
            if count:
                # Every prediction in bucket b lies in its range, so their mean does too; the
                # running sum can drift a rounding error outside it (three 0.7s gave 0.69999).
                predicted = min(max(self.predicted[b] / count, b / BUCKETS), (b + 1) / BUCKETS)
                observed = self.observed[b] / count
                gap += count * abs(predicted - observed)
            buckets.append(Bucket(bucket_label(b), count, predicted, observed))
        # Clamped: a sum brought back to 0 by subtraction may end a rounding error below it.
        return ModeQuality(
            observations=n,
            log_loss=max(0.0, self.log_loss / n),
            brier=min(1.0, max(0.0, self.brier / n)),
            calibration_error=min(1.0, gap / n),
            buckets=tuple(buckets),
        )
