"""The shape every rating algorithm's config object has, and the registry by name.

Code that needs a kind of algorithm asks for what it can do, never for its name: a
:class:`PairwiseAlgorithm` rates one player from pairwise results, a :class:`MatchAlgorithm`
rates everyone from the whole match. ``ModeConfig`` sorts its algorithm into one of the two once.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol, runtime_checkable

from stream.ratings.elo import EloConfig
from stream.ratings.glicko1 import Glicko1Config
from stream.ratings.glicko2 import Glicko2Config
from stream.ratings.glicko2_kernel import Duellist, Seen
from stream.ratings.ranges import Limits
from stream.ratings.skill import PlayerStats, Rated, Result, Skill, SkillLike
from stream.ratings.zonestats import ZoneStatsConfig


class RatingAlgorithm(Protocol):
    """A configured algorithm: pure functions of skills, no I/O, no clock."""

    @property
    def name(self) -> str: ...

    @property
    def rating_bounds(self) -> tuple[float, float]: ...

    @property
    def limits(self) -> Limits:
        """What a player state may hold: seeds, carried starts and adjustments are held to it
        and checked against it, whatever the algorithm."""
        ...

    @property
    def decay_step_seconds(self) -> float: ...

    @property
    def logistic_scale(self) -> float:
        """Rating points per unit of the algorithm's logistic curve (its temperature)."""
        ...

    def initial(self) -> Skill: ...

    def decay(self, skill: SkillLike, elapsed_seconds: float) -> SkillLike: ...

    def expected_score(self, a: Rated, b: Rated) -> float: ...


@runtime_checkable
class PairwiseAlgorithm(RatingAlgorithm, Protocol):
    """Rates one player from a list of pairwise results (Glicko-2, Glicko-1, Elo)."""

    def rate(self, skill: SkillLike, results: Sequence[Result]) -> SkillLike: ...

    def update_terms(self, skill: SkillLike, result: Result) -> tuple[float, float]:
        """What ``rate`` expects of one result: (expected score, slope of its logit per
        rating point of ``skill``)."""
        ...


@runtime_checkable
class PriorDeviation(Protocol):
    """An algorithm whose new players start with a deviation (Glicko-2, Glicko-1): the prior
    a mode's population can learn (stream.ratings.population)."""

    @property
    def prior_deviation(self) -> float:
        """A new player's deviation in public rating points."""
        ...

    def with_prior_deviation(self, points: float) -> AlgorithmConfig: ...


@runtime_checkable
class DriftRate(Protocol):
    """An algorithm whose deviation grows with time (Glicko-2): how fast a mode's skills drift
    is a population property it can learn (stream.ratings.drift)."""

    @property
    def drift_period(self) -> float:
        """Days of inactivity that grow the deviation by one rating period's volatility."""
        ...

    def with_drift_period(self, days: float) -> AlgorithmConfig:
        """The same parameters with ``days`` as the drift period."""
        ...

    def rate_twin(
        self,
        skill: SkillLike,
        results: Sequence[Result],
        moved: SkillLike,
        moved_results: Sequence[Result],
    ) -> tuple[SkillLike, SkillLike]:
        """``rate(skill, results)`` and the same update from inputs moved a small step along
        the drift (``moved``, ``moved_results``), the second in a way whose difference from
        the first is the update's derivative (cheaper than rating twice)."""
        ...

    def rate_one_twin(
        self,
        rating: float,
        deviation: float,
        volatility: float | None,
        moved_rating: float,
        moved_deviation: float,
        opponent_rating: float,
        opponent_deviation: float,
        moved_opponent_rating: float,
        moved_opponent_deviation: float,
        score: float,
    ) -> tuple[float, float, float | None, float, float]:
        """``rate_twin`` of one result against one opponent, in floats (the twin's volatility
        the player's): (rating, deviation, volatility, twin rating, twin deviation), bit for
        bit what ``rate_twin`` gives. A duel's hot path."""
        ...

    def rate_duel_twin(
        self, step: float, a: Duellist, b: Duellist, score_a: float
    ) -> tuple[float, float, float | None, float, float, float, float, float | None, float, float]:
        """``rate_one_twin`` of both players of a duel (each a
        :data:`~stream.ratings.glicko2_kernel.Duellist`: moved ``step`` along the log drift,
        and as the other meets them), with each update's drift slopes: (rating, deviation,
        volatility, drift slope, variance slope) of the first player, then of the second. The
        replay's hot path, in one call."""
        ...

    def duel_evidence(
        self,
        decisiveness: float,
        drift_step: float,
        scale: float,
        seen: Seen,
        actual: float,
        moved: Seen | None,
        shares: tuple[float, float] | None,
    ) -> tuple[int, int, int, int, int, int]:
        """What a duel's prediction says about the population, quantised: the decisiveness's,
        the drift's and the debut offset's score and information (``moved``, ``shares``: the
        second and third asked for; stream.ratings.glicko2_kernel.duel_evidence)."""
        ...


@runtime_checkable
class MatchAlgorithm(RatingAlgorithm, Protocol):
    """Rates everyone in a match at once from the whole match (ZoneStats)."""

    def offsets(
        self,
        teams: Sequence[Sequence[str]],
        ratings: Mapping[str, float],
        ranks: Sequence[int],
        stats: Mapping[str, PlayerStats] | None,
    ) -> dict[str, float]: ...


AlgorithmConfig = Glicko2Config | Glicko1Config | EloConfig | ZoneStatsConfig

ALGORITHMS: dict[str, type[AlgorithmConfig]] = {
    "glicko2": Glicko2Config,
    "glicko1": Glicko1Config,
    "elo": EloConfig,
    "zonestats": ZoneStatsConfig,
}
