"""Running prediction metrics: log loss, Brier score, accuracy and a calibration table."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

_EPS = 1e-15
CALIBRATION_BINS = 10


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

    def add(self, p: float, actual: float) -> None:
        q = min(max(p, _EPS), 1.0 - _EPS)
        self.predictions += 1
        self._log_loss -= actual * math.log(q) + (1.0 - actual) * math.log(1.0 - q)
        self._brier += (p - actual) ** 2
        if p == 0.5 or actual == 0.5:
            self._correct += 0.5
        elif (p > 0.5) == (actual > 0.5):
            self._correct += 1.0
        b = min(int(p * CALIBRATION_BINS), CALIBRATION_BINS - 1)
        self.bin_count[b] += 1
        self.bin_predicted[b] += p
        self.bin_actual[b] += actual

    @property
    def log_loss(self) -> float:
        return self._log_loss / self.predictions if self.predictions else math.nan

    @property
    def brier(self) -> float:
        return self._brier / self.predictions if self.predictions else math.nan

    @property
    def accuracy(self) -> float:
        return self._correct / self.predictions if self.predictions else math.nan

    def summary(self) -> dict[str, float | int]:
        return {
            "matches": self.matches,
            "log_loss": self.log_loss,
            "brier": self.brier,
            "accuracy": self.accuracy,
        }

    def calibration(self) -> list[tuple[float, float, int]]:
        """(mean predicted, observed frequency, count) for each non-empty bin."""
        return [
            (self.bin_predicted[b] / n, self.bin_actual[b] / n, n)
            for b, n in enumerate(self.bin_count)
            if n
        ]
