"""A mode's population: the values that are properties of who plays the mode, learned from it.

Six numbers depend on the players and the game rather than on the rating formulas, and no
constant suits every game: how widely a newcomer's true skill may lie from the start (the
**prior deviation**: narrow on a professional tour, broad on a free-to-play ladder), how much
stronger a side is with more players (the **size edge**), how often a team's players stay
together from one match to the next (the **persistence**: rosters and parties, or reshuffled
pickup teams; the ``auto`` team strategy follows it), and how decisively a rating gap decides a
match (the **decisiveness**: a best-of-five series more than a single map; it sharpens or
softens predictions only), and how fast true skills move with time (the **drift period**,
Glicko-2's ``period_days``: esports rosters and metagames change in weeks, tennis careers in
years), and how much weaker a newcomer plays than the rating they start with (the **debut
offset** of the experience term, stream.ratings.experience: a tour's newcomers are qualifiers,
a free-to-play ladder's are as good as anyone). A :class:`Population` holds the values in
force; ``rate_player`` and the predictions take it as an explicit input (``population=``), so a
mode is rated the same way wherever the same population is given.

Learning (``[population] window_days`` above 0) happens at fixed event-time boundaries: a match
finished at ``at`` belongs to window ``floor(at / window)``, and every rated match adds its
evidence to a :class:`PopulationStats` (sums only, so any number of partitions can add theirs in
any order). When a match of a later window arrives, the open window closes: the next
population is :func:`next_population` of the one in force and the closed window's sums (the
prior deviation's evidence is carried into the next window until it is enough,
:data:`MIN_EVIDENCE`). The population of a window therefore depends only on the matches of the
windows before it.

How each value is learned (a match's ``s`` is the result, ``E`` what the rules in force expected):

* prior deviation: a step of natural-gradient ascent on the log-likelihood of the results, in
  ``log(deviation)``. A player's rating moves from the start by roughly
  ``2 (rating - start) (deviation / prior)^2`` per unit of log-prior (the normal model's
  sensitivity), which fades over a player's first games (``exp(-games / 3)``: a settled rating
  no longer depends on where it started). Newcomers whose results keep beating (or missing) the
  expectation in the direction they already moved say the prior is too narrow (too broad).
  The step is the window's score over all the information seen so far plus
  :data:`PRIOR_INFORMATION` (a Newton step of the running maximum-likelihood estimate: large
  while a mode is new, small once its newcomers have said much), at most :data:`MAX_LOG_STEP`;
  the deviation stays within :data:`DEVIATION_BOUNDS`.
* size edge: Newton steps on the log-likelihood of the results of matches between sides of
  different sizes, each divided by all the information seen so far (it converges to the
  maximum-likelihood edge given the ratings).
* decisiveness: a Newton step per window on the log-likelihood of every prediction, damped by
  :data:`DECISIVENESS_PRIOR_INFORMATION` (it follows the predictions as the ratings mature).
* drift period: a Newton step per window on the log-likelihood of every prediction as made
  (sharpened), in the log of the drift (the period's reciprocal), damped by
  :data:`DRIFT_PRIOR_INFORMATION`; the slope of a prediction comes from each player's
  sensitivities to the drift, carried in their state (stream.ratings.drift); the period stays
  within :data:`DRIFT_PERIOD_BOUNDS`.
* debut offset: Newton steps on the log-likelihood of every prediction as made (sharpened),
  each divided by all the information seen so far plus :data:`OFFSET_PRIOR_INFORMATION` (the
  running maximum-likelihood offset, held near its start while the evidence is little). A
  player's rating as played moves with the offset by :func:`offset_sensitivity`: the offset's
  own share at the player's games, less what the player's earlier updates have absorbed of it
  (a newcomer who played below their rating has had their rating lowered, so the same offset
  counts less at their tenth game than ``exp(-10 / games_scale)`` says). Learned for the
  algorithms with a prior deviation whose experience term is on; at most
  :data:`MAX_OFFSET_STEP` a window.
* persistence: the share of teammate pairs whose lineup at the previous match was the same
  (:func:`lineup_key`), counted over the mode's whole history, starting from the configured
  value as if it had been seen on :data:`PERSISTENCE_PRIOR_PAIRS` pairs.

``[population] hold`` names values a learning mode keeps at their configured start while it
learns the others (:data:`LEARNED_VALUES`): a designer who knows a value for their game, or who
wants to see where the evidence of one value points with it held.

Quick start::

    >>> from stream.ratings.population import PopulationConfig, next_population, start
    >>> from stream.ratings.modeconfig import ModeConfig
    >>> mode = ModeConfig("duel", population=PopulationConfig(window_days=1.0))
    >>> round(start(mode).deviation, 1), start(mode).size_edge
    (350.0, 0.0)
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from stream.ratings.algorithm import DriftRate, PriorDeviation
from stream.ratings.drift import STEP as DRIFT_STEP
from stream.ratings.experience import ExperienceConfig, shifted
from stream.ratings.probability import sharpened, team_win_probability
from stream.ratings.ranges import ConfigError, Range, check_ranges
from stream.ratings.skill import Result, SkillLike
from stream.ratings.teams import score_against

if TYPE_CHECKING:
    from stream.ratings.engine import PlayerUpdate
    from stream.ratings.modeconfig import ModeConfig

_SECONDS_PER_DAY = 86_400.0
# A newcomer's rating stops depending on its start over its first few games; from
# SETTLED_GAMES on (a factor below 1e-5) a player's update says nothing about the prior.
SENSITIVITY_GAMES = 3.0
SETTLED_GAMES = 36
# The largest change of log(prior deviation) one window makes (a factor of 1.22).
MAX_LOG_STEP = 0.2
# The prior deviation's Newton steps count this much information (in units of the log-prior's
# Fisher information) besides all the mode's newcomers have shown so far: a window of a new
# mode holds 1 to 10, so the first windows move it by a tenth to a quarter of their Newton
# step, and a mode with years of newcomers hardly at all (10, 30 and 50 tried: 30 best on
# the shared histories, docs/defaults.md).
PRIOR_INFORMATION = 30.0
# Newcomer updates a window needs before it may move the prior deviation (fewer are carried
# into the next window).
MIN_EVIDENCE = 100.0
# A window's Newton step of the decisiveness counts this much information besides the window's
# own (a prior of +-0.05 around where it stands): it follows the ratings as they mature.
DECISIVENESS_PRIOR_INFORMATION = 400.0
# The version of the rules above that learn a population: a chain learned under other rules
# is not continued (stream.pipeline.learnedpopulation.settings_of). 3: the debut offset is learned;
# 2: the prior deviation's steps over all its information (1: each window's own, damped by its
# newcomer updates).
LEARNING_RULES = 3
# The debut offset's Newton steps start from this much information (a prior of +-100 points
# around its configured value; 50, 100, 150 and 300 tried: docs/defaults.md).
OFFSET_PRIOR_INFORMATION = 1.0 / (100.0 * 100.0)
# The largest change of the debut offset one window makes (rating points).
MAX_OFFSET_STEP = 50.0
# The prior deviation stays between these, in public rating points (Glicko-2: 0.29 to 2.59).
DEVIATION_BOUNDS = (50.0, 450.0)
# The size edge's Newton steps start from this much information (a prior of +-100 points).
EDGE_PRIOR_INFORMATION = 1.0 / (100.0 * 100.0)
# A window's Newton step of the log drift counts this much information besides the window's own
# (chosen on the choosing windows of docs/defaults.md: 1, 3, 10 and 30 were tried).
DRIFT_PRIOR_INFORMATION = 3.0
# The largest change of the log drift one window makes (a factor of 2.7: a window whose
# evidence says more is rare, and one such window must not throw the period to a bound).
MAX_DRIFT_STEP = 1.0
# The learned drift period stays within these (days): from skills that move within days to
# ones that hardly move in a year.
DRIFT_PERIOD_BOUNDS = (0.5, 365.0)
# The persistence starts as if its configured value had been seen on this many teammate pairs
# (a new mode's first reshuffled matches switch ``auto`` within a window or two).
PERSISTENCE_PRIOR_PAIRS = 20.0
# ``auto`` rates a mode's teams as rosters (composite_opponent) from this persistence on.
ROSTER_PERSISTENCE = 0.5
_EDGE_WHY = (
    "rating points a side gains with twice as many players (0: the sides' sizes do not matter);"
    " beyond 1000 one extra player decides every match"
)
_WINDOW_WHY = (
    "days of event time between the boundaries where a learned population is recomputed "
    "(0: the population's values are fixed as configured); at most a year"
)
_DECISIVENESS_WHY = (
    "how decisively a rating gap decides a match against the algorithm's curve: a prediction's"
    " logit times this (above 1: a best-of-five series more than one game); predictions only"
)
# The learned values by their names in a Population (and in rating-changed's population and a
# modes file's ``[population] hold``).
LEARNED_VALUES = (
    "deviation",
    "size_edge",
    "persistence",
    "decisiveness",
    "drift_period",
    "debut_offset",
)
_PERSISTENCE_WHY = (
    "the share of teammates who were teammates at the previous match (1: fixed rosters, "
    "0: teams reshuffled every match); where learning starts, or the value kept"
)


@dataclass(frozen=True, slots=True)
class PopulationConfig:
    """A mode's population settings: the starting (or fixed) values and how often to learn.

    The prior deviation starts at the algorithm's own (``glicko2.unrated_deviation``,
    ``glicko1.initial_deviation``); Elo and ZoneStats have none to learn.
    """

    window_days: float = 0.0
    size_edge: float = 0.0
    persistence: float = 1.0
    decisiveness: float = 1.0
    # Learned values kept at their configured start (names of LEARNED_VALUES; a modes file's
    # list becomes a tuple).
    hold: tuple[str, ...] = ()

    RANGES: ClassVar[Mapping[str, Range]] = {
        "window_days": Range(0.0, 366.0, _WINDOW_WHY),
        "size_edge": Range(-1000.0, 1000.0, _EDGE_WHY),
        "persistence": Range(0.0, 1.0, _PERSISTENCE_WHY),
        "decisiveness": Range(0.2, 5.0, _DECISIVENESS_WHY),
    }

    def __post_init__(self) -> None:
        check_ranges(self, self.RANGES)
        given: object = self.hold
        if not isinstance(given, list | tuple) or not all(
            isinstance(name, str) and name in LEARNED_VALUES for name in given
        ):
            raise ConfigError("hold", f"must list names of {list(LEARNED_VALUES)}, got {given!r}")
        if len(set(given)) != len(given):
            raise ConfigError("hold", f"names a value twice: {list(given)!r}")
        # Sorted: the same values held are the same settings, whichever order a file lists.
        object.__setattr__(self, "hold", tuple(sorted(given)))

    @property
    def learns(self) -> bool:
        return self.window_days > 0.0

    def window_of(self, at: float) -> int:
        """The learning window of event time ``at`` (epoch seconds)."""
        return math.floor(at / (self.window_days * _SECONDS_PER_DAY))

    def boundary(self, window: int) -> float:
        """The boundary (epoch seconds) where learning window ``window`` starts."""
        return window * (self.window_days * _SECONDS_PER_DAY)


@dataclass(frozen=True, slots=True)
class Population:
    """The values in force for a window of a mode: the input that rates and predicts it.

    ``deviation``: a new player's (and the largest) deviation in public points, None for an
    algorithm without one. ``size_edge``: rating points for twice as many players.
    ``persistence``: the share of teammates kept from the previous match. ``decisiveness``:
    what a prediction's logit is multiplied by (predictions only: no rating depends on it).
    ``drift_period``: the days of inactivity that grow a deviation by one rating period's
    volatility (Glicko-2's ``period_days``; shorter: skills drift faster; stream.ratings.drift),
    None for an algorithm whose deviation does not grow with time. ``debut_offset``: the
    experience term's rating points at a player's debut, None where it is not learned (an
    algorithm without a prior deviation, or the term switched off; the cache's population
    carries the offset in force, learned or not, and 0 for a term switched off).
    """

    deviation: float | None
    size_edge: float
    persistence: float
    decisiveness: float = 1.0
    drift_period: float | None = None
    debut_offset: float | None = None
    # The mode's rules with these values, built once per mode that asks (by identity: a
    # mode's rules are one object for its whole life).
    _rules: dict[int, tuple[ModeConfig, ModeConfig]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def rules(self, mode: ModeConfig) -> ModeConfig:
        """``mode`` with these values in force (the mode itself when they are its own)."""
        found = self._rules.get(id(mode))
        if found is not None and found[0] is mode:
            return found[1]
        applied = _applied(mode, self)
        self._rules[id(mode)] = (mode, applied)
        return applied


def start(mode: ModeConfig) -> Population:
    """The population a mode starts with: its configured values."""
    algorithm = mode.algorithm
    deviation = algorithm.prior_deviation if isinstance(algorithm, PriorDeviation) else None
    config = mode.population
    period = algorithm.drift_period if isinstance(algorithm, DriftRate) else None
    experience = mode.experience
    offset = experience.debut_offset if deviation is not None and experience.active else None
    return Population(
        deviation, config.size_edge, config.persistence, config.decisiveness, period, offset
    )


def _applied(mode: ModeConfig, population: Population) -> ModeConfig:
    algorithm = mode.algorithm
    if (
        population.deviation is not None
        and isinstance(algorithm, PriorDeviation)
        and population.deviation != algorithm.prior_deviation
    ):
        algorithm = algorithm.with_prior_deviation(population.deviation)
    period = population.drift_period
    if period is not None and isinstance(algorithm, DriftRate) and period != algorithm.drift_period:
        algorithm = algorithm.with_drift_period(period)
    config = mode.population
    learned = (population.size_edge, population.persistence, population.decisiveness)
    if learned != (config.size_edge, config.persistence, config.decisiveness):
        config = dataclasses.replace(
            config,
            size_edge=population.size_edge,
            persistence=population.persistence,
            decisiveness=population.decisiveness,
        )
    experience = mode.experience
    offset = population.debut_offset
    # 0 is never learned (it would switch the term off): a population that says 0 carries the
    # offset of a mode whose term was off (the cache's, written before the modes file changed).
    if offset and experience.active and offset != experience.debut_offset:
        experience = dataclasses.replace(experience, debut_offset=offset)
    if algorithm is mode.algorithm and config is mode.population and experience is mode.experience:
        return mode
    return dataclasses.replace(mode, algorithm=algorithm, population=config, experience=experience)


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
    information from every prediction. ``drift_*`` and ``offset_*``: the same for the log drift
    and the debut offset.
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
    algorithm = rules.pairwise
    prior = population.deviation
    games = update.state.games - 1
    if algorithm is None or prior is None or games >= SETTLED_GAMES:
        return EMPTY
    fade = math.exp(-games / SENSITIVITY_GAMES)
    own = update.own
    ratio = own.deviation / prior
    # d rating / d log(prior): the normal model's sensitivity, faded with games.
    sensitivity = 2.0 * (own.rating - rules.initial.rating) * ratio * ratio * fade
    if sensitivity == 0.0:
        return PopulationStats(newcomer_updates=fade)
    score = information = 0.0
    terms = algorithm.update_terms
    for opponent in update.opponents:
        assert isinstance(opponent, Result)  # a pairwise update's opponents are its results
        expected, slope = terms(own, opponent)
        score += (opponent.score - expected) * slope * sensitivity
        information += expected * (1.0 - expected) * (slope * sensitivity) ** 2
    return PopulationStats(score, information, fade)


def size_evidence(
    rules: ModeConfig,
    teams: Sequence[Sequence[SkillLike]],
    ranks: Sequence[int],
) -> PopulationStats:
    """What a match between sides of different sizes says about the size edge: every pair of
    teams of unequal size, predicted as the rules in force predict it."""
    algorithm = rules.algorithm
    strategy = rules.team_rule
    edge = rules.population.size_edge
    score = information = 0.0
    for i in range(len(teams)):
        for j in range(i + 1, len(teams)):
            if len(teams[i]) == len(teams[j]):
                continue
            p = team_win_probability(algorithm, teams[i], teams[j], strategy, edge)
            # The logit is linear in the edge: its slope is the change for one more point.
            p_more = team_win_probability(algorithm, teams[i], teams[j], strategy, edge + 1.0)
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
) -> PopulationStats:
    """What a match's predictions say about the debut offset: every pair of teams as the
    rules in force predict it (``teams``: the skills as played) against the same with every
    player moved by their :func:`offset_sensitivity` (``sensitivities``, per player): the
    logit's slope for one more point of offset."""
    moved = [
        [shifted(skill, share) for skill, share in zip(team, shares, strict=True)]
        for team, shares in zip(teams, sensitivities, strict=True)
    ]
    score, information = _moved_evidence(rules, teams, moved, ranks, 1.0)
    return PopulationStats(offset_score=score, offset_information=information)


def drift_evidence(
    rules: ModeConfig,
    teams: Sequence[Sequence[SkillLike]],
    moved: Sequence[Sequence[SkillLike]],
    ranks: Sequence[int],
) -> PopulationStats:
    """What a match's predictions say about the drift: every pair of teams as the rules in force
    predict it (``teams``: the skills as played) against the same from ``moved``, the skills a
    small step along the log drift (stream.ratings.drift.drifted_teams): the logit's slope."""
    score, information = _moved_evidence(rules, teams, moved, ranks, DRIFT_STEP)
    return PopulationStats(drift_score=score, drift_information=information)


def _moved_evidence(
    rules: ModeConfig,
    teams: Sequence[Sequence[SkillLike]],
    moved: Sequence[Sequence[SkillLike]],
    ranks: Sequence[int],
    step: float,
) -> tuple[float, float]:
    """The score and information of a parameter from every pair of teams as the rules in
    force predict it (``teams``) against the same from ``moved``, the skills with the
    parameter ``step`` higher: the logit's slope per unit."""
    algorithm = rules.algorithm
    strategy = rules.team_rule
    edge = rules.population.size_edge
    decisiveness = rules.population.decisiveness
    score = information = 0.0
    for i in range(len(teams)):
        for j in range(i + 1, len(teams)):
            p = team_win_probability(algorithm, teams[i], teams[j], strategy, edge)
            p_more = team_win_probability(algorithm, moved[i], moved[j], strategy, edge)
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
) -> PopulationStats:
    """What a match's predictions (every pair of teams, as the rules in force predict them
    before the decisiveness) say about the decisiveness."""
    algorithm = rules.algorithm
    strategy = rules.team_rule
    edge = rules.population.size_edge
    found = EMPTY
    for i in range(len(teams)):
        for j in range(i + 1, len(teams)):
            p = team_win_probability(algorithm, teams[i], teams[j], strategy, edge)
            actual = score_against(ranks[i], ranks[j])
            found = found + prediction_evidence(p, actual, population.decisiveness)
    return found


def next_population(
    config: PopulationConfig, current: Population, stats: PopulationStats, seen: PopulationStats
) -> tuple[Population, PopulationStats]:
    """The population after a window whose evidence is ``stats``, and the evidence carried into
    the next window (the prior deviation's, while it is less than :data:`MIN_EVIDENCE` newcomer
    updates). ``seen`` is the evidence of every window so far, this one included (the running
    sums of the prior deviation's information, size edge, persistence, decisiveness and debut
    offset);
    ``config`` the mode's settings (the persistence's starting value; the values it holds keep
    the ones in ``current``)."""
    held = config.hold
    deviation = current.deviation
    carried = EMPTY
    if "deviation" not in held:
        if stats.newcomer_updates < MIN_EVIDENCE:
            carried = stats.prior_part
        elif deviation is not None and stats.prior_information > 0.0:
            step = stats.prior_score / (seen.prior_information + PRIOR_INFORMATION)
            step = max(-MAX_LOG_STEP, min(MAX_LOG_STEP, step))
            low, high = DEVIATION_BOUNDS
            deviation = min(high, max(low, deviation * math.exp(step)))
    edge = current.size_edge
    if stats.edge_information > 0.0 and "size_edge" not in held:
        edge += stats.edge_score / (seen.edge_information + EDGE_PRIOR_INFORMATION)
        accepted = PopulationConfig.RANGES["size_edge"]
        edge = min(accepted.high, max(accepted.low, edge))
    persistence = current.persistence
    if stats.pairs and "persistence" not in held:
        prior = PERSISTENCE_PRIOR_PAIRS
        persistence = (seen.same_pairs + prior * config.persistence) / (seen.pairs + prior)
    decisiveness = current.decisiveness
    if stats.decisiveness_information > 0.0 and "decisiveness" not in held:
        decisiveness += stats.decisiveness_score / (
            stats.decisiveness_information + DECISIVENESS_PRIOR_INFORMATION
        )
        accepted = PopulationConfig.RANGES["decisiveness"]
        decisiveness = min(accepted.high, max(accepted.low, decisiveness))
    period = current.drift_period
    if period is not None and stats.drift_information > 0.0 and "drift_period" not in held:
        # The evidence is for the log of the drift, the period's reciprocal.
        step = stats.drift_score / (stats.drift_information + DRIFT_PRIOR_INFORMATION)
        step = max(-MAX_DRIFT_STEP, min(MAX_DRIFT_STEP, step))
        low, high = DRIFT_PERIOD_BOUNDS
        period = min(high, max(low, period * math.exp(-step)))
    offset = current.debut_offset
    if offset is not None and stats.offset_information > 0.0 and "debut_offset" not in held:
        step = stats.offset_score / (seen.offset_information + OFFSET_PRIOR_INFORMATION)
        step = max(-MAX_OFFSET_STEP, min(MAX_OFFSET_STEP, step))
        accepted = ExperienceConfig.RANGES["debut_offset"]
        moved = min(accepted.high, max(accepted.low, offset + step))
        # 0 would switch the experience term off: a step that lands there is not taken.
        offset = moved if moved != 0.0 else offset
    return Population(deviation, edge, persistence, decisiveness, period, offset), carried


def _logit(p: float) -> float:
    p = min(max(p, 1e-12), 1.0 - 1e-12)
    return math.log(p / (1.0 - p))
