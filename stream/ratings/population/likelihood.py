"""What rated matches say about their mode's population: :class:`PopulationStats` (the sums of
each learned value's score and information, added in any order) and the evidence of one
update, one prediction or one match for each value (the log-likelihood's slope and curvature).

The sums of a whole match, stored as integers: stream.ratings.population.evidence.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from stream.ratings.drift import STEP as DRIFT_STEP
from stream.ratings.experience import shifted
from stream.ratings.parttime import Shares
from stream.ratings.population.values import Population
from stream.ratings.probability import sharpened, team_win_probability
from stream.ratings.skill import Rated, Result, SkillLike
from stream.ratings.teams import score_against

if TYPE_CHECKING:
    from stream.ratings.engine import PlayerUpdate
    from stream.ratings.modeconfig import ModeConfig

# A newcomer's rating stops depending on its start over its first few games; from
# SETTLED_GAMES on (a factor below 1e-5) a player's update says nothing about the prior.
SENSITIVITY_GAMES = 3.0
SETTLED_GAMES = 36


def lineup_key(team: Sequence[str]) -> int:
    """A stable 64-bit key of a team's lineup (its set of players): two players whose last
    match had the same key played it on the same team."""
    joined = "\x1f".join(sorted(team)).encode()
    return int.from_bytes(hashlib.blake2b(joined, digest_size=8).digest(), "big")


@dataclass(frozen=True, slots=True)
class PopulationStats:
    """The evidence of some rated matches about the population (sums: add in any order).

    ``prior_score`` / ``prior_information`` / ``newcomer_updates``: the prior deviation's
    gradient, Fisher information and weighted count of newcomer updates. ``edge_score`` /
    ``edge_information``: the same for the size edge. ``same_pairs`` / ``pairs``: teammate
    pairs whose previous lineup was the same, and all teammate pairs with a previous lineup.
    ``decisiveness_score`` / ``decisiveness_information``: the decisiveness's gradient and
    information from every prediction. ``drift_*``, ``offset_*`` and ``party_*``: the same for
    the log drift, the debut offset and the party edge.
    """

    prior_score: float = 0.0
    prior_information: float = 0.0
    newcomer_updates: float = 0.0
    edge_score: float = 0.0
    edge_information: float = 0.0
    same_pairs: int = 0
    pairs: int = 0
    decisiveness_score: float = 0.0
    decisiveness_information: float = 0.0
    drift_score: float = 0.0
    drift_information: float = 0.0
    offset_score: float = 0.0
    offset_information: float = 0.0
    party_score: float = 0.0
    party_information: float = 0.0

    def __add__(self, other: PopulationStats) -> PopulationStats:
        return PopulationStats(
            *(getattr(self, name) + getattr(other, name) for name in _STATS_FIELDS)
        )

    @property
    def prior_part(self) -> PopulationStats:
        """Only the prior deviation's evidence (what a window carries when it is too little)."""
        return PopulationStats(self.prior_score, self.prior_information, self.newcomer_updates)

    @property
    def without_prior(self) -> PopulationStats:
        """Everything but the prior deviation's evidence."""
        return dataclasses.replace(
            self, prior_score=0.0, prior_information=0.0, newcomer_updates=0.0
        )


EMPTY = PopulationStats()
# The sums' names in their declared order (also the order of their stored integers:
# stream.ratings.population.evidence).
_STATS_FIELDS = tuple(f.name for f in dataclasses.fields(PopulationStats))


def update_evidence(
    rules: ModeConfig, population: Population, update: PlayerUpdate
) -> PopulationStats:
    """What one player's update says about the prior deviation (nothing for an algorithm
    without one, or without pairwise results).

    ``rules`` is the mode as it rated the update (``population.rules(mode)``).
    """
    return prior_evidence(rules, population, update.state.games - 1, update.own, update.opponents)


def prior_evidence(
    rules: ModeConfig,
    population: Population,
    games: int,
    own: SkillLike,
    opponents: Sequence[Rated],
) -> PopulationStats:
    """:func:`update_evidence` of a player who had ``games`` games before the update, rated
    from ``own`` (their skill as played) against ``opponents`` (the update's results)."""
    algorithm = rules.pairwise
    prior = population.deviation
    if algorithm is None or prior is None or games >= SETTLED_GAMES:
        return EMPTY
    fade = math.exp(-games / SENSITIVITY_GAMES)
    ratio = own.deviation / prior
    # d rating / d log(prior): the normal model's sensitivity, faded with games.
    sensitivity = 2.0 * (own.rating - rules.initial.rating) * ratio * ratio * fade
    if sensitivity == 0.0:
        return PopulationStats(newcomer_updates=fade)
    score = information = 0.0
    terms = algorithm.update_terms
    for opponent in opponents:
        assert isinstance(opponent, Result)  # a pairwise update's opponents are its results
        expected, slope = terms(own, opponent)
        # A part-time player's result counts its share, as in the update (1: exactly).
        share = opponent.share
        score += (opponent.score - expected) * slope * sensitivity * share
        information += expected * (1.0 - expected) * (slope * sensitivity) ** 2 * share
    return PopulationStats(score, information, fade)


def size_evidence(
    rules: ModeConfig,
    teams: Sequence[Sequence[SkillLike]],
    ranks: Sequence[int],
    played: Shares | None = None,
) -> PopulationStats:
    """What a match between sides of different sizes says about the size edge: every pair of
    teams of unequal size, predicted as the rules in force predict it. With ``played`` (each
    member's share of the match: part-time play) a side's size is the sum of its shares."""
    algorithm = rules.algorithm
    strategy = rules.team_rule
    edge = rules.population.size_edge
    sizes = [float(len(team)) for team in teams] if played is None else [sum(p) for p in played]
    score = information = 0.0
    for i in range(len(teams)):
        for j in range(i + 1, len(teams)):
            if sizes[i] == sizes[j]:
                continue
            pair = None if played is None else (played[i], played[j])
            p = team_win_probability(algorithm, teams[i], teams[j], strategy, edge, shares=pair)
            # The logit is linear in the edge: its slope is the change for one more point.
            p_more = team_win_probability(
                algorithm, teams[i], teams[j], strategy, edge + 1.0, shares=pair
            )
            slope = _logit(p_more) - _logit(p)
            score += (score_against(ranks[i], ranks[j]) - p) * slope
            information += p * (1.0 - p) * slope * slope
    return PopulationStats(edge_score=score, edge_information=information)


def offset_sensitivity(games: int, deviation: float, prior: float, games_scale: float) -> float:
    """How far a player's rating as played moves for one more point of debut offset, at their
    ``games``-th game with ``deviation`` (a new player's: ``prior``): 1 at a debut, 0 from
    SETTLED_GAMES on (where it is within a few hundredths of 0 and fading like ``1 / games``).

    The offset's own share is ``f_g = exp(-games / games_scale)``; each earlier update has also
    moved the stored rating against it, by the share ``c_k`` of the player's uncertainty that
    update removed: ``S_0 = 1``, ``S_{k+1} = (1 - c_k) S_k - (f_k - f_{k+1})``. In the normal
    model with equal information ``i`` per game (in units of the prior's), read from the
    deviation (``R = (deviation / prior)^2 = 1 / (1 + games i)``), the product of the ``1 - c_j``
    over ``j = k + 1 .. g - 1`` is ``R (1 + (k + 1) i)`` and the sum has a closed form::

        S_g = R (f_g - i A_g),  A_g = (1 - (g + 1) q^g + g q^(g + 1)) / (1 - q),  q = f_1

    computed as ``R f_g - (1 - R) A_g / g`` (``R i = (1 - R) / g``: no division by ``R``, so a
    deviation of 0 is no special case). A seeded player's deviation may be smaller than their
    games imply: they count as having absorbed more than they have.

    Below ``f_g``: a newcomer who has played below their rating has had it lowered already, so
    a larger offset would count twice (the prediction's gradient alone, ``f_g``, pulls the
    learned offset past the value that predicts best: on the WTA tour to -400 points where -250
    to -300 predict best).
    """
    if games >= SETTLED_GAMES:
        return 0.0
    if games <= 0:
        return 1.0
    ratio = deviation / prior
    share = min(ratio * ratio, 1.0)
    q = math.exp(-1.0 / games_scale)
    fade = q**games
    absorbed = (1.0 - (games + 1) * fade + games * fade * q) / (1.0 - q)
    return share * fade - (1.0 - share) * absorbed / games


def offset_evidence(
    rules: ModeConfig,
    teams: Sequence[Sequence[SkillLike]],
    sensitivities: Sequence[Sequence[float]],
    ranks: Sequence[int],
    played: Shares | None = None,
) -> PopulationStats:
    """What a match's predictions say about the debut offset: every pair of teams as the
    rules in force predict it (``teams``: the skills as played) against the same with every
    player moved by their :func:`offset_sensitivity` (``sensitivities``, per player): the
    logit's slope for one more point of offset."""
    score, information = _points_evidence(rules, teams, sensitivities, ranks, played)
    return PopulationStats(offset_score=score, offset_information=information)


def party_evidence(
    rules: ModeConfig,
    teams: Sequence[Sequence[SkillLike]],
    offsets: Sequence[Sequence[float]],
    ranks: Sequence[int],
    played: Shares | None = None,
) -> PopulationStats:
    """What a match that names a party says about the party edge: every pair of teams as the
    rules in force predict it (``teams``: the skills as played, the edge in force already on
    every partied player) against the same with each partied player one point higher
    (``offsets``: 1 for a member of a party, 0 alone): the logit's slope per point."""
    score, information = _points_evidence(rules, teams, offsets, ranks, played)
    return PopulationStats(party_score=score, party_information=information)


def _points_evidence(
    rules: ModeConfig,
    teams: Sequence[Sequence[SkillLike]],
    moves: Sequence[Sequence[float]],
    ranks: Sequence[int],
    played: Shares | None,
) -> tuple[float, float]:
    """:func:`_moved_evidence` of a value in rating points: each player of ``teams`` moved by
    their ``moves`` for one more point of it."""
    moved = [
        [shifted(skill, points) for skill, points in zip(team, by, strict=True)]
        for team, by in zip(teams, moves, strict=True)
    ]
    return _moved_evidence(rules, teams, moved, ranks, 1.0, played)


def drift_evidence(
    rules: ModeConfig,
    teams: Sequence[Sequence[SkillLike]],
    moved: Sequence[Sequence[SkillLike]],
    ranks: Sequence[int],
    played: Shares | None = None,
) -> PopulationStats:
    """What a match's predictions say about the drift: every pair of teams as the rules in force
    predict it (``teams``: the skills as played) against the same from ``moved``, the skills a
    small step along the log drift (stream.ratings.drift.drifted_teams): the logit's slope."""
    score, information = _moved_evidence(rules, teams, moved, ranks, DRIFT_STEP, played)
    return PopulationStats(drift_score=score, drift_information=information)


def _moved_evidence(
    rules: ModeConfig,
    teams: Sequence[Sequence[SkillLike]],
    moved: Sequence[Sequence[SkillLike]],
    ranks: Sequence[int],
    step: float,
    played: Shares | None = None,
) -> tuple[float, float]:
    """The score and information of a parameter from every pair of teams as the rules in
    force predict it (``teams``, each side at its ``played`` shares: part-time play) against
    the same from ``moved``, the skills with the parameter ``step`` higher: the logit's slope
    per unit."""
    algorithm = rules.algorithm
    strategy = rules.team_rule
    edge = rules.population.size_edge
    decisiveness = rules.population.decisiveness
    score = information = 0.0
    for i in range(len(teams)):
        for j in range(i + 1, len(teams)):
            pair = None if played is None else (played[i], played[j])
            p = team_win_probability(algorithm, teams[i], teams[j], strategy, edge, shares=pair)
            p_more = team_win_probability(
                algorithm, moved[i], moved[j], strategy, edge, shares=pair
            )
            # As the prediction is made: sharpened by the decisiveness in force.
            slope = decisiveness * (_logit(p_more) - _logit(p)) / step
            p = sharpened(p, decisiveness)
            score += (score_against(ranks[i], ranks[j]) - p) * slope
            information += p * (1.0 - p) * slope * slope
    return score, information


def lineup_evidence(
    teams: Sequence[Sequence[str]], last_lineups: Mapping[str, int]
) -> PopulationStats:
    """Teammate pairs of a match whose previous lineups were the same (``last_lineups``: each
    player's :func:`lineup_key` at their previous match; a player without one is left out)."""
    same = pairs = 0
    for team in teams:
        keys = [last_lineups.get(pid) for pid in team]
        known = [k for k in keys if k is not None]
        for a in range(len(known)):
            for b in range(a + 1, len(known)):
                pairs += 1
                same += known[a] == known[b]
    return PopulationStats(same_pairs=same, pairs=pairs)


def prediction_evidence(p: float, actual: float, decisiveness: float) -> PopulationStats:
    """What one prediction says about the decisiveness: ``p`` the probability before it is
    applied (the algorithm's curve), ``actual`` the result (1, 0.5 or 0)."""
    logit = _logit(p)
    sharpened = 1.0 / (1.0 + math.exp(-decisiveness * logit))
    return PopulationStats(
        decisiveness_score=(actual - sharpened) * logit,
        decisiveness_information=sharpened * (1.0 - sharpened) * logit * logit,
    )


def predictions_evidence(
    rules: ModeConfig,
    population: Population,
    teams: Sequence[Sequence[SkillLike]],
    ranks: Sequence[int],
    played: Shares | None = None,
) -> PopulationStats:
    """What a match's predictions (every pair of teams, as the rules in force predict them
    before the decisiveness, each side at its ``played`` shares: part-time play) say about the
    decisiveness."""
    algorithm = rules.algorithm
    strategy = rules.team_rule
    edge = rules.population.size_edge
    found = EMPTY
    for i in range(len(teams)):
        for j in range(i + 1, len(teams)):
            pair = None if played is None else (played[i], played[j])
            p = team_win_probability(algorithm, teams[i], teams[j], strategy, edge, shares=pair)
            actual = score_against(ranks[i], ranks[j])
            found = found + prediction_evidence(p, actual, population.decisiveness)
    return found


def _logit(p: float) -> float:
    p = min(max(p, 1e-12), 1.0 - 1e-12)
    return math.log(p / (1.0 - p))
