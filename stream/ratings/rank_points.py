"""INVERSUS Rank Points: the player-facing score that hides the rating math.

The functional rating is the lower end of the player's confidence range (rating - z * deviation,
z = 3 for 99.7%), mapped from the algorithm's rating bounds onto [0, max_points]. After every
match Rank Points move a fraction (half) of the way towards it, but never against the result: a
win never costs points and a loss never gives any. A win earns at least ``min_step`` unless
that would pass the upper end of the confidence range or ``max_points``; a loss costs at least
``min_step`` unless that would go below zero. No match moves more than ``max_step``. A draw just
moves part of the way, in either direction, with no minimum.

The optional upset bonus (INVERSUS: 250 points for the largest possible rating gap; off by
default, as its author would leave it out today) is added to a win over a higher-rated opponent.
"""

# ruff: noqa: PLR1730 (next_rank_points writes min() and max() out, as its comment says)
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from stream.ratings.ranges import Range, check_ranges, require

_MAX_POINTS = 1_000_000_000


@dataclass(frozen=True, slots=True)
class RankPointsConfig:
    approach: float = 0.5
    confidence_z: float = 3.0
    max_points: int = 10000
    min_step: int = 1
    max_step: int = 500
    upset_bonus: float = 0.0

    RANGES: ClassVar[Mapping[str, Range]] = {
        "approach": Range(
            0.0, 1.0, "the fraction of the way to the target; 0 would never move", low_open=True
        ),
        "confidence_z": Range(
            0.0, 10.0, "standard deviations below the rating (INVERSUS: 3, 99.7%)"
        ),
        "max_points": Range(1, _MAX_POINTS, "any whole scale up to a billion", integer=True),
        "min_step": Range(0, _MAX_POINTS, "whole points, at most max_step", integer=True),
        "max_step": Range(0, _MAX_POINTS, "whole points (INVERSUS: 500)", integer=True),
        "upset_bonus": Range(
            0.0, _MAX_POINTS, "points for the largest possible upset (INVERSUS: 250)"
        ),
    }

    def __post_init__(self) -> None:
        check_ranges(self, self.RANGES)
        require(self.min_step <= self.max_step, "min_step", "must not be above max_step")


def to_points(config: RankPointsConfig, rating: float, bounds: tuple[float, float]) -> float:
    """Map a public-scale rating from ``bounds`` onto [0, max_points], clamped."""
    lo, hi = bounds
    points = (rating - lo) / (hi - lo) * config.max_points
    return min(max(points, 0.0), float(config.max_points))


def next_rank_points(
    config: RankPointsConfig,
    bounds: tuple[float, float],
    current: int,
    rating: float,
    deviation: float,
    score: float,
    upset: float = 0.0,
) -> int:
    """Rank Points after a match whose score was ``score`` (1 win, 0.5 draw, 0 loss).

    ``rating``/``deviation`` are the player's state after the match; ``upset`` is how far the
    opponent's rating was above the player's before it (public scale; only positive counts).
    """
    lo, hi = bounds
    max_points = config.max_points
    per_point = max_points / (hi - lo)
    spread = config.confidence_z * deviation
    # to_points() written out: this runs once per player update.
    target = (rating - spread - lo) * per_point
    if target < 0.0:
        target = 0.0
    elif target > max_points:
        target = max_points
    step = round((target - current) * config.approach)
    min_step = config.min_step
    # The bounds below are min() and max() of whole numbers written out (the file-wide
    # PLR1730 exception): this runs twice a match in every replay, and a builtin's call costs
    # more than the comparison (850 against 535 ns a call, measured with timeit).
    if score > 0.5:
        if step < 0:
            step = 0
        if config.upset_bonus and upset > 0.0:
            step += round(config.upset_bonus * upset / (hi - lo))
        # The minimum step may not pass the upper end of the confidence range (nor max_points).
        if step < min_step and current + min_step <= (rating + spread - lo) * per_point:
            step = min_step
        cap = config.max_step
        if max_points - current < cap:
            cap = max_points - current
        if step > cap:
            step = cap
    elif score < 0.5:
        if step > 0:
            step = 0
        if step > -min_step and current >= min_step:
            step = -min_step
        floor = -config.max_step
        if -current > floor:
            floor = -current
        if step < floor:
            step = floor
    else:
        max_step = config.max_step
        if step > max_step:
            step = max_step
        if step < -max_step:
            step = -max_step
    new = current + step
    return 0 if new < 0 else (max_points if new > max_points else new)
