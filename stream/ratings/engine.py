"""The one entry point that rates a player after a match.

The live workers and the offline replay both call :func:`rate_player`, so they always agree.
Each player is rated from their own state plus *snapshots* of every participant taken when the
match started (the INVERSUS way): a player's update never needs another player's current state,
so in the live pipeline it touches only its own partition.

Time: ``MatchView.at`` (epoch seconds, the match's finish) is when the result applies. Every
skill, the player's own and each snapshot, first has its inactivity applied up to that moment
from its own ``last_played``; a match older than the state it is applied to adds no inactivity.
In a mode with seasons, a state last played before the match's season first meets the season's
soft reset (:func:`season_entered`), in the same places.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from stream.ratings.algorithm import (
    AlgorithmConfig,
    DriftRate,
    MatchAlgorithm,
    PairwiseAlgorithm,
)
from stream.ratings.drift import STEP, drift_move, drifted, slopes_between
from stream.ratings.experience import shifted
from stream.ratings.fastinit import fast_init
from stream.ratings.modeconfig import ModeConfig
from stream.ratings.parties import Parties, partied
from stream.ratings.parttime import Shares, played_shares
from stream.ratings.performance import performance_shift
from stream.ratings.population import Population
from stream.ratings.rank_points import next_rank_points
from stream.ratings.seasons import soft_reset
from stream.ratings.skill import PlayerState, PlayerStats, Rated, Result, Skill, SkillLike
from stream.ratings.teams import TeamStrategy, score_against
from stream.ratings.teams import results_for as pairwise_results


class MatchLike(Protocol):
    """Anything that carries a finished match's teams, ranks, time and optional stats."""

    @property
    def teams(self) -> tuple[tuple[str, ...], ...]: ...

    @property
    def ranks(self) -> tuple[int, ...]: ...

    @property
    def at(self) -> float: ...

    @property
    def stats(self) -> Mapping[str, PlayerStats] | None: ...

    @property
    def parties(self) -> Parties | None: ...


@dataclass(frozen=True, slots=True)
class MatchView:
    """What the engine needs to know about a finished match.

    ``ranks`` has one entry per team: lower is better, equal ranks draw. ``parties``: the
    players who queued together (stream.ratings.parties; None: none named).
    """

    teams: tuple[tuple[str, ...], ...]
    ranks: tuple[int, ...]
    at: float
    stats: Mapping[str, PlayerStats] | None = None
    parties: Parties | None = None


@fast_init
@dataclass(frozen=True, slots=True)
class PlayerUpdate:
    """A player's new state, the score they got (mean over opponents) and what was expected.

    ``expected_score`` (the mean over ``opponents`` of the algorithm's expected score for the
    player's pre-match skill ``own``) is computed when read: the live pipeline publishes it,
    the offline replay never reads it and so does not pay for it.
    """

    state: PlayerState
    score: float
    algorithm: AlgorithmConfig = field(repr=False, compare=False)
    own: SkillLike = field(repr=False, compare=False)
    opponents: tuple[Rated, ...] = field(repr=False, compare=False)
    # A duel rated with the drift learned (rate_duel): the player's skill and the opponent's
    # as met, one step along the log drift (``own`` and ``opponents[0]`` themselves when
    # neither moves), which the population's evidence reads. None: not computed.
    moved: tuple[SkillLike, Rated] | None = field(default=None, repr=False, compare=False)
    # Rating points the player moved within their side for their share of its score
    # (stream.ratings.performance; 0: none), already in ``state``.
    performance: float = field(default=0.0, repr=False, compare=False)
    # The share of the result the player took (part-time play: stream.ratings.parttime; 1:
    # a whole match, or a forced loss, taken whole).
    played: float = field(default=1.0, repr=False, compare=False)
    # A match that named a party, rated with a party edge (stream.ratings.parties): the edge
    # in rating points and whether the player was in a party (None: no party played).
    party: tuple[float, bool] | None = field(default=None, repr=False, compare=False)

    @property
    def expected_score(self) -> float:
        expected = self.algorithm.expected_score
        own = self.own
        return sum(expected(own, o) for o in self.opponents) / len(self.opponents)


def match_shares(mode: ModeConfig, match: MatchLike) -> Shares | None:
    """Each participant's share of ``match`` (stream.ratings.parttime), or None when nobody
    played part of it or the mode does not rate part-time play (``part_time = false``)."""
    if not mode.part_time:
        return None
    return played_shares(match.teams, match.stats)


def match_parties(mode: ModeConfig, match: MatchLike) -> frozenset[str]:
    """The players of ``match`` in a party of at least two (stream.ratings.parties), when the
    mode rates parties: a pairwise algorithm whose party edge is not 0 (empty otherwise: the
    match is rated as if no party were named)."""
    if mode.population.party_edge == 0.0 or mode.pairwise is None:
        return frozenset()
    return partied(match.parties)


def initial_state(mode: ModeConfig) -> PlayerState:
    """The state of a player the mode has never seen (one shared immutable object per mode)."""
    return mode.initial


def skill_at(algorithm: AlgorithmConfig, state: PlayerState, at: float) -> SkillLike:
    """``state``'s skill at time ``at``, its inactivity since ``last_played`` applied."""
    last = state.last_played
    # Most matches come less than one decay step after the last: skip the call entirely.
    if last is None or at - last < algorithm.decay_step_seconds:
        return state
    return algorithm.decay(state, at - last)


def season_entered(mode: ModeConfig, state: PlayerState, at: float) -> PlayerState:
    """``state`` as it enters the season of ``at``: unchanged unless the mode has seasons and
    the state was last played before that season started; then its inactivity up to the start
    is applied and the season's soft reset with it. Idempotent: the reset state is dated at the
    season's start, so entering the same season again changes nothing."""
    seasons = mode.seasons
    last = state.last_played
    if seasons is None or last is None:
        return state
    start = seasons.crossed(last, at)
    if start is None:
        return state
    skill = skill_at(mode.algorithm, state, start)
    return soft_reset(seasons, state, skill, mode.initial.deviation, start)


def rate_player(
    mode: ModeConfig,
    player_id: str,
    state: PlayerState | None,
    match: MatchLike,
    snapshots: Mapping[str, PlayerState],
    forced_score: float | None = None,
    population: Population | None = None,
) -> PlayerUpdate:
    """Rate ``player_id`` after ``match``.

    ``state`` is the player's current state (None for a new player); ``snapshots`` holds the
    participants' states at match start (a missing participant counts as new; the player's own
    missing snapshot falls back to ``state``). ``forced_score`` replaces the ranks with that
    score against every opposing team: 0.0 scores an abandoned or timed-out match as a loss.
    With the mode's experience term on, every participant plays at rating + offset(their games):
    the others are moved by their offset minus the player's own, so the player's stored rating
    is rated (and bounded) as it is and never holds an offset.
    ``population`` is the mode's population in force for the match (its prior deviation, size
    edge and persistence: stream.ratings.population); None rates with the mode's configured
    values. Every place that rates a match must give the same population for it.
    Raises ValueError if the player is not in the match.
    """
    if population is not None:
        mode = population.rules(mode)
    algorithm = mode.algorithm
    at = match.at
    if state is None:
        state = initial_state(mode)
    # The stored state, which the snapshots may hold as the very same object.
    stored = state
    if mode.seasons is not None:
        state = season_entered(mode, state, at)
    # skill_at() written out for the player (and in _met() for the 1v1 opponent): the hot path.
    step = mode.decay_step_seconds
    last = state.last_played
    own: SkillLike = (
        state if last is None or at - last < step else algorithm.decay(state, at - last)
    )
    experience = mode.experience
    own_offset = experience.offset(state.games) if experience.active else 0.0
    teams = match.teams
    pairwise = mode.pairwise
    if pairwise is not None and len(teams) == 2 and len(teams[0]) == 1 and len(teams[1]) == 1:
        return _one_on_one(
            mode,
            pairwise,
            player_id,
            stored,
            state,
            own,
            own_offset,
            match,
            snapshots,
            forced_score,
        )
    # Once per player: the team path meets the partied players at the edge, the update says so.
    members = match_parties(mode, match)
    new_skill, score, opponents, upset, slopes, taken = _rate_many(
        mode, player_id, stored, state, own, match, snapshots, forced_score, own_offset, members
    )
    shift = 0.0
    if mode.performance.active and forced_score is None and mode.pairwise is not None:
        new_skill, shift = _performed(mode, match, player_id, new_skill)
    party = (mode.population.party_edge, player_id in members) if members else None
    return _finish(
        mode, state, at, own, new_skill, score, opponents, upset, slopes, None, shift, taken, party
    )


def _performed(
    mode: ModeConfig, match: MatchLike, player_id: str, skill: SkillLike
) -> tuple[SkillLike, float]:
    """``skill`` moved within the player's side for their share of its score
    (stream.ratings.performance), inside the rating bounds, and the points it moved."""
    teams = match.teams
    side = teams[_team_of(teams, player_id)]
    shift = performance_shift(mode.performance, side, match.stats, player_id)
    if shift == 0.0 or not math.isfinite(shift):
        return skill, 0.0
    low, high = mode.rating_bounds
    rating = min(max(skill.rating + shift, low), high)
    return Skill(rating, skill.deviation, skill.volatility), rating - skill.rating


def _one_on_one(
    mode: ModeConfig,
    pairwise: PairwiseAlgorithm,
    player_id: str,
    stored: PlayerState,
    state: PlayerState,
    own: SkillLike,
    own_offset: float,
    match: MatchLike,
    snapshots: Mapping[str, PlayerState],
    forced_score: float | None,
) -> PlayerUpdate:
    """:func:`rate_player` for two one-player teams (the hot path): ``stored`` the player's
    stored state, ``state`` it entered into the season of the match, ``own`` its skill at the
    match, ``own_offset`` its experience offset."""
    algorithm = mode.algorithm
    experience = mode.experience
    at = match.at
    teams = match.teams
    # Two one-player teams: equal, bit for bit, to what _rate_many computes for the same
    # match (a test holds it to that), without the lists and virtual players.
    first, second = teams[0][0], teams[1][0]
    if first == player_id:
        opponent_id = second
        my_rank, their_rank = match.ranks
    elif second == player_id:
        opponent_id = first
        their_rank, my_rank = match.ranks
    else:
        raise ValueError(f"player {player_id!r} is not in the match")
    snap = snapshots.get(opponent_id)
    if snap is None:
        snap = initial_state(mode)
    elif mode.seasons is not None:
        snap = season_entered(mode, snap, at)
    shift = experience.offset(snap.games) - own_offset if experience.active else None
    opponent, opponent_rating = _met(mode, snap, at, shift)
    mine_then: tuple[PlayerState, SkillLike] | None = None
    if mode.team_rule is TeamStrategy.COMPOSITE_TEAM:
        mine = snapshots.get(player_id)
        if mine is not None and mine is not stored:
            # The composite-team shift (own rating now minus own rating at match start)
            # is _versus's: it moves with the drift too.
            mine = season_entered(mode, mine, at)
            mine_skill = skill_at(algorithm, mine, at)
            if experience.active:
                mine_skill = shifted(mine_skill, experience.offset(mine.games) - own_offset)
            mine_then = (mine, mine_skill)
    if forced_score is not None:
        score = forced_score
    else:  # score_against(), written out
        score = 1.0 if my_rank < their_rank else 0.0 if my_rank > their_rank else 0.5
    return _versus(
        mode,
        pairwise,
        state,
        own,
        at,
        opponent_rating,
        opponent.deviation,
        score,
        snap,
        mine_then,
    )


def _met(
    mode: ModeConfig, opponent: PlayerState, at: float, shift: float | None
) -> tuple[SkillLike, float]:
    """The 1v1 opponent as the player meets them: their skill at ``at`` (inactivity applied)
    and their rating moved by ``shift``, their experience offset minus the player's (None: the
    mode has no experience term). The callers hold the offsets already: rate_duel uses each
    twice, so they are passed in rather than computed again here."""
    seen = opponent.last_played
    met: SkillLike = (
        opponent
        if seen is None or at - seen < mode.decay_step_seconds
        else mode.algorithm.decay(opponent, at - seen)
    )
    return met, met.rating if shift is None else met.rating + shift


def _versus(
    mode: ModeConfig,
    pairwise: PairwiseAlgorithm,
    state: PlayerState,
    own: SkillLike,
    at: float,
    opponent_rating: float,
    opponent_deviation: float,
    score: float,
    opponent: PlayerState,
    mine_then: tuple[PlayerState, SkillLike] | None = None,
) -> PlayerUpdate:
    """The 1v1 fast path's rule, shared by rate_player and rate_duel: one result against the
    opponent as the player meets them (inactivity and experience shifts applied);
    ``opponent`` is the opponent's stored state (their drift slopes). ``mine_then``: the
    player's own snapshot and skill at match start when the composite-team shift applies
    (the opponent moved by own rating now minus then, as teams.results_for moves it)."""
    met_rating = opponent_rating
    if mine_then is not None:
        opponent_rating += own.rating - mine_then[1].rating
    results = (Result(opponent_rating, opponent_deviation, score),)
    upset = opponent_rating - own.rating
    drift = mode.drift
    if drift is None:
        new_skill = pairwise.rate(own, results)
        slopes = _NO_SLOPES
    else:
        largest = mode.initial.deviation
        moved_own = drifted(state, own, largest)
        moved = drifted(opponent, Skill(met_rating, opponent_deviation), largest)
        moved_rating = moved.rating
        if mine_then is not None:
            moved_rating += moved_own.rating - drifted(*mine_then, largest).rating
        # rate_twin of the one result, in floats (the live player side's hot path).
        new_skill, slopes = _with_slopes(
            drift.rate_one_twin(
                own.rating,
                own.deviation,
                own.volatility,
                moved_own.rating,
                moved_own.deviation,
                opponent_rating,
                opponent_deviation,
                moved_rating,
                moved.deviation,
                score,
            )
        )
    return _finish(mode, state, at, own, new_skill, score, results, upset, slopes)


def _finish(
    mode: ModeConfig,
    state: PlayerState,
    at: float,
    own: SkillLike,
    new_skill: SkillLike,
    score: float,
    opponents: tuple[Rated, ...],
    upset: float,
    slopes: tuple[float, float] = (0.0, 0.0),
    moved: tuple[SkillLike, Rated] | None = None,
    performance: float = 0.0,
    played: float = 1.0,
    party: tuple[float, bool] | None = None,
) -> PlayerUpdate:
    """The new state after a rated match (:func:`_new_state`) as the player's update;
    ``moved``, ``performance``, ``played`` and ``party``: those of :class:`PlayerUpdate`."""
    new_state = _new_state(
        mode,
        state,
        at,
        new_skill.rating,
        new_skill.deviation,
        new_skill.volatility,
        score,
        upset,
        *slopes,
    )
    return PlayerUpdate(
        new_state, score, mode.algorithm, own, opponents, moved, performance, played, party
    )


def _new_state(
    mode: ModeConfig,
    state: PlayerState,
    at: float,
    rating: float,
    deviation: float,
    volatility: float | None,
    score: float,
    upset: float,
    drift_slope: float,
    variance_slope: float,
) -> PlayerState:
    """The new state after a rated match: the new skill, Rank Points, one more game, the
    latest play time, and the drift slopes, its sensitivities to the mode's drift
    (stream.ratings.drift; 0 in a mode that does not learn it)."""
    last = state.last_played
    rank_points = next_rank_points(
        mode.rank_points,
        mode.rating_bounds,
        state.rank_points,
        rating,
        deviation,
        score,
        upset,
    )
    return PlayerState(
        rating,
        deviation,
        volatility,
        rank_points,
        state.games + 1,
        at if last is None or at > last else last,
        drift_slope,
        variance_slope,
    )


def _with_slopes(
    rated: tuple[float, float, float | None, float, float],
) -> tuple[Skill, tuple[float, float]]:
    """An update rated in floats by ``rate_one_twin`` (the new rating, deviation and
    volatility, the twin's rating and deviation) as the new skill and its drift slopes
    (:func:`~stream.ratings.drift.slopes_between`, in floats)."""
    rating, deviation, volatility, twin_rating, twin_deviation = rated
    slopes = (
        (twin_rating - rating) / STEP,
        (twin_deviation * twin_deviation - deviation * deviation) / STEP,
    )
    return Skill(rating, deviation, volatility), slopes


def _rate_many(
    mode: ModeConfig,
    player_id: str,
    state: PlayerState,
    entered: PlayerState,
    own: SkillLike,
    match: MatchLike,
    snapshots: Mapping[str, PlayerState],
    forced_score: float | None,
    own_offset: float = 0.0,
    members: frozenset[str] = frozenset(),
) -> tuple[SkillLike, float, tuple[Rated, ...], float, tuple[float, float], float]:
    """Teams and free-for-all: (new skill, score, opponents for the expected score, upset,
    drift slopes, the share of the result the player took: part-time play).

    ``state`` is the player's stored state (only compared by identity with the snapshots),
    ``entered`` the same as it enters the match's season; ``own`` their skill at the match.
    ``own_offset`` is the player's experience offset: every other participant is moved by their
    own offset minus it; ``members``: the partied players (:func:`match_parties`)."""
    at = match.at
    teams = match.teams
    team_index = _team_of(teams, player_id)
    ranks = match.ranks
    if forced_score is None:
        my_rank = ranks[team_index]
        scores = [score_against(my_rank, r) for r in ranks]
    else:
        scores = [forced_score] * len(teams)
    score = (sum(scores) - scores[team_index]) / (len(teams) - 1)
    team_skills = _met_teams(mode, player_id, state, own, match, snapshots, own_offset, members)
    pairwise = mode.pairwise
    if pairwise is None:
        whole_match = mode.whole_match
        assert whole_match is not None  # ModeConfig sets exactly one of the two
        whole, opponents, upset = _rate_whole_match(
            whole_match, player_id, own, team_index, match, team_skills, forced_score
        )
        return whole, score, opponents, upset, _NO_SLOPES, 1.0
    rule = mode.team_rule
    edge = mode.population.size_edge
    shares = match_shares(mode, match)
    own_share = taken = 1.0
    if shares is not None:
        own_share = shares[team_index][teams[team_index].index(player_id)]
        # A forced loss (a quitter's) is taken whole: leaving early never makes it cheaper.
        taken = own_share if forced_score is None else 1.0
    results = tuple(
        pairwise_results(rule, own, team_index, team_skills, scores, edge, shares, own_share, taken)
    )
    upset = sum(r.rating for r in results) / len(results) - own.rating
    drift = mode.drift
    if drift is None:
        return pairwise.rate(own, results), score, results, upset, _NO_SLOPES, taken
    largest = mode.initial.deviation
    moved_own = drifted(entered, own, largest)
    moved_teams = [
        [
            moved_own
            if skill is own
            else drifted(_entered(mode, snapshots, pid, at), skill, largest)
            for pid, skill in zip(team, skills, strict=True)
        ]
        for team, skills in zip(teams, team_skills, strict=True)
    ]
    moved = pairwise_results(
        rule, moved_own, team_index, moved_teams, scores, edge, shares, own_share, taken
    )
    new_skill, twin = drift.rate_twin(own, results, moved_own, moved)
    return new_skill, score, results, upset, slopes_between(new_skill, twin), taken


_NO_SLOPES = (0.0, 0.0)


def _met_teams(
    mode: ModeConfig,
    player_id: str,
    state: PlayerState,
    own: SkillLike,
    match: MatchLike,
    snapshots: Mapping[str, PlayerState],
    own_offset: float,
    members: frozenset[str],
) -> list[list[SkillLike]]:
    """Every participant's skill as ``player_id`` meets them (:func:`_snapshot`), side by
    side: each of ``members`` (the partied players, :func:`match_parties`) plays the party
    edge above their rating, moved by it relative to the player's own, as the experience
    offset is."""
    at, teams = match.at, match.teams
    if not members:
        return [
            [_snapshot(mode, pid, player_id, state, own, snapshots, at, own_offset) for pid in team]
            for team in teams
        ]
    edge = mode.population.party_edge
    own_offset += edge if player_id in members else 0.0
    return [
        [
            _snapshot(
                mode, pid, player_id, state, own, snapshots, at, own_offset,
                edge if pid in members else 0.0,
            )
            for pid in team
        ]
        for team in teams
    ]  # fmt: skip


def _entered(
    mode: ModeConfig, snapshots: Mapping[str, PlayerState], pid: str, at: float
) -> PlayerState | None:
    """``pid``'s snapshot as it enters the match's season (None: a newcomer)."""
    snap = snapshots.get(pid)
    if snap is None or mode.seasons is None:
        return snap
    return season_entered(mode, snap, at)


def _snapshot(
    mode: ModeConfig,
    pid: str,
    player_id: str,
    state: PlayerState,
    own: SkillLike,
    snapshots: Mapping[str, PlayerState],
    at: float,
    own_offset: float,
    party: float = 0.0,
) -> SkillLike:
    """``pid``'s skill as the player meets it: at match start, with inactivity, and moved by
    its experience offset and its ``party`` offset (stream.ratings.parties) minus the player's
    own (``own_offset``: both of the player's; ``own`` for the player's own entry)."""
    snap = snapshots.get(pid)
    if snap is None:
        if pid == player_id:
            return own
        snap = initial_state(mode)
    elif snap is state:
        return own
    skill = skill_at(mode.algorithm, season_entered(mode, snap, at), at)
    experience = mode.experience
    if experience.active:
        return shifted(skill, experience.offset(snap.games) + party - own_offset)
    if party != own_offset:
        return shifted(skill, party - own_offset)
    return skill


def rate_match(
    mode: ModeConfig,
    match: MatchLike,
    states: Mapping[str, PlayerState],
    population: Population | None = None,
) -> dict[str, PlayerUpdate]:
    """Rate every participant, each against the pre-match ``states`` (offline replay), with
    the mode's ``population`` in force (None: its configured values)."""
    if population is not None:
        mode = population.rules(mode)
    teams = match.teams
    if mode.pairwise is not None and len(teams) == 2 and len(teams[0]) == 1 and len(teams[1]) == 1:
        (a,), (b,) = teams
        if a != b:
            rank_a, rank_b = match.ranks
            score_a = 1.0 if rank_a < rank_b else 0.0 if rank_a > rank_b else 0.5
            update_a, update_b = rate_duel(mode, states.get(a), states.get(b), score_a, match.at)
            return {a: update_a, b: update_b}
    return {
        pid: rate_player(mode, pid, states.get(pid), match, states)
        for team in match.teams
        for pid in team
    }


def rate_duel(
    mode: ModeConfig,
    state_a: PlayerState | None,
    state_b: PlayerState | None,
    score_a: float,
    at: float,
) -> tuple[PlayerUpdate, PlayerUpdate]:
    """Both players of a 1v1 after ``score_a`` (1 win, 0.5 draw, 0 loss for the first), each
    against the other's state before the match (None: a new player).

    Equal, bit for bit, to :func:`rate_player` for each of them with the pre-match states as
    snapshots (a test holds it to that); the inactivity of each is applied once instead of
    twice, which makes it the replay's hot path. Only for an algorithm that rates from pairwise
    results: ValueError for one that rates the whole match (ZoneStats, which needs the stats).
    """
    pairwise = mode.pairwise
    if pairwise is None:
        raise ValueError(f"{mode.algorithm.name} rates a whole match from its stats, not a duel")
    met = _duel_met_both(mode, state_a, state_b, at)
    drift = mode.drift
    if drift is not None:
        return _duel_drift(mode, drift, met, score_a, at)
    state_a, a, a_rating, state_b, b, b_rating = met
    return (
        _versus(mode, pairwise, state_a, a, at, b_rating, b.deviation, score_a, state_b),
        _versus(mode, pairwise, state_b, b, at, a_rating, a.deviation, 1.0 - score_a, state_a),
    )


# Both duellists as they meet at the match: each one's state as they enter it (a new player's
# initial state, the season's reset applied), their skill at the match (inactivity applied)
# and their rating as the other meets them (the experience offsets' difference applied), the
# first's three, then the second's.
DuelMet = tuple[PlayerState, SkillLike, float, PlayerState, SkillLike, float]


def _duel_met_both(
    mode: ModeConfig, state_a: PlayerState | None, state_b: PlayerState | None, at: float
) -> DuelMet:
    """Both duellists as they meet (:data:`DuelMet`)."""
    state_a, state_b = _duel_entered(mode, state_a, state_b, at)
    experience = mode.experience
    shift_a = shift_b = None
    if experience.active:
        offset_a = experience.offset(state_a.games)
        offset_b = experience.offset(state_b.games)
        shift_a, shift_b = offset_a - offset_b, offset_b - offset_a
    # Each as the other meets them; the skill with inactivity applied is also their own.
    a, a_rating = _met(mode, state_a, at, shift_a)
    b, b_rating = _met(mode, state_b, at, shift_b)
    return state_a, a, a_rating, state_b, b, b_rating


# Both duellists a step along the log drift: the first's rating and deviation, the second's
# as the first meets them, the second's own rating, the first's as the second meets them.
DuelMoves = tuple[float, float, float, float, float, float]
# Both duellists at the match: the first's rating and deviation (inactivity applied) and
# rating as the second meets them (the experience offsets' difference applied), then the
# second's, as the first meets them.
DuelSeen = tuple[float, float, float, float, float, float]


def duel_states(
    mode: ModeConfig,
    drift: DriftRate,
    state_a: PlayerState | None,
    state_b: PlayerState | None,
    score_a: float,
    at: float,
) -> tuple[PlayerState, PlayerState, DuelSeen, DuelMoves | None]:
    """:func:`rate_duel`'s two new states in a mode that learns its drift (``drift``, the
    mode's), without the updates nobody reads in a replay; with what the duel's prediction is
    made from (:data:`DuelSeen`) and both players moved along the drift (None: neither
    moves)."""
    met = _duel_met_both(mode, state_a, state_b, at)
    new_a, new_b, moves = _duel_core(mode, drift, met, score_a, at)
    _, a, a_rating, _, b, b_rating = met
    return new_a, new_b, (a.rating, a.deviation, a_rating, b.rating, b.deviation, b_rating), moves


def _duel_core(
    mode: ModeConfig, drift: DriftRate, met: DuelMet, score_a: float, at: float
) -> tuple[PlayerState, PlayerState, DuelMoves | None]:
    """Both new states of a duel in a mode that learns its drift, each player moved along the
    drift once and each update and its twin rated in floats (``rate_duel_twin``), and the
    moves (None: neither moves)."""
    state_a, a, a_rating, state_b, b, b_rating = met
    largest = mode.initial.deviation
    a_own, a_dev, b_own, b_dev = a.rating, a.deviation, b.rating, b.deviation
    move = drift_move(state_a, a_dev, largest)
    if move is None:
        a_moved, a_moved_met, a_moved_dev = a_own, a_rating, a_dev
    else:
        a_moved, a_moved_met, a_moved_dev = a_own + move[0], a_rating + move[0], move[1]
    move_b = drift_move(state_b, b_dev, largest)
    if move_b is None:
        b_moved, b_moved_met, b_moved_dev = b_own, b_rating, b_dev
    else:
        b_moved, b_moved_met, b_moved_dev = b_own + move_b[0], b_rating + move_b[0], move_b[1]
    rated = drift.rate_duel_twin(
        STEP,
        (a_own, a_dev, a.volatility, a_moved, a_moved_dev, a_rating, a_moved_met),
        (b_own, b_dev, b.volatility, b_moved, b_moved_dev, b_rating, b_moved_met),
        score_a,
    )
    rating_a, dev_a, vol_a, drift_a, var_a, rating_b, dev_b, vol_b, drift_b, var_b = rated
    new_a = _new_state(
        mode, state_a, at, rating_a, dev_a, vol_a, score_a, b_rating - a_own, drift_a, var_a
    )
    new_b = _new_state(
        mode, state_b, at, rating_b, dev_b, vol_b, 1.0 - score_a, a_rating - b_own, drift_b, var_b
    )
    if move is None and move_b is None:
        return new_a, new_b, None
    return new_a, new_b, (a_moved, a_moved_dev, b_moved_met, b_moved_dev, b_moved, a_moved_met)


def _duel_drift(
    mode: ModeConfig, drift: DriftRate, met: DuelMet, score_a: float, at: float
) -> tuple[PlayerUpdate, PlayerUpdate]:
    """:func:`rate_duel` in a mode that learns its drift: both players' :func:`_versus`, bit
    for bit (a test holds it to that), from :func:`_duel_core`; the moved skills ride on the
    updates (:attr:`PlayerUpdate.moved`)."""
    new_a, new_b, moves = _duel_core(mode, drift, met, score_a, at)
    _, a, a_rating, _, b, b_rating = met
    score_b = 1.0 - score_a
    result_a = Result(b_rating, b.deviation, score_a)
    result_b = Result(a_rating, a.deviation, score_b)
    if moves is None:
        seen_a: tuple[SkillLike, Rated] = (a, result_a)
        seen_b: tuple[SkillLike, Rated] = (b, result_b)
    else:
        a_moved, a_moved_dev, b_moved_met, b_moved_dev, b_moved, a_moved_met = moves
        seen_a = (Skill(a_moved, a_moved_dev), Skill(b_moved_met, b_moved_dev))
        seen_b = (Skill(b_moved, b_moved_dev), Skill(a_moved_met, a_moved_dev))
    algorithm = mode.algorithm
    return (
        PlayerUpdate(new_a, score_a, algorithm, a, (result_a,), seen_a),
        PlayerUpdate(new_b, score_b, algorithm, b, (result_b,), seen_b),
    )


def _duel_entered(
    mode: ModeConfig, state_a: PlayerState | None, state_b: PlayerState | None, at: float
) -> tuple[PlayerState, PlayerState]:
    """Both duellists' states as they enter the match at ``at``: a new player's initial state,
    the season's reset applied (what rate_duel and duel_met both start from)."""
    if state_a is None:
        state_a = initial_state(mode)
    if state_b is None:
        state_b = initial_state(mode)
    if mode.seasons is not None:
        state_a = season_entered(mode, state_a, at)
        state_b = season_entered(mode, state_b, at)
    return state_a, state_b


def duel_met(
    mode: ModeConfig, state_a: PlayerState | None, state_b: PlayerState | None, at: float
) -> tuple[SkillLike, Result]:
    """The first player of a duel at ``at`` (inactivity and the season's reset applied) and the
    second as the first meets them (their experience offsets' difference applied): what the
    duel's prediction is made from, the steps :func:`rate_duel` takes without the update."""
    state_a, state_b = _duel_entered(mode, state_a, state_b, at)
    experience = mode.experience
    shift = None
    if experience.active:
        shift = experience.offset(state_b.games) - experience.offset(state_a.games)
    a, _ = _met(mode, state_a, at, None)
    b, b_rating = _met(mode, state_b, at, shift)
    return a, Result(b_rating, b.deviation, 0.5)


def _team_of(teams: tuple[tuple[str, ...], ...], player_id: str) -> int:
    for index, team in enumerate(teams):
        if player_id in team:
            return index
    raise ValueError(f"player {player_id!r} is not in the match")


def _rate_whole_match(
    algorithm: MatchAlgorithm,
    player_id: str,
    own: SkillLike,
    team_index: int,
    match: MatchLike,
    team_skills: list[list[SkillLike]],
    forced_score: float | None,
) -> tuple[Skill, tuple[Rated, ...], float]:
    ratings = {
        pid: skill.rating
        for team, skills in zip(match.teams, team_skills, strict=True)
        for pid, skill in zip(team, skills, strict=True)
    }
    ranks = match.ranks
    stats = match.stats
    if forced_score is not None:
        # A forced result is decided by rank alone: the player's team against all the others.
        mine = {1.0: 0, 0.5: 1, 0.0: 2}.get(forced_score, 1)
        ranks = tuple(mine if i == team_index else 1 for i in range(len(match.teams)))
        stats = None
    offset = algorithm.offsets(match.teams, ratings, ranks, stats)[player_id]
    opponents = tuple(s for u, skills in enumerate(team_skills) if u != team_index for s in skills)
    upset = sum(o.rating for o in opponents) / len(opponents) - own.rating
    return Skill(own.rating + offset, 0.0, None), opponents, upset
