"""Running prediction metrics: log loss, Brier score, accuracy and a calibration table."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from stream.quality import CALIBRATION_BINS, log_loss


@dataclass
class PredictionMetrics:
    """Accumulates (predicted probability, actual score) pairs; scores are 1, 0.5 or 0."""

    matches: int = 0
    predictions: int = 0
    _log_loss: float = 0.0
    _brier: float = 0.0
    _correct: float = 0.0
    bin_count: list[int] = field(default_factory=lambda: [0] * CALIBRATION_BINS)
    bin_predicted: list[float] = field(default_factory=lambda: [0.0] * CALIBRATION_BINS)
    bin_actual: list[float] = field(default_factory=lambda: [0.0] * CALIBRATION_BINS)
    # Seen from the favoured side (p >= 0.5), so a bucket's figures do not average to 0.5
    # because the order in which teams are listed is arbitrary.
    _favourite_predicted: float = 0.0
    _favourite_observed: float = 0.0

    def add(self, p: float, actual: float) -> None:
        self.predictions += 1
        self._log_loss += log_loss(p, actual)
        self._brier += (p - actual) ** 2
        if p == 0.5 or actual == 0.5:
            self._correct += 0.5
        elif (p > 0.5) == (actual > 0.5):
            self._correct += 1.0
        b = min(int(p * CALIBRATION_BINS), CALIBRATION_BINS - 1)
        self.bin_count[b] += 1
        self.bin_predicted[b] += p
        self.bin_actual[b] += actual
        if p >= 0.5:
            self._favourite_predicted += p
            self._favourite_observed += actual
        else:
            self._favourite_predicted += 1.0 - p
            self._favourite_observed += 1.0 - actual

    @property
    def log_loss(self) -> float:
        return self._per_prediction(self._log_loss)

    @property
    def brier(self) -> float:
        return self._per_prediction(self._brier)

    @property
    def accuracy(self) -> float:
        return self._per_prediction(self._correct)

    @property
    def favourite_predicted(self) -> float:
        """The mean predicted win probability of the favoured side."""
        return self._per_prediction(self._favourite_predicted)

    @property
    def favourite_observed(self) -> float:
        """How often the favoured side won (a draw counts half): calibrated when it matches
        :attr:`favourite_predicted`."""
        return self._per_prediction(self._favourite_observed)

    @property
    def mean_predicted(self) -> float:
        """The mean predicted probability (of the side each prediction is seen from)."""
        return self._per_prediction(sum(self.bin_predicted))

    @property
    def mean_observed(self) -> float:
        """How often that side won (a draw counts half)."""
        return self._per_prediction(sum(self.bin_actual))

    def _per_prediction(self, total: float) -> float:
        """``total`` over the predictions (NaN: none yet)."""
        return total / self.predictions if self.predictions else math.nan

    def summary(self) -> dict[str, float | int]:
        return {
            "matches": self.matches,
            "predictions": self.predictions,
            "log_loss": self.log_loss,
            "brier": self.brier,
            "accuracy": self.accuracy,
            "favourite_predicted": self.favourite_predicted,
            "favourite_observed": self.favourite_observed,
        }

    def calibration(self) -> list[tuple[float, float, int]]:
        """(mean predicted, observed frequency, count) for each non-empty bin."""
        return [
            (self.bin_predicted[b] / n, self.bin_actual[b] / n, n)
            for b, n in enumerate(self.bin_count)
            if n
        ]
