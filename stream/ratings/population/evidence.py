"""A rated match's evidence about its mode's population, in integers: one function for the live
match side and for replay, and sums that do not depend on the order they are added in.

Floating-point addition is not associative: partitions adding their parts in whatever order
the broker delivers them would reach sums that differ in the last bits from replay's, and a
population computed from them could differ from replay's. So every part is quantised once, where
it is made (each player's update, each match's predictions and line-ups), to integers in units
of ``2**-32`` (:data:`SCALE`), and only integers are added. Quantising one part twice gives the
same integers, so live (stream/pipeline) and replay (stream/offline/learning.py) reach the same
sums bit for bit whenever they see the same parts.

Which parts a match has: every rated player's update (the prior deviation's evidence,
newcomers only), and once per match with a result, rated as played
(no quitters, nobody abandoned or timed out first), its predictions and sides
(:func:`match_part`: the decisiveness, the size edge, the drift and the debut offset) and its
teammates' previous line-ups (the persistence).
"""

from __future__ import annotations

import dataclasses
import math
import operator
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from stream.ratings.algorithm import DriftRate
from stream.ratings.drift import STEP as DRIFT_STEP
from stream.ratings.drift import drifted, drifted_teams
from stream.ratings.engine import (
    DuelSeen,
    MatchView,
    PlayerUpdate,
    duel_met,
    initial_state,
    rate_match,
    rate_player,
    season_entered,
    skill_at,
)
from stream.ratings.experience import shifted
from stream.ratings.modeconfig import ModeConfig
from stream.ratings.parties import Parties, partied, party_offsets
from stream.ratings.parttime import Shares
from stream.ratings.population import (
    SETTLED_GAMES,
    Population,
    PopulationStats,
    drift_evidence,
    lineup_evidence,
    offset_evidence,
    offset_sensitivity,
    party_evidence,
    predictions_evidence,
    prior_evidence,
    size_evidence,
    update_evidence,
)
from stream.ratings.resolution import rated_players
from stream.ratings.settling import Fate, Settled
from stream.ratings.skill import PlayerState, Rated, Result, Skill, SkillLike

__all__ = [
    "NONE",
    "SCALE",
    "Evidence",
    "add_match_evidence",
    "is_team_match",
    "match_evidence",
    "match_part",
    "newcomers_of",
    "played_skills",
    "quantised",
    "rate_settled",
]

# One unit of a quantised sum: 2**-32. A window's sums stay far below 2**63 units (orjson's
# integer limit) for any real mode: a prior score of 1e8 would be 4e17 units.
SCALE = 1 << 32
# The same as a float (a float times SCALE converts it so: the kernels take floats).
_FLOAT_SCALE = float(SCALE)


# The sums in their stored order: PopulationStats's fields, the one declaration of what a
# window's evidence holds. The pair counts are kept as they are; every other sum in units.
NAMES: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(PopulationStats))
FIELDS = len(NAMES)
_COUNTED = tuple(name in ("same_pairs", "pairs") for name in NAMES)
# Where the sums added in place go (a score; its information, and the newcomer updates after
# the prior's, follow it).
PRIOR = NAMES.index("prior_score")
DECISIVENESS = NAMES.index("decisiveness_score")
DRIFT = NAMES.index("drift_score")
OFFSET = NAMES.index("offset_score")
PARTY = NAMES.index("party_score")
# What a worker wrote before the drift (9 sums), the debut offset (11) and the party edge (13)
# were learned.
_OLDER_LENGTHS = (DRIFT, OFFSET, PARTY)


@dataclass(frozen=True, slots=True)
class Evidence:
    """:class:`PopulationStats` in integer units of 2**-32 (the counts of pairs as they are),
    ``sums`` in :data:`NAMES`' order: integers add exactly in any order, so the windows a
    mode's partitions send add up to the same population wherever they meet."""

    sums: tuple[int, ...] = (0,) * FIELDS

    def __add__(self, other: Evidence) -> Evidence:
        return Evidence(tuple(map(operator.add, self.sums, other.sums)))

    def __bool__(self) -> bool:
        return any(self.sums)

    def unit(self, name: str) -> int:
        """One sum by its name in :class:`PopulationStats`, in integer units."""
        return self.sums[NAMES.index(name)]

    def stats(self) -> PopulationStats:
        """The sums as the population's update reads them (exact: a division by 2**32)."""
        values: list[float] = [
            n if counted else n / SCALE for n, counted in zip(self.sums, _COUNTED, strict=True)
        ]
        return PopulationStats(*values)  # type: ignore[arg-type]  # the counts are ints

    def encode(self) -> list[int]:
        """The sums, without the party edge's two when both are 0 (a match, or a mode, that
        names no party writes what a worker before parties wrote, and reads)."""
        sums = self.sums
        return list(sums if sums[PARTY] or sums[PARTY + 1] else sums[:PARTY])

    @classmethod
    def decode(cls, data: Sequence[int]) -> Evidence:
        """From :meth:`encode`'s list (ValueError when it is not 15 integers, the 13 a worker
        wrote before the party edge was learned, the 11 before the debut offset was, or the 9
        before the drift was: the sums it did not write are 0)."""
        if len(data) not in (*_OLDER_LENGTHS, FIELDS) or not all(
            isinstance(n, int) and not isinstance(n, bool) for n in data
        ):
            raise ValueError(f"evidence: expected {FIELDS} integers, got {list(data)!r:.80}")
        return cls((*data, *(0,) * (FIELDS - len(data))))


NONE = Evidence()


def quantised(stats: PopulationStats) -> Evidence:
    """``stats`` in integer units (round half to even, as ``round`` does)."""
    return Evidence(
        tuple(
            value if counted else round(value * SCALE)
            for value, counted in zip(
                (getattr(stats, name) for name in NAMES), _COUNTED, strict=True
            )
        )
    )


def match_evidence(
    rules: ModeConfig,
    population: Population,
    teams: Sequence[Sequence[str]],
    ranks: Sequence[int],
    at: float,
    states: Mapping[str, PlayerState],
    updates: Mapping[str, PlayerUpdate],
    lineups: Mapping[str, int],
    *,
    as_played: bool,
    played: Shares | None = None,
    parties: Parties | None = None,
) -> Evidence:
    """Everything a match with a result says about its mode's population: every rated
    player's update in ``updates`` (rated with ``rules``, the mode with ``population`` in
    force, from the participants' ``states`` before the match), its teammates' previous
    line-ups (``lineups``: each player's line-up key at their previous team match) and, when
    it was rated ``as_played`` (no quitters, nobody abandoned or timed out first), its
    predictions and sides at ``at``, each side at its members' ``played`` shares of the match
    (stream.ratings.parttime; None: everyone played all of it), its ``parties``' members at the
    party edge in force (stream.ratings.parties)."""
    sums = [0] * FIELDS
    add_match_evidence(
        sums,
        rules,
        population,
        teams,
        ranks,
        at,
        states,
        updates,
        lineups,
        as_played=as_played,
        played=played,
        parties=parties,
    )
    return Evidence(tuple(sums))


def add_match_evidence(
    sums: list[int],
    rules: ModeConfig,
    population: Population,
    teams: Sequence[Sequence[str]],
    ranks: Sequence[int],
    at: float,
    states: Mapping[str, PlayerState],
    updates: Mapping[str, PlayerUpdate],
    lineups: Mapping[str, int],
    *,
    as_played: bool,
    rated_here: bool = False,
    played: Shares | None = None,
    parties: Parties | None = None,
) -> None:
    """:func:`match_evidence` added in place to ``sums`` (:meth:`Evidence.encode`'s order):
    integers, so adding each part where it is made equals adding the match's total (a duel in
    a mode that learns its drift: :func:`add_duel_evidence`, as replay's :func:`add_rated_duel`
    too). ``rated_here``: ``updates`` are
    :func:`~stream.ratings.engine.rate_match`'s from these ``states`` (replay), so a duel's
    prediction is read from its first player's update (the skills it was rated from, the same
    numbers :func:`~stream.ratings.engine.duel_met` computes) instead of computed again.
    ``played``: each participant's share of the match (part-time play: team matches only);
    ``parties``: the match's parties (stream.ratings.parties)."""
    duel = len(teams) == 2 and len(teams[0]) == 1 and len(teams[1]) == 1
    if as_played and duel:
        # The duel's prediction is its first player's expected score against the other as
        # met (both deviations combined, the experience offsets applied), without the update:
        # a settled player's is not needed.
        (a,), (b,) = teams
        if rules.pairwise is not None and a != b:
            rated = updates.get(a) if rated_here else None
            own: SkillLike
            met: Rated
            if rated is None:
                own, met = duel_met(rules, states.get(a), states.get(b), at)
            else:
                own, met = rated.own, rated.opponents[0]
            actual = 1.0 if ranks[0] < ranks[1] else 0.0 if ranks[0] > ranks[1] else 0.5
            offsets = _duel_shares(
                rules, population, states.get(a), states.get(b), own.deviation, met.deviation
            )
            drift = rules.drift
            if drift is None:
                _add_prediction(sums, rules, population, own, met, actual, offsets)
            else:
                steps = _duel_moved(rules, states, teams, at, own, met, rated)
                add_duel_evidence(
                    sums, drift, population.decisiveness, own.rating, own.deviation,
                    met.rating, met.deviation, actual, steps, offsets,
                )  # fmt: skip
    elif as_played or is_team_match(teams):
        # A pairwise mode learns its party edge from the match's parties, at 0 too.
        members = partied(parties) if rules.pairwise is not None else frozenset()
        skills = played_skills(rules, states, teams, at, members) if as_played else None
        moved = None
        if skills is not None and rules.tracks_drift:
            moved = drifted_teams(
                teams, _entered(rules, states, teams, at), skills, rules.initial.deviation
            )
        shares = None
        prior = population.deviation
        if skills is not None and population.debut_offset is not None and prior is not None:
            shares = _offset_shares(rules, prior, states, teams, skills)
        found = match_part(
            rules, population, teams, ranks, skills, lineups, moved, shares, played, members
        )
        for index, units in enumerate(found.sums):
            sums[index] += units
    for update in updates.values():
        # Settled players say nothing about the prior: skip them without a call (and
        # ``updates`` may leave them out: newcomers_of).
        if update.state.games <= SETTLED_GAMES:
            _add_prior(sums, update_evidence(rules, population, update))


def _add_prior(sums: list[int], stats: PopulationStats) -> None:
    """A newcomer's update's evidence about the prior (:func:`update_evidence`), quantised and
    added in place."""
    if stats.newcomer_updates:
        sums[PRIOR] += round(stats.prior_score * SCALE)
        sums[PRIOR + 1] += round(stats.prior_information * SCALE)
        sums[PRIOR + 2] += round(stats.newcomer_updates * SCALE)


def add_rated_duel(
    sums: list[int],
    rules: ModeConfig,
    population: Population,
    drift: DriftRate,
    before: tuple[PlayerState | None, PlayerState | None],
    after: tuple[PlayerState, PlayerState],
    seen: DuelSeen,
    score_a: float,
    moves: tuple[float, ...] | None,
) -> None:
    """:func:`add_match_evidence` of a duel as played in a mode that learns its drift, rated by
    :func:`~stream.ratings.engine.duel_states` (``seen``, ``moves``) from the players' stored
    states ``before`` it (None: new) to ``after`` it, the first scoring ``score_a``: the same
    sums, without the updates."""
    a_own, a_dev, a_met, b_own, b_dev, b_met = seen
    shares = _duel_shares(rules, population, before[0], before[1], a_dev, b_dev)
    add_duel_evidence(
        sums, drift, population.decisiveness, a_own, a_dev, b_met, b_dev, score_a, moves, shares
    )
    new_a, new_b = after
    # update_evidence of each newcomer's update: the same skill, against the same result.
    if new_a.games <= SETTLED_GAMES:
        opponent = Result(b_met, b_dev, score_a)
        stats = prior_evidence(rules, population, new_a.games - 1, Skill(a_own, a_dev), (opponent,))
        _add_prior(sums, stats)
    if new_b.games <= SETTLED_GAMES:
        opponent = Result(a_met, a_dev, 1.0 - score_a)
        stats = prior_evidence(rules, population, new_b.games - 1, Skill(b_own, b_dev), (opponent,))
        _add_prior(sums, stats)


def match_part(
    rules: ModeConfig,
    population: Population,
    teams: Sequence[Sequence[str]],
    ranks: Sequence[int],
    skills: Sequence[Sequence[SkillLike]] | None,
    lineups: Mapping[str, int],
    moved: Sequence[Sequence[SkillLike]] | None = None,
    shares: Sequence[Sequence[float]] | None = None,
    played: Shares | None = None,
    members: frozenset[str] = frozenset(),
) -> Evidence:
    """A match's predictions and sides from the participants' ``skills`` as played
    (:func:`played_skills`; None: not rated as played, no prediction) and its teammates'
    previous line-ups (none for a 1v1), quantised together; with ``moved`` (the skills with the
    log drift one higher: a mode that learns its drift) the drift's evidence too, and with
    ``shares`` (each player's :func:`~stream.ratings.population.offset_sensitivity`: a mode that
    learns its debut offset) the offset's; ``played``: each participant's share of the match
    (part-time play), which every prediction here sees; ``members``: the players in a party
    of at least two (the party edge's evidence, stream.ratings.parties)."""
    stats = PopulationStats()
    if skills is not None:
        stats = stats + predictions_evidence(rules, population, skills, ranks, played)
        if moved is not None:
            stats = stats + drift_evidence(rules, skills, moved, ranks, played)
        if played is not None or len({len(team) for team in teams}) > 1:
            stats = stats + size_evidence(rules, skills, ranks, played)
        if shares is not None and any(any(team) for team in shares):
            stats = stats + offset_evidence(rules, skills, shares, ranks, played)
        marks = party_offsets(teams, members, 1.0)
        if marks is not None:
            stats = stats + party_evidence(rules, skills, marks, ranks, played)
    if is_team_match(teams):
        stats = stats + lineup_evidence(teams, lineups)
    return quantised(stats)


def _offset_shares(
    rules: ModeConfig,
    prior: float,
    states: Mapping[str, PlayerState],
    teams: Sequence[Sequence[str]],
    skills: Sequence[Sequence[SkillLike]],
) -> list[list[float]]:
    """Each participant's :func:`~stream.ratings.population.offset_sensitivity` as the match
    is played (a player not in ``states``: a debut; ``prior``: the population's deviation)."""
    scale = rules.experience.games_scale
    return [
        [
            offset_sensitivity(
                state.games if (state := states.get(pid)) is not None else 0,
                skill.deviation,
                prior,
                scale,
            )
            for pid, skill in zip(team, team_skills, strict=True)
        ]
        for team, team_skills in zip(teams, skills, strict=True)
    ]


def _add_slope(
    sums: list[int],
    index: int,
    p_more: float,
    logit: float,
    sharp: float,
    actual: float,
    decisiveness: float,
    step: float,
) -> None:
    """One duel's evidence about a parameter, added in place to ``sums[index]`` (score) and
    ``sums[index + 1]`` (information): ``p_more`` is the first player's win probability with
    the parameter ``step`` higher, ``logit`` and ``sharp`` the prediction's logit and its
    sharpened probability as made (the pair form of the population's drift and offset
    evidence)."""
    slope = decisiveness * (math.log(p_more / (1.0 - p_more)) - logit) / step
    sums[index] += round((actual - sharp) * slope * SCALE)
    sums[index + 1] += round(sharp * (1.0 - sharp) * slope * slope * SCALE)


def _duel_shares(
    rules: ModeConfig,
    population: Population,
    state_a: PlayerState | None,
    state_b: PlayerState | None,
    own_deviation: float,
    met_deviation: float,
) -> tuple[float, float] | None:
    """Each duellist's :func:`~stream.ratings.population.offset_sensitivity` as the duel is
    played (``state_x``: their stored states before it, None: new; ``own_deviation``,
    ``met_deviation``: their deviations at the match), when the mode learns its debut offset
    (None: it does not, or nothing moves, between two settled players or two alike)."""
    prior = population.deviation
    if population.debut_offset is None or prior is None:
        return None
    games_a = state_a.games if state_a is not None else 0
    games_b = state_b.games if state_b is not None else 0
    if games_a >= SETTLED_GAMES and games_b >= SETTLED_GAMES:
        return None
    scale = rules.experience.games_scale
    share_a = offset_sensitivity(games_a, own_deviation, prior, scale)
    share_b = offset_sensitivity(games_b, met_deviation, prior, scale)
    return None if share_a == share_b else (share_a, share_b)


def _add_prediction(
    sums: list[int],
    rules: ModeConfig,
    population: Population,
    own: SkillLike,
    met: Rated,
    actual: float,
    shares: tuple[float, float] | None,
) -> None:
    """A duel's prediction's evidence in a mode that does not learn its drift, added in place:
    the decisiveness's and, with ``shares`` (:func:`_duel_shares`), the debut offset's
    (:func:`add_duel_evidence` for an algorithm that rates it in one call)."""
    expected_score = rules.algorithm.expected_score
    p = expected_score(own, met)
    if not 0.0 < p < 1.0:
        return
    # prediction_evidence's two sums, quantised (0 < p < 1: no clamp needed).
    decisiveness = population.decisiveness
    logit = math.log(p / (1.0 - p))
    sharp = 1.0 / (1.0 + math.exp(-decisiveness * logit))
    sums[DECISIVENESS] += round((actual - sharp) * logit * SCALE)
    sums[DECISIVENESS + 1] += round(sharp * (1.0 - sharp) * logit * logit * SCALE)
    if shares is not None:
        share_a, share_b = shares
        p_more = expected_score(
            shifted(own, share_a), Result(met.rating + share_b, met.deviation, 0.5)
        )
        if 0.0 < p_more < 1.0:
            _add_slope(sums, OFFSET, p_more, logit, sharp, actual, decisiveness, 1.0)


def add_duel_evidence(
    sums: list[int],
    drift: DriftRate,
    decisiveness: float,
    own: float,
    own_deviation: float,
    met: float,
    met_deviation: float,
    actual: float,
    moves: tuple[float, ...] | None,
    shares: tuple[float, float] | None,
) -> None:
    """A duel's prediction's evidence in a mode that learns its drift, added in place, in one
    call of the algorithm's (``drift.duel_evidence``): the first player at ``own`` meets the
    second at ``met`` and scores ``actual``; ``moves``: both a step along the log drift, the
    first four of :data:`~stream.ratings.engine.DuelMoves` (None: neither moves); ``shares``:
    :func:`_duel_shares`."""
    moved = None if moves is None else (moves[0], moves[1], moves[2], moves[3])
    found = drift.duel_evidence(
        decisiveness,
        DRIFT_STEP,
        _FLOAT_SCALE,
        (own, own_deviation, met, met_deviation),
        actual,
        moved,
        shares,
    )
    sums[DECISIVENESS] += found[0]
    sums[DECISIVENESS + 1] += found[1]
    sums[DRIFT] += found[2]
    sums[DRIFT + 1] += found[3]
    sums[OFFSET] += found[4]
    sums[OFFSET + 1] += found[5]


def _entered(
    rules: ModeConfig,
    states: Mapping[str, PlayerState],
    teams: Sequence[Sequence[str]],
    at: float,
) -> Mapping[str, PlayerState]:
    """The participants' ``states`` as they enter the season of ``at`` (``states`` itself
    without seasons; in replay ``states`` is the mode's whole table, so only the match's
    players are looked at)."""
    if rules.seasons is None:
        return states
    return {
        pid: season_entered(rules, state, at)
        for team in teams
        for pid in team
        if (state := states.get(pid)) is not None
    }


def _duel_moved(
    rules: ModeConfig,
    states: Mapping[str, PlayerState],
    teams: Sequence[Sequence[str]],
    at: float,
    own: SkillLike,
    met: Rated,
    rated: PlayerUpdate | None = None,
) -> tuple[float, float, float, float] | None:
    """The duel's players a small step along the log drift, their ``states`` as they enter
    the match at ``at`` (stream.ratings.drift.drifted; None: neither moves), as the first
    meets the second (the first four of :data:`~stream.ratings.engine.DuelMoves`);
    ``rated``: the first player's update, when it carries them moved (rate_duel's), read
    from it instead."""
    moved = None if rated is None else rated.moved
    if moved is None:
        entered = _entered(rules, states, teams, at)
        (a,), (b,) = teams
        largest = rules.initial.deviation
        met = Skill(met.rating, met.deviation)
        moved = (drifted(entered.get(a), own, largest), drifted(entered.get(b), met, largest))
    moved_own, moved_met = moved
    if moved_own is own and moved_met is met:
        return None
    return (moved_own.rating, moved_own.deviation, moved_met.rating, moved_met.deviation)


def is_team_match(teams: Sequence[Sequence[str]]) -> bool:
    """Whether a match has teammates (or more than two sides): only such a match has a line-up
    that the persistence counts, and only its players' line-up keys change."""
    if len(teams) == 2:  # the common case, without a generator
        return len(teams[0]) > 1 or len(teams[1]) > 1
    return len(teams) > 2 or any(len(team) > 1 for team in teams)


def played_skills(
    rules: ModeConfig,
    states: Mapping[str, PlayerState],
    teams: Sequence[Sequence[str]],
    at: float,
    members: frozenset[str] = frozenset(),
) -> list[list[SkillLike]]:
    """Every participant's skill as the match is played at ``at``: inactivity and the season's
    reset applied, the experience offset added (a player not in ``states``: the mode's initial
    state), and the party edge in force for each of ``members`` (the players in a party of at
    least two: stream.ratings.parties). What predictions are made from, offline and live."""
    algorithm = rules.algorithm
    fresh = initial_state(rules)
    experience = rules.experience
    skills: list[list[SkillLike]] = [
        [
            shifted(
                skill_at(algorithm, season_entered(rules, state, at), at),
                experience.offset(state.games),
            )
            for state in (states.get(pid, fresh) for pid in team)
        ]
        for team in teams
    ]
    offsets = party_offsets(teams, members, rules.population.party_edge)
    if offsets is not None:
        skills = [
            [
                shifted(skill, offset) if offset else skill
                for skill, offset in zip(side, marks, strict=True)
            ]
            for side, marks in zip(skills, offsets, strict=True)
        ]
    return skills


def newcomers_of(teams: Sequence[Sequence[str]], states: Mapping[str, PlayerState]) -> set[str]:
    """The players whose update can say something about the prior (fewer than
    SETTLED_GAMES games before the match): the only updates match_evidence reads."""
    return {
        pid
        for team in teams
        for pid in team
        if (state := states.get(pid)) is None or state.games < SETTLED_GAMES
    }


def rate_settled(
    rules: ModeConfig,
    match: MatchView,
    quitters: Collection[str],
    states: Mapping[str, PlayerState],
    fates: Mapping[str, Fate],
    only: Collection[str] | None = None,
) -> dict[str, PlayerUpdate]:
    """Every rated player's update in a match with a result, as each was settled (``fates``):
    a player abandoned or timed out takes a loss at that fate's time, without the result's
    ranks or stats; the others are rated from the result (``rules``: the mode with its
    population in force; a quitter may be cancelled, and is left out). What the live player
    partitions compute, one ``rate`` command each, and replay of the same match. ``only``: rate
    just these players (None: all)."""
    teams = match.teams
    if only is None and not quitters and all(f.how is Settled.RESULT for f in fates.values()):
        # Everyone rated from the result: rate_match, bit for bit the same (its 1v1 path rates
        # both players in one call).
        return rate_match(rules, match, states)
    plan = rated_players(rules, teams, quitters)
    lost = (0,) * len(teams)
    updates: dict[str, PlayerUpdate] = {}
    for team in teams:
        for pid in team:
            if only is not None and pid not in only:
                continue
            settled = fates[pid]
            if settled.how is not Settled.RESULT:
                view = MatchView(teams, lost, settled.at)
                updates[pid] = rate_player(rules, pid, states.get(pid), view, states, 0.0)
            elif pid in plan:
                updates[pid] = rate_player(rules, pid, states.get(pid), match, states, plan[pid])
    return updates
