"""Two systems' predictions of the same history, paired prediction by prediction.

The history says which predictions are scored, when each match was played and how it ended;
each side only has to give a probability per (row, team, team). The paired difference of log
losses and its day-clustered standard error come from :mod:`stream.offline.comparison`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from stream.history import HistoryError
from stream.offline.comparison import PairedDifference, day_of, paired_difference
from stream.offline.predictions import Prediction
from stream.offline.predictions_file import ReadPrediction
from stream.quality import log_loss

Key = tuple[int, int, int]


@dataclass(frozen=True, slots=True)
class Side:
    """One side of a comparison: its name for reports and its probability per prediction."""

    label: str
    probabilities: Mapping[Key, float]


@dataclass(frozen=True, slots=True)
class Comparison:
    """A against B on the predictions both made; negative difference means A predicts better."""

    a: str
    b: str
    a_log_loss: float
    b_log_loss: float
    paired: PairedDifference
    # Scored predictions of the history that a side has no probability for.
    a_missing: int
    b_missing: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "a": {"source": self.a, "log_loss": self.a_log_loss, "missing": self.a_missing},
            "b": {"source": self.b, "log_loss": self.b_log_loss, "missing": self.b_missing},
            "paired": self.paired.as_dict(),
        }


def side_of(label: str, scored: Sequence[Prediction]) -> Side:
    return Side(label, {p.key: p.p for p in scored})


def side_from_file(
    label: str, read: Mapping[Key, ReadPrediction], scored: Sequence[Prediction]
) -> Side:
    """A predictions file as a side, after checking its results agree with the history's.

    A result that disagrees means the file describes another history (or other row numbers):
    :class:`HistoryError` names the file's line.
    """
    for prediction in scored:
        found = read.get(prediction.key)
        if found is not None and found.actual is not None and found.actual != prediction.actual:
            raise HistoryError(
                label,
                found.line,
                f"actual {found.actual:g} for row {prediction.row}, but the history's match "
                f"{prediction.row} ended {prediction.actual:g}: is this file from another history?",
            )
    return Side(label, {key: found.p for key, found in read.items()})


def compare(scored: Sequence[Prediction], a: Side, b: Side) -> Comparison:
    """Pair ``a`` and ``b`` on the scored predictions both give a probability for.

    Raises ValueError when they share none (the caller names the files).
    """
    a_losses: list[float] = []
    b_losses: list[float] = []
    days: list[int] = []
    a_missing = b_missing = 0
    for prediction in scored:
        pa = a.probabilities.get(prediction.key)
        pb = b.probabilities.get(prediction.key)
        a_missing += pa is None
        b_missing += pb is None
        if pa is None or pb is None:
            continue
        a_losses.append(log_loss(pa, prediction.actual))
        b_losses.append(log_loss(pb, prediction.actual))
        days.append(day_of(prediction.at))
    if not a_losses:
        raise ValueError(f"{a.label} and {b.label} share no scored prediction")
    return Comparison(
        a.label,
        b.label,
        _mean(a_losses),
        _mean(b_losses),
        paired_difference(a_losses, b_losses, days),
        a_missing,
        b_missing,
    )


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values)
