"""Accepted ranges of configuration numbers: one declarative table per config class.

Every number a config class takes (and so every number a modes file can set) has a
:class:`Range` in the class's ``RANGES`` table. A range is finite and closed, so a value that is
not a number, not finite (``inf``, ``nan``) or outside it is refused when the config is built,
with a :class:`ConfigError` naming the key. The ranges are chosen so that no accepted
configuration can make the engine hang, overflow or produce a non-finite rating; each says why
in ``why``, which ``docs/modes-file.md`` repeats.

Adding a key to a config class: give the field a default and add one ``Range`` line to the
class's ``RANGES``; a test checks that every field has one and that every default lies inside.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

# Reasons shared by several algorithms' tables.
# Seed ratings (stream/history/seeds.py) may go as far out, no further.
MAX_ABS_RATING = 1e6
INITIAL_RATING_WHY = "the rating scale's origin; as far out as a seed rating may go"
TEMPERATURE_WHY = (
    "rating points per logistic unit (chess: 174); the scale is arbitrary, the range keeps it "
    "between one point and 100,000"
)


@dataclass(frozen=True, slots=True)
class Limits:
    """What a player state of one algorithm may hold, the bounds the engine is proven finite
    on: a rating range (Glicko-2 clamps to its own bounds; the others hold to the range a seed
    may take, +-MAX_ABS_RATING), the smallest deviation (0: none) and the volatility range
    (None: the algorithm has no volatility). Every algorithm has one (its ``limits``), so a
    state from outside the engine (a seed, a start carried from another mode, an operator's
    adjustment) is held and checked the same way whatever the algorithm."""

    rating: tuple[float, float] = (-MAX_ABS_RATING, MAX_ABS_RATING)
    min_deviation: float = 0.0
    volatility: tuple[float, float] | None = None

    def rating_held(self, rating: float) -> float:
        low, high = self.rating
        return min(max(rating, low), high)

    def held(
        self, rating: float, deviation: float, volatility: float | None
    ) -> tuple[float, float, float | None]:
        """The three values moved onto the nearest point the limits allow."""
        if volatility is not None and self.volatility is not None:
            volatility = min(max(volatility, self.volatility[0]), self.volatility[1])
        return self.rating_held(rating), max(deviation, self.min_deviation), volatility

    def breach(
        self, rating: float, deviation: float | None, volatility: float | None, where: str
    ) -> str | None:
        """What of the values lies outside the limits, worded for a user (None: nothing);
        ``where`` names the owner (``mode 'ranked'``)."""
        low, high = self.rating
        if not low <= rating <= high:
            return f"rating {rating:g} is outside {where}'s bounds, {low:.6g} to {high:.6g}"
        if deviation is not None and deviation < self.min_deviation:
            return f"deviation {deviation:g} is below {where}'s smallest, {self.min_deviation:.6g}"
        if volatility is not None and self.volatility is not None:
            smallest, largest = self.volatility
            if not smallest <= volatility <= largest:
                return (
                    f"volatility {volatility:g} is outside {where}'s bounds,"
                    f" {smallest:g} to {largest:g}"
                )
        return None


class ConfigError(ValueError):
    """A configuration number that is refused; ``key`` names the field."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"{key} {message}")
        self.key = key


@dataclass(frozen=True, slots=True)
class Range:
    """``low <= value <= high`` (``low < value`` when ``low_open``); ``integer``: whole numbers."""

    low: float
    high: float
    why: str
    low_open: bool = False
    integer: bool = False

    def check(self, key: str, value: object) -> None:
        """Raise :class:`ConfigError` unless ``value`` is a finite number inside the range."""
        kind = "a whole number" if self.integer else "a number"
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ConfigError(key, f"must be {kind}, got {value!r}")
        if self.integer and not isinstance(value, int):
            raise ConfigError(key, f"must be {kind}, got {value!r}")
        if not math.isfinite(value) or not self.contains(value):
            raise ConfigError(key, f"must be {self.describe()}, got {value!r}")

    def contains(self, value: float) -> bool:
        above = value > self.low if self.low_open else value >= self.low
        return above and value <= self.high

    def describe(self) -> str:
        """The range as the error messages and the docs write it."""
        if self.low_open:
            return f"above {self.low:g} and at most {self.high:g}"
        return f"between {self.low:g} and {self.high:g}"


def check_ranges(config: object, ranges: Mapping[str, Range]) -> None:
    """Check every field of ``config`` named in ``ranges``; the first refused one raises."""
    for key, accepted in ranges.items():
        accepted.check(key, getattr(config, key))


def require(condition: bool, key: str, message: str) -> None:
    """A rule between two fields (``min <= max``): ``key`` is the field the message names."""
    if not condition:
        raise ConfigError(key, message)
