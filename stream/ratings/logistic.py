"""What the logistic ratings without uncertainty share (Elo, ZoneStats): a player is one number
on a logistic scale of temperature T, nothing grows while they do not play, and Rank Points map
the initial rating plus or minus 6.045 T onto [0, 10000].

A base of their configs (each still one module, stream/ratings/elo.py and zonestats.py): what
would otherwise be written twice, word for word."""

from __future__ import annotations

import math

from stream.ratings.ranges import Limits
from stream.ratings.skill import Skill, SkillLike

__all__ = ["BOUND_UNITS", "NoUncertainty"]

# Half the range Rank Points map onto, in temperatures: a win probability of 1 / (1 + e^6.045)
# = 1 / 422 between the two ends' players.
BOUND_UNITS = 6.045


class NoUncertainty:
    """A config with a ``temperature`` and an ``initial_rating`` (frozen dataclasses with
    slots: this base adds no slot)."""

    __slots__ = ()
    temperature: float
    initial_rating: float

    def initial(self) -> Skill:
        """An unrated player: the initial rating, no deviation, no volatility."""
        return Skill(self.initial_rating, 0.0, None)

    def decay(self, skill: SkillLike, elapsed_seconds: float) -> SkillLike:
        """No uncertainty to grow: the skill is returned unchanged."""
        return skill

    @property
    def decay_step_seconds(self) -> float:
        """No inactivity."""
        return math.inf

    @property
    def logistic_scale(self) -> float:
        """Rating points per unit of the logistic curve: the temperature."""
        return self.temperature

    @property
    def rating_bounds(self) -> tuple[float, float]:
        """Rating range that Rank Points map onto [0, 10000]; ratings themselves are free."""
        half = BOUND_UNITS * self.temperature
        return (self.initial_rating - half, self.initial_rating + half)

    @property
    def limits(self) -> Limits:
        """Ratings held to the range a seed may take; no deviation or volatility to bound."""
        return Limits()
