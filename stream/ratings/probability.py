"""Win probabilities and match quality, for evaluation and for matchmakers.

Both deviations always count: an uncertain rating pulls a prediction towards a coin flip. A team
match is seen the way the mode's team strategy rates it (:func:`stream.ratings.teams.team_pair`):
the composite players for the composite strategies, the scaled gap between the team means for
``shared``, with the bigger side's size advantage in both. The mode's decisiveness (how
decisively a rating gap decides a match: stream.ratings.population) multiplies a prediction's
logit; it changes what is predicted, never a rating.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from stream.ratings.algorithm import AlgorithmConfig
from stream.ratings.skill import Skill, SkillLike
from stream.ratings.teams import TeamStrategy, team_pair


def sharpened(p: float, decisiveness: float) -> float:
    """``p`` with its logit multiplied by ``decisiveness`` (1: ``p`` itself)."""
    if decisiveness == 1.0 or p <= 0.0 or p >= 1.0:
        return p
    return 1.0 / (1.0 + math.exp(-decisiveness * math.log(p / (1.0 - p))))


def win_probability(
    algorithm: AlgorithmConfig, a: Skill, b: Skill, decisiveness: float = 1.0
) -> float:
    """Probability that player ``a`` beats player ``b`` (a draw counted as half), the mode's
    ``decisiveness`` applied."""
    return sharpened(algorithm.expected_score(a, b), decisiveness)


def team_win_probability(
    algorithm: AlgorithmConfig,
    team_a: Sequence[SkillLike],
    team_b: Sequence[SkillLike],
    strategy: TeamStrategy = TeamStrategy.COMPOSITE_OPPONENT,
    size_edge: float = 0.0,
    decisiveness: float = 1.0,
    shares: tuple[Sequence[float], Sequence[float]] | None = None,
) -> float:
    """Probability that team ``a`` beats team ``b`` under the team ``strategy`` (resolved, not
    ``auto``) with ``size_edge`` rating points for twice as many players and the mode's
    ``decisiveness`` applied; ``shares``: both teams' members' shares of the match (part-time
    play: stream.ratings.parttime; None: everyone plays all of it)."""
    a, b = team_pair(strategy, team_a, team_b, size_edge, shares)
    return sharpened(algorithm.expected_score(a, b), decisiveness)


def match_quality(
    algorithm: AlgorithmConfig,
    team_a: Sequence[SkillLike],
    team_b: Sequence[SkillLike],
    strategy: TeamStrategy = TeamStrategy.COMPOSITE_OPPONENT,
    size_edge: float = 0.0,
    decisiveness: float = 1.0,
    shares: tuple[Sequence[float], Sequence[float]] | None = None,
) -> float:
    """A figure in (0, 1] a matchmaker can sort candidate matches by; higher is better.

    TrueSkill's quality expressed with this algorithm's logistic scale: how likely a draw is,
    relative to two perfectly known equal teams. Evenly matched, well-known teams score near 1;
    a rating gap (the size advantage included, counted ``decisiveness`` times) or uncertainty
    about either side lowers it. ``shares``: as for :func:`team_win_probability` (a backfill
    joining a match under way plays only what is left of it).
    """
    a, b = team_pair(strategy, team_a, team_b, size_edge, shares)
    # Per-player performance spread of a logistic curve with this temperature.
    beta_sq = (algorithm.logistic_scale * math.pi) ** 2 / 6.0
    total = 2.0 * beta_sq + a.deviation**2 + b.deviation**2
    gap = (a.rating - b.rating) * decisiveness
    return math.sqrt(2.0 * beta_sq / total) * math.exp(-gap * gap / (2.0 * total))
