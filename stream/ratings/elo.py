"""The pure logistic (Fermi) rating of "Estimation 101" (Gamasutra): Elo without uncertainty.

expectancy = Fermi(opponent - me, T) = 1 / (1 + exp((opponent - me) / T)) and
change = max_gain * (result - expectancy), applied zero-sum. With T = 400 / ln 10 and
max_gain = 32 this is chess Elo with K = 32.

Several results in one match move the rating by max_gain times the MEAN of (s_j - E_j), so a
match never swings a rating by more than max_gain however many opponents it had; with one
opponent it is the document's formula and zero-sum. A result of weight w (a team member's
share, ``shared``) counts w * (s_j - Fermi(w * gap)): the gradient step of the same logistic.
There is no deviation (always 0.0), no volatility and no decay. Ratings are not clamped:
``rating_bounds`` only says where Rank Points map (initial +- 6.045 T, the Glicko-2 range in
logistic units).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

from stream.ratings.logistic import NoUncertainty
from stream.ratings.ranges import (
    INITIAL_RATING_WHY,
    MAX_ABS_RATING,
    TEMPERATURE_WHY,
    Range,
    check_ranges,
)
from stream.ratings.skill import Rated, Result, Skill, SkillLike

_MAX_GAIN_WHY = (
    "the largest change one match makes (chess: 10 to 40); above 1000 a single result "
    "outweighs a whole history, and a match of max_gain 1e308 produced ratings of -5e307"
)


@dataclass(frozen=True, slots=True)
class EloConfig(NoUncertainty):
    """System parameters: logistic temperature, largest change per match, starting rating."""

    name: ClassVar[str] = "elo"

    temperature: float = 400.0 / math.log(10.0)
    max_gain: float = 32.0
    initial_rating: float = 1500.0

    RANGES: ClassVar[Mapping[str, Range]] = {
        "temperature": Range(1.0, 100_000.0, TEMPERATURE_WHY),
        "max_gain": Range(0.0, 1000.0, _MAX_GAIN_WHY, low_open=True),
        "initial_rating": Range(-MAX_ABS_RATING, MAX_ABS_RATING, INITIAL_RATING_WHY),
    }

    def __post_init__(self) -> None:
        check_ranges(self, self.RANGES)

    # The methods below (and NoUncertainty's) make the config usable wherever a rating
    # algorithm is expected.
    def rate(self, skill: SkillLike, results: Sequence[Result]) -> SkillLike:
        return rate(self, skill, results)

    def expected_score(self, a: Rated, b: Rated) -> float:
        return _expected_score(self, a, b)

    def update_terms(self, skill: SkillLike, result: Result) -> tuple[float, float]:
        return update_terms(self, skill, result)


def fermi(delta: float, temperature: float) -> float:
    """The Fermi function 1 / (1 + exp(delta / T)): my expectancy when ``delta`` = opp - me."""
    x = delta / temperature
    # Only ever exponentiate a non-positive number: math.exp raises OverflowError past ~709.
    if x > 0.0:
        e = math.exp(-x)
        return e / (1.0 + e)
    return 1.0 / (1.0 + math.exp(x))


def rate(config: EloConfig, skill: SkillLike, results: Sequence[Result]) -> SkillLike:
    """New rating: max_gain * mean(s_j - E_j) added; no results leave the skill as is."""
    if not results:
        return skill
    total = 0.0
    for result in results:
        # A weighted result moves the rating along its slope: weight * (s - E), E of the
        # weighted gap (the gradient step of the logistic likelihood, as Elo itself is).
        # A part-time player's result moves them by their share of it (1: exactly).
        w = result.weight
        expected = fermi(w * (result.rating - skill.rating), config.temperature)
        total += w * result.share * (result.score - expected)
    change = config.max_gain * total / len(results)
    return Skill(skill.rating + change, 0.0, None)


def update_terms(config: EloConfig, skill: SkillLike, result: Result) -> tuple[float, float]:
    """What :func:`rate` expects of ``result`` for ``skill``: (expected score, slope of its
    logit per rating point of ``skill``)."""
    w = result.weight
    return fermi(w * (result.rating - skill.rating), config.temperature), w / config.temperature


def _expected_score(config: EloConfig, a: Rated, b: Rated) -> float:
    """Probability that ``a`` beats ``b``: Fermi(b - a, T)."""
    return fermi(b.rating - a.rating, config.temperature)
