"""The 1v1 fast path against the general path, bit for bit: rate_player's (against
_rate_many) and rate_match's (rate_duel, against rate_player for each player), on 1v1 matches
and on matches of any shape; and replay's duel without updates (duel_states) against
rate_duel."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream.ratings import engine
from stream.ratings.elo import EloConfig
from stream.ratings.engine import (
    MatchView,
    PlayerUpdate,
    duel_states,
    initial_state,
    rate_duel,
    rate_match,
    rate_player,
    skill_at,
)
from stream.ratings.experience import ExperienceConfig
from stream.ratings.glicko1 import Glicko1Config
from stream.ratings.glicko2 import Glicko2Config
from stream.ratings.modeconfig import ModeConfig
from stream.ratings.population import PopulationConfig
from stream.ratings.rank_points import RankPointsConfig
from stream.ratings.seasons import SeasonsConfig
from stream.ratings.skill import PlayerState, PlayerStats
from stream.ratings.teams import TeamStrategy, score_against
from stream.ratings.zonestats import ZoneStatsConfig

DAY = 86400.0
T0 = 1_700_000_000.0
REAL_RATE_MANY = engine._rate_many
# Weekly seasons from three weeks before the earliest match: the states drawn below (up to two
# months old) cross none, one or several boundaries.
WEEKLY = SeasonsConfig(starts=(T0 - 21 * DAY,), period_days=7.0, rank_points_kept=0.5)

MODES = [
    ModeConfig(
        f"{algorithm.name}-{teams.value}-{bonus}-{debut}-{seasons is not None}",
        algorithm,
        teams,
        rank_points,
        experience=ExperienceConfig(debut_offset=debut),
        seasons=seasons,
    )
    for algorithm in (Glicko2Config(), Glicko1Config(), EloConfig())
    for teams in TeamStrategy
    for bonus, rank_points in (
        ("plain", RankPointsConfig()),
        ("upset", RankPointsConfig(upset_bonus=250.0)),
    )
    # The experience term off (the published formulas) and on.
    for debut in (0.0, -200.0)
    # Without seasons, and with a soft reset at every weekly boundary.
    for seasons in (None, WEEKLY)
] + [
    # A mode that learns its population: every update carries its drift slopes too.
    ModeConfig(
        f"glicko2-{teams.value}-learning-{seasons is not None}",
        Glicko2Config(),
        teams,
        experience=ExperienceConfig(debut_offset=-200.0),
        seasons=seasons,
        population=PopulationConfig(window_days=1.0),
    )
    for teams in TeamStrategy
    for seasons in (None, WEEKLY)
]


@dataclass(frozen=True)
class Case:
    """What rate_player is given: the mode, the player, their stored state, the match, the
    snapshots taken at its start, and a forced score."""

    mode: ModeConfig
    player_id: str
    state: PlayerState | None
    match: MatchView
    snapshots: Mapping[str, PlayerState]
    forced_score: float | None


def general_path(case: Case) -> PlayerUpdate:
    """What rate_player computes when it does not take the 1v1 shortcut."""
    mode, match = case.mode, case.match
    state = initial_state(mode) if case.state is None else case.state
    entered = engine.season_entered(mode, state, match.at)
    own = skill_at(mode.algorithm, entered, match.at)
    offset = mode.experience.offset(state.games)
    rated = REAL_RATE_MANY(
        mode, case.player_id, state, entered, own, match, case.snapshots, case.forced_score, offset
    )
    new_skill, score, opponents, upset, slopes, taken = rated
    assert taken == 1.0  # a 1v1 without stats: a whole match
    return engine._finish(mode, entered, match.at, own, new_skill, score, opponents, upset, slopes)


def fast_path(case: Case) -> PlayerUpdate:
    """rate_player with the general path disabled, so the shortcut must be the one taken."""

    def forbidden(*args: Any) -> Any:
        raise AssertionError("rate_player left the 1v1 fast path")

    with mock.patch.object(engine, "_rate_many", forbidden):
        return rate_player(
            case.mode, case.player_id, case.state, case.match, case.snapshots, case.forced_score
        )


def paths_agree(case: Case) -> PlayerUpdate:
    """The fast path's update, checked equal to the general path's."""
    fast = fast_path(case)
    assert fast == general_path(case)
    return fast


# --- strategies ------------------------------------------------------------------------------

ages = st.one_of(
    st.none(),
    # From a few days in the future (older match: no inactivity) to two months ago.
    st.floats(-3 * DAY, 60 * DAY, allow_nan=False),
    st.integers(-3, 60).map(lambda days: days * DAY),
)


@st.composite
def player_states(draw: st.DrawFn, at: float) -> PlayerState:
    age = draw(ages)
    return PlayerState(
        draw(st.floats(0.0, 3000.0, allow_nan=False)),
        draw(st.floats(1.0, 500.0, allow_nan=False)),
        draw(st.one_of(st.none(), st.floats(0.02, 0.12, allow_nan=False))),
        draw(st.integers(0, 10000)),
        # Few games, where the experience offset is large, as often as many.
        draw(st.one_of(st.integers(0, 12), st.integers(0, 5000))),
        None if age is None else at - age,
        # Sensitivities to a learned drift (only a learning mode reads them).
        draw(st.one_of(st.just(0.0), st.floats(-200.0, 200.0, allow_nan=False))),
        draw(st.one_of(st.just(0.0), st.floats(-5000.0, 20000.0, allow_nan=False))),
    )


@st.composite
def cases(draw: st.DrawFn) -> Case:
    at = T0 + draw(st.floats(0.0, 30 * DAY, allow_nan=False))
    mode = draw(st.sampled_from(MODES))
    me, other = "me", "them"
    teams = ((me,), (other,)) if draw(st.booleans()) else ((other,), (me,))
    ranks = draw(st.sampled_from([(0, 1), (1, 0), (0, 0), (3, 7), (2, 2)]))
    state = draw(st.one_of(st.none(), player_states(at)))
    snapshots: dict[str, PlayerState] = {}
    own_kind = draw(st.sampled_from(["missing", "same", "other"]))
    if own_kind == "same" and state is not None:
        snapshots[me] = state
    elif own_kind == "other":
        # A different object with different values: the player moved since the match started.
        snapshots[me] = draw(player_states(at))
    if draw(st.booleans()):
        snapshots[other] = draw(player_states(at))
    forced = draw(st.sampled_from([None, None, 0.0]))
    return Case(mode, me, state, MatchView(teams, ranks, at), snapshots, forced)


# --- properties ------------------------------------------------------------------------------


@settings(deadline=None, max_examples=300)
@given(cases())
def test_fast_path_equals_general_path_exactly(case: Case) -> None:
    fast = fast_path(case)
    general = general_path(case)
    assert fast == general
    # Field by field too, so a failure names the field (and == on floats is exact).
    assert fast.state.rating == general.state.rating
    assert fast.state.deviation == general.state.deviation
    assert fast.state.volatility == general.state.volatility
    assert fast.state.rank_points == general.state.rank_points
    assert fast.state.games == general.state.games
    assert fast.state.last_played == general.state.last_played
    assert fast.score == general.score
    assert fast.expected_score == general.expected_score


def test_the_composite_team_shift_moves_with_the_drift_on_both_paths() -> None:
    """Found by the property above: a new player (no stored state) whose own snapshot, taken
    at match start, carries a drift slope. The composite-team shift (own rating now minus
    then) moves along it in the general path, so the 1v1 path moves it too."""
    mode = next(m for m in MODES if m.name == "glicko2-composite_team-learning-False")
    snapshots = {"me": PlayerState(1400.0, 90.0, 0.06, 0, 12, T0 - DAY, 20.0, 50.0)}
    match = MatchView((("them",), ("me",)), (0, 1), T0)
    fast = paths_agree(Case(mode, "me", None, match, snapshots, None))
    assert fast.state.drift_slope != 0.0


@settings(deadline=None, max_examples=100)
@given(cases())
def test_both_players_of_a_match_agree_across_paths(case: Case) -> None:
    # The opponent's side of the same match, with the same snapshots.
    paths_agree(dataclasses.replace(case, player_id="them", state=case.snapshots.get("them")))


@settings(deadline=None, max_examples=300)
@given(cases())
def test_rate_match_of_a_duel_equals_rate_player_for_each_player(case: Case) -> None:
    # rate_match takes the pre-match states as everyone's snapshots (the replay's situation).
    states = dict(case.snapshots)
    with mock.patch.object(engine, "rate_player", mock.Mock(side_effect=AssertionError)):
        duel = rate_match(case.mode, case.match, states)
    for pid in ("me", "them"):
        alone = rate_player(case.mode, pid, states.get(pid), case.match, states)
        assert duel[pid] == alone
        assert duel[pid].state.rating == alone.state.rating
        assert duel[pid].state.deviation == alone.state.deviation
        assert duel[pid].state.volatility == alone.state.volatility
        assert duel[pid].expected_score == alone.expected_score


@st.composite
def any_matches(draw: st.DrawFn) -> tuple[ModeConfig, MatchView, dict[str, PlayerState]]:
    """Any shape: 1v1, teams of up to three, free-for-all of up to five teams."""
    at = T0 + draw(st.floats(0.0, 30 * DAY, allow_nan=False))
    # 1v1 (where the fast paths apply) as often as every other shape together.
    sizes = draw(st.one_of(st.just([1, 1]), st.lists(st.integers(1, 3), min_size=2, max_size=5)))
    names = iter(f"p{i}" for i in range(sum(sizes)))
    teams = tuple(tuple(next(names) for _ in range(size)) for size in sizes)
    ranks = tuple(draw(st.lists(st.integers(0, 3), min_size=len(teams), max_size=len(teams))))
    states = {pid: draw(player_states(at)) for team in teams for pid in team if draw(st.booleans())}
    return draw(st.sampled_from(MODES)), MatchView(teams, ranks, at), states


@settings(deadline=None, max_examples=300)
@given(any_matches())
def test_rate_match_of_any_match_equals_rate_player_for_each_player(
    drawn: tuple[ModeConfig, MatchView, dict[str, PlayerState]],
) -> None:
    # Whichever path rate_match and rate_player take for the shape, every player's update is
    # what the general path computes with the pre-match states as snapshots.
    mode, match, states = drawn
    rated = rate_match(mode, match, states)
    assert set(rated) == {pid for team in match.teams for pid in team}
    for pid, update in rated.items():
        general = general_path(Case(mode, pid, states.get(pid), match, states, None))
        assert update == general
        assert update.state.rating == general.state.rating
        assert update.state.deviation == general.state.deviation
        assert update.expected_score == general.expected_score


def test_a_whole_match_algorithm_never_takes_a_1v1_shortcut() -> None:
    mode = ModeConfig("zs", ZoneStatsConfig())
    stats = {"me": PlayerStats(120.0, 600.0), "them": PlayerStats(80.0, 600.0)}
    match = MatchView((("me",), ("them",)), (0, 1), T0, stats)
    with pytest.raises(ValueError, match="zonestats rates a whole match"):
        rate_duel(mode, None, None, 1.0, T0)
    with mock.patch.object(engine, "_rate_many", wraps=engine._rate_many) as general:
        rated = rate_match(mode, match, {})
    assert general.call_count == 2
    assert rated["me"].state.rating > 500.0 > rated["them"].state.rating


def test_rate_match_of_a_player_against_themselves_takes_the_general_path() -> None:
    mode = MODES[0]
    assert not mode.experience.active
    # The decoders reject such a match; the engine rates it as rate_player does, not as a duel.
    match = MatchView((("me",), ("me",)), (0, 1), T0)
    assert rate_match(mode, match, {}) == {"me": rate_player(mode, "me", None, match, {})}


# --- hand-picked cases -----------------------------------------------------------------------


def test_own_snapshot_differing_from_state_shifts_the_composite_team_opponent() -> None:
    # Under composite_team the opponent is moved by (own now - own at match start); the paths
    # must agree on that, and it must actually change the result.
    mode = ModeConfig("g2", Glicko2Config(), TeamStrategy.COMPOSITE_TEAM)
    state = PlayerState(1650.0, 80.0, 0.06, 5000, 20, T0 - DAY)
    at_start = PlayerState(1600.0, 90.0, 0.06, 4800, 19, T0 - 2 * DAY)
    them = PlayerState(1550.0, 120.0, 0.06, 4000, 10, T0 - 10 * DAY)
    match = MatchView((("me",), ("them",)), (1, 0), T0)
    moved = {"me": at_start, "them": them}
    plain = {"me": state, "them": them}
    a = paths_agree(Case(mode, "me", state, match, moved, None))
    b = paths_agree(Case(mode, "me", state, match, plain, None))
    assert a.state.rating != b.state.rating


def test_forced_loss_overrides_a_win_on_both_paths() -> None:
    mode = ModeConfig("g1", Glicko1Config())
    match = MatchView((("me",), ("them",)), (0, 1), T0)
    fast = paths_agree(Case(mode, "me", None, match, {}, 0.0))
    assert fast.score == 0.0
    assert fast.state.rating < 1500.0


@pytest.mark.parametrize("mode", MODES[:: len(TeamStrategy) * 4])
def test_fast_path_rejects_a_player_not_in_the_match(mode: ModeConfig) -> None:
    case = Case(mode, "c", None, MatchView((("a",), ("b",)), (0, 1), T0), {}, None)
    with pytest.raises(ValueError, match="'c' is not in the match"):
        fast_path(case)
    with pytest.raises(ValueError, match="'c' is not in the match"):
        general_path(case)


LEARNING = [m for m in MODES if m.drift is not None]


@settings(deadline=None, max_examples=300)
@given(cases(), st.sampled_from(LEARNING))
def test_duel_states_are_rate_duels_states_from_what_its_updates_were_rated_from(
    case: Case, mode: ModeConfig
) -> None:
    # Replay's hot path builds no updates: the same new states, and the duel as its players
    # met each other and as they were moved along the drift, as the updates carry them.
    (a,), (b,) = case.match.teams
    states = dict(case.snapshots)
    score_a = score_against(*case.match.ranks)
    update_a, update_b = rate_duel(mode, states.get(a), states.get(b), score_a, case.match.at)
    assert mode.drift is not None
    new_a, new_b, seen, moves = duel_states(
        mode, mode.drift, states.get(a), states.get(b), score_a, case.match.at
    )
    assert (new_a, new_b) == (update_a.state, update_b.state)
    met_a, met_b = update_a.opponents[0], update_b.opponents[0]
    own_a, own_b = update_a.own, update_b.own
    assert seen == (
        own_a.rating, own_a.deviation, met_b.rating, own_b.rating, own_b.deviation, met_a.rating
    )  # fmt: skip
    assert update_a.moved is not None and update_b.moved is not None
    if moves is None:
        assert update_a.moved == (own_a, met_a)
    else:
        (moved_a, moved_met_b), (moved_b, moved_met_a) = update_a.moved, update_b.moved
        assert moves == (
            moved_a.rating, moved_a.deviation, moved_met_b.rating, moved_met_b.deviation,
            moved_b.rating, moved_met_a.rating,
        )  # fmt: skip
