"""A game mode's rating rules: which algorithm, team strategy and parameters rate it, and what a
quit does to the others' match.

A ``ModeConfig`` built in code without arguments is the plain published algorithm: the INVERSUS
Glicko-2 parameters, no experience term, the quitter's match cancelled for the others. The
modes file, the built-in default mode and the live pipeline's pending-match policy are read
and built in :mod:`stream.config.modes`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from enum import StrEnum

from stream.ratings.algorithm import AlgorithmConfig, DriftRate, MatchAlgorithm, PairwiseAlgorithm
from stream.ratings.carryover import StartConfig
from stream.ratings.experience import ExperienceConfig
from stream.ratings.glicko2 import Glicko2Config
from stream.ratings.performance import PerformanceConfig
from stream.ratings.population import ROSTER_PERSISTENCE, PopulationConfig
from stream.ratings.rank_points import RankPointsConfig
from stream.ratings.seasons import SeasonsConfig
from stream.ratings.skill import PlayerState
from stream.ratings.teams import TeamStrategy


class QuitPolicy(StrEnum):
    # INVERSUS: the quitter loses; the opponents' match is cancelled (no automatic win).
    CANCEL = "cancel"
    # The opponents get their normal result from the reported ranks.
    NORMAL = "normal"


@dataclass(frozen=True, slots=True)
class ModeConfig:
    name: str
    algorithm: AlgorithmConfig = field(default_factory=Glicko2Config)
    teams: TeamStrategy = TeamStrategy.COMPOSITE_OPPONENT
    rank_points: RankPointsConfig = field(default_factory=RankPointsConfig)
    experience: ExperienceConfig = field(default_factory=ExperienceConfig)
    # What a quit does to the others' match: a rating rule, the same live and in replay.
    quits: QuitPolicy = QuitPolicy.CANCEL
    # None: no seasons (nothing resets). Otherwise the schedule and the soft reset a player
    # meets at their first match of a new season (stream/ratings/seasons.py).
    seasons: SeasonsConfig | None = None
    # The population's values (prior deviation, size edge, persistence) and whether they are
    # learned from the mode's history (stream/ratings/population/__init__.py).
    population: PopulationConfig = field(default_factory=PopulationConfig)
    # None: a newcomer starts as new. Otherwise the mode whose rating they start from, less
    # certain (stream/ratings/carryover.py).
    start: StartConfig | None = None
    # Whether a match's stats (each player's seconds) rate part-time play
    # (stream.ratings.parttime); false: every player is rated as if they played it all.
    part_time: bool = True
    # A member's share of their side's score moving them within the side (opt-in: points 0 is
    # off; stream.ratings.performance).
    performance: PerformanceConfig = field(default_factory=PerformanceConfig)
    # Derived once: the team strategy that rates a team match (``auto`` resolved by the
    # population's persistence: rosters as composite_opponent, reshuffled teams as shared).
    team_rule: TeamStrategy = field(init=False, repr=False, compare=False)
    # Derived once: the rating range Rank Points map onto (read on every update).
    rating_bounds: tuple[float, float] = field(init=False, repr=False, compare=False)
    # Derived once: less inactivity than this changes nothing (checked twice per update).
    decay_step_seconds: float = field(init=False, repr=False, compare=False)
    # Derived once, exactly one of the two set: what the algorithm rates from (pairwise
    # results, or the whole match); the engine dispatches on these, never on a name.
    pairwise: PairwiseAlgorithm | None = field(init=False, repr=False, compare=False)
    whole_match: MatchAlgorithm | None = field(init=False, repr=False, compare=False)
    # Derived once: the state of a player the mode has never seen (shared: it is immutable).
    initial: PlayerState = field(init=False, repr=False, compare=False)
    # Derived: whether updates carry each player's sensitivity to the learned drift, and the
    # algorithm that computes it (None: they do not).
    tracks_drift: bool = field(init=False, repr=False, compare=False)
    drift: DriftRate | None = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        algorithm = self.algorithm
        pairwise = algorithm if isinstance(algorithm, PairwiseAlgorithm) else None
        whole_match = algorithm if isinstance(algorithm, MatchAlgorithm) else None
        if (pairwise is None) == (whole_match is None):
            raise TypeError(
                f"{algorithm.name}: an algorithm rates from pairwise results or from the whole"
                " match (it needs exactly one of rate() and offsets())"
            )
        object.__setattr__(self, "pairwise", pairwise)
        object.__setattr__(self, "whole_match", whole_match)
        if whole_match is not None and self.experience.active:
            # The whole-match algorithm (ZoneStats) rates from match stats on its own
            # 500-centred scale, where an offset in 400-scale points means nothing: it keeps
            # only the provisional threshold.
            object.__setattr__(
                self, "experience", dataclasses.replace(self.experience, debut_offset=0.0)
            )
        rule = self.teams
        if rule is TeamStrategy.AUTO:
            rosters = self.population.persistence >= ROSTER_PERSISTENCE
            rule = TeamStrategy.COMPOSITE_OPPONENT if rosters else TeamStrategy.SHARED
        object.__setattr__(self, "team_rule", rule)
        object.__setattr__(self, "rating_bounds", self.algorithm.rating_bounds)
        object.__setattr__(self, "decay_step_seconds", self.algorithm.decay_step_seconds)
        skill = self.algorithm.initial()
        initial = PlayerState(skill.rating, skill.deviation, skill.volatility)
        object.__setattr__(self, "initial", initial)
        drift = algorithm if isinstance(algorithm, DriftRate) else None
        if not self.population.learns:
            drift = None
        object.__setattr__(self, "drift", drift)
        object.__setattr__(self, "tracks_drift", drift is not None)
