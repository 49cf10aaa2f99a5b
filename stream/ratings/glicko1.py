"""Continuous Glicko-1 without rating periods, as rating-update (ratingupdate.info) runs it.

Source: "modified-glicko.md" from rating-update, built on Glickman's "The Glicko system". The
deviation grows by ``c`` once per whole virtual rating period of wall time since the player's
last game, capped at the initial deviation; each game (or set of results) is then rated at once.

One slip in the post is not copied: its ``calc_new_rating`` closes a parenthesis too early,
``(Q / (1/RD^2)) + (1/d^2)``, and returns only the change; the update is Glickman's
``r' = r + q / (1/RD^2 + 1/d^2) * g(RD_o) * (s - e)``.

Several results are rated together with Glickman's period formula; a single result reduces
exactly to the post's one-game formula. Ratings are not clamped: ``rating_bounds`` only says
where Rank Points map, using the same range as Glicko-2 (1500 +- 6.045 * 173.7178).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

from stream.ratings.ranges import (
    INITIAL_RATING_WHY,
    MAX_ABS_RATING,
    Limits,
    Range,
    check_ranges,
    require,
)
from stream.ratings.skill import Rated, Result, Skill, SkillLike

Q = math.log(10.0) / 400.0
_THREE_Q_SQ_OVER_PI_SQ = 3.0 * Q * Q / (math.pi * math.pi)
# Same public range as Glicko-2's bounds, so Rank Points mean the same across the family.
_BOUND_HALF_WIDTH = 6.045 * 173.7178
_DEVIATION_WHY = (
    "Glickman's new player has 350; above 1000 one game moves a rating by thousands of points, "
    "below 1 a new player's rating can hardly move"
)
_MIN_DEVIATION_WHY = (
    "rating-update uses 25; 0 lets a rating settle for good, and it may not exceed the initial "
    "deviation"
)


@dataclass(frozen=True, slots=True)
class Glicko1Config:
    """System parameters; the defaults are rating-update's deployed constants."""

    name: ClassVar[str] = "glicko1"

    initial_rating: float = 1500.0
    # Also the maximum: an inactive player never becomes less certain than a new one.
    initial_deviation: float = 350.0
    min_deviation: float = 25.0
    # One virtual rating period of wall time; only whole periods grow the deviation.
    period_seconds: float = 3600.0
    c: float = 3.1

    RANGES: ClassVar[Mapping[str, Range]] = {
        "initial_rating": Range(-MAX_ABS_RATING, MAX_ABS_RATING, INITIAL_RATING_WHY),
        "initial_deviation": Range(1.0, 1000.0, _DEVIATION_WHY),
        "min_deviation": Range(0.0, 1000.0, _MIN_DEVIATION_WHY),
        "period_seconds": Range(
            1.0, 315_360_000.0, "one second to ten years; 0 would divide by zero"
        ),
        "c": Range(
            0.0,
            1000.0,
            "rating-update uses 3.1; 1000 brings anyone back to the initial deviation after one "
            "period, so more would mean nothing",
        ),
    }

    def __post_init__(self) -> None:
        check_ranges(self, self.RANGES)
        require(
            self.min_deviation <= self.initial_deviation,
            "min_deviation",
            "must not be above initial_deviation",
        )

    # The methods below make the config usable wherever a rating algorithm is expected.
    def initial(self) -> Skill:
        return initial(self)

    def decay(self, skill: SkillLike, elapsed_seconds: float) -> SkillLike:
        return decay(self, skill, elapsed_seconds)

    def rate(self, skill: SkillLike, results: Sequence[Result]) -> SkillLike:
        return rate(self, skill, results)

    def expected_score(self, a: Rated, b: Rated) -> float:
        return expected_score(a, b)

    def update_terms(self, skill: SkillLike, result: Result) -> tuple[float, float]:
        return update_terms(skill, result)

    @property
    def prior_deviation(self) -> float:
        """A new player's (and the largest) deviation in public points."""
        return self.initial_deviation

    def with_prior_deviation(self, points: float) -> Glicko1Config:
        """The same parameters with a new player's deviation set to ``points``, held inside
        the accepted range and never below the minimum deviation."""
        accepted = self.RANGES["initial_deviation"]
        deviation = min(max(points, accepted.low), accepted.high)
        return dataclasses.replace(
            self, initial_deviation=deviation, min_deviation=min(self.min_deviation, deviation)
        )

    @property
    def decay_step_seconds(self) -> float:
        """Less inactivity than this adds nothing (one virtual rating period)."""
        return self.period_seconds

    @property
    def logistic_scale(self) -> float:
        """Rating points per unit of the logistic curve (Glicko's 400 per factor of ten)."""
        return 400.0 / math.log(10.0)

    @property
    def rating_bounds(self) -> tuple[float, float]:
        """Public-scale rating range that Rank Points map onto [0, 10000]."""
        return (self.initial_rating - _BOUND_HALF_WIDTH, self.initial_rating + _BOUND_HALF_WIDTH)

    @property
    def limits(self) -> Limits:
        """Ratings held to the range a seed may take (not clamped to ``rating_bounds``); the
        deviation never below ``min_deviation``, as an update leaves it."""
        return Limits(min_deviation=self.min_deviation)


def initial(config: Glicko1Config) -> Skill:
    """An unrated player: the initial rating and deviation, no volatility."""
    return Skill(config.initial_rating, config.initial_deviation, None)


def decay_periods(config: Glicko1Config, elapsed_seconds: float) -> int:
    """Whole virtual rating periods in ``elapsed_seconds`` (0 for no or negative time)."""
    if elapsed_seconds <= 0:
        return 0
    return math.floor(elapsed_seconds / config.period_seconds)


def decay(config: Glicko1Config, skill: SkillLike, elapsed_seconds: float) -> SkillLike:
    """Grow the deviation by ``c`` per whole period of ``elapsed_seconds``, up to the initial one.

    The post loops once per period, clamping each time. The clamp is monotone and a clamped
    deviation stays clamped (sqrt(I^2 + c^2) >= I), so clamping once after adding n * c^2 is the
    same and stays O(1) after months away.
    """
    n = decay_periods(config, elapsed_seconds)
    if n == 0:
        return skill
    deviation = math.sqrt(skill.deviation * skill.deviation + n * config.c * config.c)
    return Skill(skill.rating, min(deviation, config.initial_deviation), skill.volatility)


def g(deviation: float) -> float:
    """Glicko's attenuation for an uncertain opponent: 1 / sqrt(1 + 3 q^2 RD^2 / pi^2)."""
    return 1.0 / math.sqrt(1.0 + _THREE_Q_SQ_OVER_PI_SQ * deviation * deviation)


def _expected(rating: float, opponent_rating: float, g_value: float) -> float:
    # 10^(-x/400) == exp(-q x): the post's calc_e written with the natural exponential.
    x = g_value * Q * (rating - opponent_rating)
    # Only ever exponentiate a non-positive number: ratings are unclamped and math.exp raises
    # OverflowError past ~709.
    if x < 0.0:
        e = math.exp(x)
        return e / (1.0 + e)
    return 1.0 / (1.0 + math.exp(-x))


def rate(config: Glicko1Config, skill: SkillLike, results: Sequence[Result]) -> SkillLike:
    """Rate ``results`` together (Glickman's one-period update); none leaves the skill as is.

    d^2 = 1 / (q^2 sum g_j^2 E_j (1 - E_j)), r' = r + q / (1/RD^2 + 1/d^2) sum g_j (s_j - E_j),
    RD' = sqrt(1 / (1/RD^2 + 1/d^2)) clamped to [min_deviation, initial_deviation].
    """
    if not results:
        return skill
    rd_sq = skill.deviation * skill.deviation
    if rd_sq == 0.0:
        # A perfectly certain rating cannot move (1/RD^2 is infinite); only reachable with
        # min_deviation = 0 (or a deviation so small that its square underflows).
        return skill
    inv_d_sq = 0.0
    score_sum = 0.0
    for result in results:
        # A weighted result: slope weight * g(weight * RD_j), as for Glicko-2.
        w = result.weight
        g_j = w * g(w * result.deviation)
        e_j = _expected(skill.rating, result.rating, g_j)
        # A part-time player's share of the result's information and pull (1: exactly).
        gs = g_j * result.share
        inv_d_sq += gs * g_j * e_j * (1.0 - e_j)
        score_sum += gs * (result.score - e_j)
    # Kept as 1/d^2 so a near-certain blowout (E_j(1 - E_j) underflowing) cannot divide by 0.
    inv_d_sq *= Q * Q
    precision = 1.0 / rd_sq + inv_d_sq
    new_rating = skill.rating + Q / precision * score_sum
    new_deviation = math.sqrt(1.0 / precision)
    new_deviation = min(max(new_deviation, config.min_deviation), config.initial_deviation)
    return Skill(new_rating, new_deviation, None)


def update_terms(skill: SkillLike, result: Result) -> tuple[float, float]:
    """What :func:`rate` expects of ``result`` for ``skill``: (expected score, slope of its
    logit per rating point of ``skill``)."""
    w = result.weight
    g_j = w * g(w * result.deviation)
    return _expected(skill.rating, result.rating, g_j), g_j * Q


def expected_score(a: Rated, b: Rated) -> float:
    """Probability that ``a`` beats ``b``, both deviations combined: g(sqrt(RDa^2 + RDb^2))."""
    gg = g(math.sqrt(a.deviation * a.deviation + b.deviation * b.deviation))
    return _expected(a.rating, b.rating, gg)
