"""Reader for seed ratings: JSON lines of
{player_id, mode?, rating, deviation?, volatility?, games?}."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson

from stream.events import DEFAULT_LIMITS, describe_value
from stream.history.model import HistoryError, SeedRating
from stream.history.source import BOM, display_name, open_binary
from stream.ratings.ranges import MAX_ABS_RATING

# Far outside any rating scale in use (beyond it a seed is a unit or export mistake), and the
# range the engine is proven finite on.
MAX_SEED_RATING = MAX_ABS_RATING
_MAX_LINE = 64 * 1024


def read_seed_ratings(path: Path | str) -> Iterator[SeedRating]:
    """Yield the seeds of a JSON-lines file in file order; ``-`` reads stdin.

    Each line is an object with ``player_id`` (string), optional ``mode`` (string or null: null
    or absent means every mode), ``rating`` (number), and optional ``deviation`` (number >= 0)
    and ``volatility`` (number > 0), where absent or null means the algorithm's default, and
    optional ``games`` (integer >= 0, absent or null: not given; replay then takes the player
    for established unless asked otherwise), the games already played. Blank
    lines are skipped, unknown fields ignored; a player seeded twice for the same mode is an
    error. Problems raise :class:`HistoryError` naming the line.
    """
    name = display_name(path)
    seen: dict[tuple[str, str | None], int] = {}
    with open_binary(path) as handle:
        number = 0
        while True:
            raw = handle.readline(_MAX_LINE + 2)
            if not raw:
                break
            number += 1
            if len(raw) == _MAX_LINE + 2 and not raw.endswith(b"\n"):
                raise HistoryError(name, number, f"line is longer than {_MAX_LINE} bytes")
            if number == 1 and raw.startswith(BOM):
                raw = raw[len(BOM) :]
            raw = raw.strip()
            if not raw:
                continue
            try:
                seed = _parse_seed(orjson.loads(raw), number)
            except orjson.JSONDecodeError as exc:
                raise HistoryError(name, number, f"not valid JSON: {exc}") from None
            except ValueError as exc:
                raise HistoryError(name, number, str(exc)) from None
            key = (seed.player_id, seed.mode)
            earlier = seen.get(key)
            if earlier is not None:
                where = "" if seed.mode is None else f" in mode {seed.mode!r}"
                raise HistoryError(
                    name,
                    number,
                    f"player {seed.player_id!r} is already seeded{where} on line {earlier}",
                )
            seen[key] = number
            yield seed


def _parse_seed(obj: object, line: int) -> SeedRating:
    if not isinstance(obj, dict):
        raise ValueError("expected a JSON object with player_id and rating")
    player_id = _text(obj, "player_id")
    if player_id is None:
        raise ValueError(_missing(obj, "player_id"))
    mode = _text(obj, "mode")
    rating = _number(obj, "rating")
    if rating is None:
        raise ValueError(_missing(obj, "rating"))
    if abs(rating) > MAX_SEED_RATING:
        raise ValueError(f"rating: {rating!r} is outside -1e6..1e6")
    deviation = _number(obj, "deviation")
    if deviation is not None and deviation < 0:
        raise ValueError(f"deviation: must not be negative, got {deviation!r}")
    volatility = _number(obj, "volatility")
    if volatility is not None and volatility <= 0:
        raise ValueError(f"volatility: must be positive, got {volatility!r}")
    games = obj.get("games")
    if games is not None and (isinstance(games, bool) or not isinstance(games, int) or games < 0):
        raise ValueError(f"games: expected an integer >= 0, got {describe_value(games)}")
    return SeedRating(line, player_id, mode, rating, deviation, volatility, games)


def _missing(obj: dict[str, Any], key: str) -> str:
    return f"{key}: required, got null" if key in obj else f"{key}: required field is missing"


def _text(obj: dict[str, Any], key: str) -> str | None:
    value = obj.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise ValueError(f"{key}: expected a non-empty string, got {describe_value(value)}")
    if len(value) > DEFAULT_LIMITS.max_id_length:
        raise ValueError(f"{key}: longer than {DEFAULT_LIMITS.max_id_length} characters")
    return value


def _number(obj: dict[str, Any], key: str) -> float | None:
    value = obj.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{key}: expected a number, got {describe_value(value)}")
    number = float(value)
    if not math.isfinite(number):
        raise ValueError(f"{key}: expected a finite number, got {value!r}")
    return number
