"""Predictions as JSON lines: written by ``evaluate --predictions``, read by ``--compare``.

One object per prediction::

    {"row": 12, "teams": [0, 1], "played_at": "2023-01-02T10:00:00Z", "p": 0.62,
     "actual": 1.0, "games": 3, "team_size": 1, "sizes": [1, 1], "mode": "default"}

``row`` is the match's number among the history's matches (1-based, file order) and ``p`` the
probability that team ``teams[0]`` beats team ``teams[1]``. Reading needs only ``row`` and ``p``
(``teams`` defaults to ``[0, 1]``), so another rating system's output pairs with skillstream's
after adding a row number to each of its predictions.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import orjson

from stream.history import HistoryError
from stream.history.source import BOM, display_name, open_binary
from stream.offline.predictions import Prediction

_MAX_LINE = 64 * 1024


def prediction_json(prediction: Prediction) -> dict[str, Any]:
    at = dt.datetime.fromtimestamp(prediction.at, dt.UTC)
    return {
        "row": prediction.row,
        "teams": list(prediction.teams),
        "played_at": at.isoformat().replace("+00:00", "Z"),
        "p": prediction.p,
        "actual": prediction.actual,
        "games": prediction.games,
        "team_size": prediction.team_size,
        "sizes": list(prediction.sizes),
        "mode": prediction.mode,
    }


def write_predictions(out: IO[bytes], predictions: Iterable[Prediction]) -> Iterator[Prediction]:
    """Write each prediction as it passes through, so one pass both writes and scores."""
    for prediction in predictions:
        out.write(orjson.dumps(prediction_json(prediction), option=orjson.OPT_APPEND_NEWLINE))
        yield prediction


@dataclass(frozen=True, slots=True)
class ReadPrediction:
    """A prediction read from a file: its probability, its result if given, and its line."""

    p: float
    actual: float | None
    line: int


def read_predictions(path: Path | str) -> dict[tuple[int, int, int], ReadPrediction]:
    """The predictions of a JSON-lines file by (row, team, team).

    Raises :class:`HistoryError` naming the line for a line that is not an object with a row
    number and a probability in [0, 1], and for the same prediction given twice.
    """
    name = display_name(path)
    found: dict[tuple[int, int, int], ReadPrediction] = {}
    with open_binary(path) as handle:
        for number, raw in enumerate(handle, 1):
            if len(raw) > _MAX_LINE:
                raise HistoryError(name, number, f"line is longer than {_MAX_LINE} bytes")
            text = raw[len(BOM) :] if number == 1 and raw.startswith(BOM) else raw
            if not text.strip():
                continue
            try:
                key, read = _parse(orjson.loads(text), number)
            except orjson.JSONDecodeError as exc:
                raise HistoryError(name, number, f"not valid JSON: {exc}") from None
            except ValueError as exc:
                raise HistoryError(name, number, str(exc)) from None
            earlier = found.get(key)
            if earlier is not None:
                raise HistoryError(
                    name,
                    number,
                    f"row {key[0]} teams {list(key[1:])} already on line {earlier.line}",
                )
            found[key] = read
    if not found:
        raise HistoryError(name, None, "no predictions in the file")
    return found


def _parse(obj: object, line: int) -> tuple[tuple[int, int, int], ReadPrediction]:
    if not isinstance(obj, dict):
        raise ValueError("expected a JSON object with row and p")
    row = obj.get("row")
    if not isinstance(row, int) or isinstance(row, bool) or row < 1:
        raise ValueError(f"row must be a whole number >= 1 (the match's number), got {row!r}")
    teams = obj.get("teams", [0, 1])
    if (
        not isinstance(teams, list)
        or len(teams) != 2
        or not all(isinstance(t, int) and not isinstance(t, bool) and t >= 0 for t in teams)
        or teams[0] >= teams[1]
    ):
        raise ValueError(f"teams must be two team indices [i, j] with i < j, got {teams!r}")
    p = _number(obj, "p")
    if p is None or not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be a probability between 0 and 1, got {obj.get('p')!r}")
    actual = _number(obj, "actual")
    if actual is not None and actual not in (0.0, 0.5, 1.0):
        raise ValueError(f"actual must be 1, 0.5 or 0, got {obj.get('actual')!r}")
    return (row, teams[0], teams[1]), ReadPrediction(p, actual, line)


def _number(obj: dict[str, Any], key: str) -> float | None:
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{key} must be a number, got {value!r}")
    return float(value)
