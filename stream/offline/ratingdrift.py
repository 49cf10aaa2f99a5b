"""Rating drift: where a mode's active players' ratings and Rank Points sit, over event time.

A rating scale drifts when the ratings of the players who play move as a whole while the
players do not (Lichess's "75% of atomic players are below 1500", lila #7626): newcomers who
enter at the scale's middle and leave after losing, inactivity, a change of the rules. A
point says, at one event time, how many players are active (played within ``active_seconds``
before it) and the mean and quantiles of their ratings and Rank Points. Replay feeds
:class:`DriftWatch` each player's state after each match and takes a point every
``step_seconds`` of event time (``skillstream ratings drift MODE --history FILE``); the cache's
boards give the same points for its current season and the past seasons it keeps
(stream/cli/drift.py). Pure: no clock, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from stream.events import format_time

__all__ = ["QUANTILES", "DriftPoint", "DriftWatch", "Spread", "spread"]

# The quantiles a point gives, as its JSON names them (p10 ... p90).
QUANTILES = (0.1, 0.25, 0.5, 0.75, 0.9)


@dataclass(frozen=True, slots=True)
class Spread:
    """The mean of some values and their :data:`QUANTILES` (linear between order statistics)."""

    mean: float
    quantiles: tuple[float, ...]

    def to_json(self) -> dict[str, float]:
        out = {"mean": self.mean}
        for q, value in zip(QUANTILES, self.quantiles, strict=True):
            out[f"p{round(q * 100)}"] = value
        return out


def spread(values: Sequence[float]) -> Spread:
    """:class:`Spread` of ``values`` (at least one); sorted here."""
    ordered = sorted(values)
    n = len(ordered)
    if n == 0:
        raise ValueError("no values: a spread needs at least one")
    return Spread(math.fsum(ordered) / n, tuple(quantile(ordered, q) for q in QUANTILES))


def quantile(ordered: Sequence[float], q: float) -> float:
    """The ``q`` quantile of sorted ``ordered``, linear between the order statistics (numpy's
    default, and what a reader of the cache's sorted sets computes from two ranks)."""
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


@dataclass(frozen=True, slots=True)
class DriftPoint:
    """``mode``'s active players at event time ``at``: how many, and the spread of their
    ratings and Rank Points; ``season`` the season of ``at`` (None: the mode has none, or the
    cache's point says none)."""

    mode: str
    at: float | None
    active: int
    rating: Spread
    rank_points: Spread
    season: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "at": None if self.at is None else format_time(self.at),
            "season": self.season,
            "active": self.active,
            "rating": self.rating.to_json(),
            "rank_points": self.rank_points.to_json(),
        }


class DriftWatch:
    """One mode's points from its players' states as replay leaves them, in event-time order.

    :meth:`observe` takes a player's rating and Rank Points after a match of theirs at event
    time ``at``; a point is taken at every multiple of ``step_seconds`` after the first match
    that a later match passes (so a quiet stretch gives no points of nobody), and one at the
    last match (:meth:`finish`). A player is active at a point when their last match is at most
    ``active_seconds`` before it. ``season_of`` names the season of a point's time."""

    def __init__(
        self,
        mode: str,
        active_seconds: float,
        step_seconds: float,
        season_of: Callable[[float], int] | None = None,
    ) -> None:
        if not (active_seconds > 0 and step_seconds > 0):
            raise ValueError("active_seconds and step_seconds must be positive")
        self.mode = mode
        self.active_seconds = active_seconds
        self.step_seconds = step_seconds
        self._season_of = season_of
        self._players: dict[str, tuple[float, float, float]] = {}
        self._next: float | None = None
        self._last = -math.inf

    def observe(
        self, player_id: str, at: float, rating: float, rank_points: float
    ) -> list[DriftPoint]:
        """Note ``player_id``'s state after their match at ``at``; the points due before it."""
        points: list[DriftPoint] = []
        if self._next is None:
            self._next = at + self.step_seconds
        while at > self._next:
            point = self.point(self._next)
            if point is not None:
                points.append(point)
            self._next += self.step_seconds
        self._players[player_id] = (at, rating, rank_points)
        self._last = max(self._last, at)
        return points

    def finish(self) -> list[DriftPoint]:
        """The point at the last match observed (none when nothing was)."""
        if self._next is None:
            return []
        point = self.point(self._last)
        return [] if point is None else [point]

    def point(self, at: float) -> DriftPoint | None:
        """The point at ``at`` from the players observed so far (None: nobody active)."""
        since = at - self.active_seconds
        ratings: list[float] = []
        points: list[float] = []
        for last, rating, rank_points in self._players.values():
            if since < last <= at:
                ratings.append(rating)
                points.append(rank_points)
        if not ratings:
            return None
        season = None if self._season_of is None else self._season_of(at)
        return DriftPoint(self.mode, at, len(ratings), spread(ratings), spread(points), season)
