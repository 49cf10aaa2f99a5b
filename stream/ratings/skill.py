"""Value types shared by every rating algorithm.

Everything here is on the public scale (1500-centred for the Glicko family and Elo), immutable,
and free of I/O and clocks: times are plain epoch seconds passed in by the caller.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from stream.ratings.fastinit import fast_init


@fast_init
@dataclass(frozen=True, slots=True)
class Skill:
    """What an algorithm knows about a player: rating, its uncertainty, and volatility.

    ``deviation`` is 0.0 for algorithms without uncertainty (Elo, ZoneStats) and
    ``volatility`` is None for algorithms without one (all but Glicko-2).
    """

    rating: float
    deviation: float = 0.0
    volatility: float | None = None


@fast_init
@dataclass(frozen=True, slots=True)
class Result:
    """One comparison inside a rating period: an opponent's skill and my score against it.

    ``score`` is 1.0 for a win, 0.5 for a draw and 0.0 for a loss. ``weight`` is the player's
    share of the result: the logit of the comparison is ``weight * (mine - rating)``, so a
    member of a team that shares the result (``shared``) carries only part of it; 1 is a
    player alone, as in every published formula. ``share`` is the part of the result's
    information the player takes: their share of the match when they played part of it
    (stream.ratings.parttime); the update's pull and its information are both multiplied by
    it, as if the player had played that fraction of a game. 1 is a whole match.
    """

    rating: float
    deviation: float
    score: float
    weight: float = 1.0
    share: float = 1.0


@fast_init
@dataclass(frozen=True, slots=True)
class PlayerState:
    """A player's stored state in one game mode.

    ``last_played`` is the epoch second of the last rated match (None before the first); the
    Glicko algorithms grow the deviation from it. ``rank_points`` is the player-facing score.
    ``drift_slope`` and ``variance_slope``: how the rating (points) and the squared deviation
    (points squared) would move per unit of the log of the mode's learned skill drift
    (stream.ratings.drift); 0 in a mode that does not learn it.
    """

    rating: float
    deviation: float
    volatility: float | None
    rank_points: int = 0
    games: int = 0
    last_played: float | None = None
    drift_slope: float = 0.0
    variance_slope: float = 0.0

    @property
    def skill(self) -> Skill:
        return Skill(self.rating, self.deviation, self.volatility)


@dataclass(frozen=True, slots=True)
class PlayerStats:
    """Per-player match statistics used by ZoneStats: score earned and seconds in the game."""

    score: float
    seconds: float


class Rated(Protocol):
    """Anything with a rating and a deviation (a Skill, a PlayerState, a Result)."""

    @property
    def rating(self) -> float: ...

    @property
    def deviation(self) -> float: ...


class SkillLike(Rated, Protocol):
    """Anything an algorithm can rate: a Skill, or a stored PlayerState as it is."""

    @property
    def volatility(self) -> float | None: ...
