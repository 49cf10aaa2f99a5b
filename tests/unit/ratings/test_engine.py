"""The single entry point: rate_player / rate_match over every algorithm and team shape."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stream.ratings import glicko2
from stream.ratings.elo import EloConfig
from stream.ratings.engine import MatchView, initial_state, rate_match, rate_player, skill_at
from stream.ratings.glicko1 import Glicko1Config
from stream.ratings.glicko2 import Glicko2Config
from stream.ratings.modeconfig import ModeConfig
from stream.ratings.population import Population, PopulationConfig
from stream.ratings.skill import PlayerState, PlayerStats, Result, Skill
from stream.ratings.teams import TeamStrategy
from stream.ratings.zonestats import ZoneStatsConfig

DAY = 86400.0
T0 = 1_700_000_000.0
GLICKO2 = ModeConfig("ranked")
FRESH_350 = PlayerState(1500.0, 350.0, 0.06)


def one_v_one(rank_a: int = 0, rank_b: int = 1, at: float = T0) -> MatchView:
    return MatchView((("a",), ("b",)), (rank_a, rank_b), at)


def test_two_fresh_players_match_the_published_glicko2_values() -> None:
    # Reference: two fresh 1500/350/0.06 players, one game (skillratings asserts 1662 / 290).
    states = {"a": FRESH_350, "b": FRESH_350}
    out = rate_match(GLICKO2, one_v_one(), states)
    assert out["a"].state.rating == pytest.approx(1662.3109, abs=1e-4)
    assert out["b"].state.rating == pytest.approx(1337.6891, abs=1e-4)
    assert out["a"].state.deviation == pytest.approx(290.3190, abs=1e-4)
    assert out["a"].state.volatility == pytest.approx(0.05999967537233814, abs=1e-15)
    assert out["a"].score == 1.0 and out["b"].score == 0.0
    assert out["a"].expected_score == pytest.approx(0.5)
    assert out["a"].state.games == 1 and out["a"].state.last_played == T0


def test_one_v_one_is_exactly_the_algorithm_update() -> None:
    a = PlayerState(1620.0, 90.0, 0.055, 4000, 30, T0)
    b = PlayerState(1540.0, 140.0, 0.065, 3500, 12, T0)
    out = rate_player(GLICKO2, "a", a, one_v_one(rank_a=1, rank_b=0), {"a": a, "b": b})
    direct = glicko2.rate(Glicko2Config(), a.skill, [Result(1540.0, 140.0, 0.0)])
    assert (out.state.rating, out.state.deviation, out.state.volatility) == (
        direct.rating,
        direct.deviation,
        direct.volatility,
    )


def test_inactivity_is_applied_to_the_player_and_to_the_snapshots() -> None:
    a = PlayerState(1600.0, 60.0, 0.06, 0, 50, T0)
    b = PlayerState(1600.0, 60.0, 0.06, 0, 50, T0)
    later = T0 + 28 * DAY  # two rating periods
    out = rate_player(GLICKO2, "a", a, one_v_one(at=later), {"a": a, "b": b})
    grown = math.sqrt(60.0**2 + 2 * (0.06 * glicko2.SCALE) ** 2)
    own = Skill(1600.0, grown, 0.06)
    direct = glicko2.rate(Glicko2Config(), own, [Result(1600.0, grown, 1.0)])
    assert out.state.rating == pytest.approx(direct.rating, abs=1e-9)
    assert out.state.deviation == pytest.approx(direct.deviation, abs=1e-9)
    assert out.state.last_played == later


def test_an_older_match_adds_no_inactivity_and_keeps_last_played() -> None:
    a = PlayerState(1600.0, 60.0, 0.06, 0, 50, T0)
    assert skill_at(Glicko2Config(), a, T0 - 30 * DAY) is a
    out = rate_player(GLICKO2, "a", a, one_v_one(at=T0 - DAY), {"a": a})
    assert out.state.last_played == T0


def test_missing_snapshot_counts_as_a_new_player() -> None:
    out = rate_player(GLICKO2, "a", None, one_v_one(), {})
    assert out.state == rate_match(GLICKO2, one_v_one(), {})["a"].state
    assert out.state.rating > 1500.0
    assert initial_state(GLICKO2).deviation == pytest.approx(2.015 * 173.7178)


def test_forced_loss_overrides_the_ranks() -> None:
    out = rate_player(GLICKO2, "a", FRESH_350, one_v_one(), {"b": FRESH_350}, forced_score=0.0)
    assert out.score == 0.0
    assert out.state.rating < 1500.0


def test_player_not_in_the_match_is_an_error() -> None:
    with pytest.raises(ValueError, match="not in the match"):
        rate_player(GLICKO2, "zed", None, one_v_one(), {})


def test_composite_team_weak_teammate_softens_a_loss() -> None:
    mode = ModeConfig("2v2", teams=TeamStrategy.COMPOSITE_TEAM)
    star = PlayerState(1900.0, 60.0, 0.06, 0, 100, T0)
    strong = PlayerState(1900.0, 60.0, 0.06, 0, 100, T0)
    weak = PlayerState(1300.0, 60.0, 0.06, 0, 100, T0)
    foe = PlayerState(1600.0, 60.0, 0.06, 0, 100, T0)
    lost = MatchView((("star", "mate"), ("x", "y")), (1, 0), T0)
    with_strong = rate_player(mode, "star", star, lost, {"mate": strong, "x": foe, "y": foe})
    with_weak = rate_player(mode, "star", star, lost, {"mate": weak, "x": foe, "y": foe})
    assert with_weak.state.rating > with_strong.state.rating
    # Composite opponent ignores the teammate entirely.
    opp_mode = ModeConfig("2v2", teams=TeamStrategy.COMPOSITE_OPPONENT)
    a = rate_player(opp_mode, "star", star, lost, {"mate": strong, "x": foe, "y": foe})
    b = rate_player(opp_mode, "star", star, lost, {"mate": weak, "x": foe, "y": foe})
    assert a.state == b.state


def test_free_for_all_ranks_and_draws() -> None:
    mode = ModeConfig("ffa", EloConfig())
    match = MatchView((("a",), ("b",), ("c",), ("d",)), (0, 1, 1, 3), T0)
    out = rate_match(mode, match, {})
    assert out["a"].score == 1.0
    assert out["b"].score == pytest.approx(0.5)  # beat d, drew c, lost to a
    assert out["d"].score == 0.0
    assert out["b"].state.rating == pytest.approx(1500.0)
    # Mean of pairwise changes: a beat three equals, each worth 16 with K = 32.
    assert out["a"].state.rating == pytest.approx(1516.0)
    assert sum(u.state.rating - 1500.0 for u in out.values()) == pytest.approx(0.0)


def test_zonestats_through_the_engine_uses_the_stats() -> None:
    mode = ModeConfig("mech", ZoneStatsConfig(), TeamStrategy.INDIVIDUAL)
    stats = {"a": PlayerStats(300.0, 1200.0), "b": PlayerStats(100.0, 1200.0)}
    out = rate_match(mode, MatchView((("a",), ("b",)), (1, 0), T0, stats), {})
    # a scored more per hour, so a gains despite the ranks saying otherwise.
    assert out["a"].state.rating > 500.0 > out["b"].state.rating
    assert out["a"].state.deviation == 0.0 and out["a"].state.volatility is None


def test_glicko1_mode_rates_through_the_engine() -> None:
    mode = ModeConfig("ft2", Glicko1Config(min_deviation=0.0))
    states = {"a": PlayerState(1500.0, 350.0, None), "b": PlayerState(1500.0, 350.0, None)}
    out = rate_match(mode, one_v_one(), states)
    # Reference: continuous Glicko-1 of the rating-update seed, two fresh players.
    assert out["a"].state.rating == pytest.approx(1662.2120, abs=1e-4)
    assert out["b"].state.deviation == pytest.approx(290.2305, abs=1e-4)


ratings = st.floats(min_value=1000.0, max_value=2000.0)
deviations = st.floats(min_value=40.0, max_value=350.0)
modes = st.sampled_from(
    [GLICKO2, ModeConfig("g1", Glicko1Config()), ModeConfig("elo", EloConfig())]
)


@given(modes, ratings, deviations, ratings, deviations, st.sampled_from([(0, 1), (1, 0), (0, 0)]))
def test_rate_match_is_deterministic_and_moves_in_the_results_direction(
    mode: ModeConfig, ra: float, da: float, rb: float, db: float, ranks: tuple[int, int]
) -> None:
    vol = 0.06 if isinstance(mode.algorithm, Glicko2Config) else None
    dev_a = da if not isinstance(mode.algorithm, EloConfig) else 0.0
    dev_b = db if not isinstance(mode.algorithm, EloConfig) else 0.0
    states = {
        "a": PlayerState(ra, dev_a, vol, 0, 1, T0),
        "b": PlayerState(rb, dev_b, vol, 0, 1, T0),
    }
    match = MatchView((("a",), ("b",)), ranks, T0 + 3600)
    first = rate_match(mode, match, states)
    assert first == rate_match(mode, match, dict(states))
    if ranks == (0, 1):
        assert first["a"].state.rating >= ra and first["b"].state.rating <= rb
        assert first["a"].state.rank_points >= 0
    elif ranks == (1, 0):
        assert first["a"].state.rating <= ra and first["b"].state.rating >= rb
    assert first["a"].expected_score + first["b"].expected_score == pytest.approx(1.0)


# --- shared teams, uneven sides, the population in force ---------------------------------------


def seven_a_side(winner_first: bool = True) -> tuple[MatchView, dict[str, PlayerState]]:
    home = tuple(f"h{i}" for i in range(7))
    away = tuple(f"a{i}" for i in range(7))
    settled = PlayerState(1500.0, 60.0, 0.06, 0, 50, T0)
    states = {pid: settled for pid in home + away}
    states["h0"] = PlayerState(1500.0, 250.0, 0.06, 0, 2, T0)  # a newcomer, still uncertain
    ranks = (0, 1) if winner_first else (1, 0)
    return MatchView((home, away), ranks, T0), states


def test_shared_gives_each_of_fourteen_players_a_share_of_the_result() -> None:
    match, states = seven_a_side()
    shared = rate_match(ModeConfig("7v7", teams=TeamStrategy.SHARED), match, states)
    alone = rate_match(ModeConfig("7v7", teams=TeamStrategy.COMPOSITE_OPPONENT), match, states)
    for pid in ("h1", "a1"):
        moved = shared[pid].state.rating - 1500.0
        full = alone[pid].state.rating - 1500.0
        assert math.copysign(1.0, moved) == math.copysign(1.0, full)
        # A settled member carries about 1/sqrt(7) of the logit: far less than a 1v1 update.
        assert abs(moved) < 0.5 * abs(full)
    # Each member's update is scaled by their share of the team's uncertainty.
    assert shared["h0"].state.rating - 1500.0 > 5 * (shared["h1"].state.rating - 1500.0)


def test_auto_rates_rosters_as_composite_opponent_and_pickups_as_shared() -> None:
    match, states = seven_a_side()
    rosters = ModeConfig("7v7", teams=TeamStrategy.AUTO)
    pickups = ModeConfig(
        "7v7", teams=TeamStrategy.AUTO, population=PopulationConfig(persistence=0.1)
    )
    opponent = ModeConfig("7v7", teams=TeamStrategy.COMPOSITE_OPPONENT)
    shared = ModeConfig("7v7", teams=TeamStrategy.SHARED)
    assert rate_match(rosters, match, states) == rate_match(opponent, match, states)
    assert rate_match(pickups, match, states) == rate_match(shared, match, states)


def test_a_win_of_the_smaller_side_moves_more_when_the_edge_says_it_was_unlikely() -> None:
    mode = ModeConfig("casual", teams=TeamStrategy.SHARED)
    edged = ModeConfig(
        "casual", teams=TeamStrategy.SHARED, population=PopulationConfig(size_edge=150.0)
    )
    match = MatchView((("a", "b"), ("c", "d", "e")), (0, 1), T0)
    plain = rate_player(mode, "a", None, match, {})
    upset = rate_player(edged, "a", None, match, {})
    assert upset.state.rating > plain.state.rating > 1500.0
    assert upset.expected_score < plain.expected_score == pytest.approx(0.5)


def test_the_population_given_is_the_one_in_force() -> None:
    mode = ModeConfig("duel")
    broad = Population(deviation=400.0, size_edge=0.0, persistence=1.0)
    narrow = Population(deviation=100.0, size_edge=0.0, persistence=1.0)
    wide = rate_player(mode, "a", None, one_v_one(), {}, population=broad)
    tight = rate_player(mode, "a", None, one_v_one(), {}, population=narrow)
    # A new player starts at the population's deviation: a broad prior moves further.
    assert wide.state.rating - 1500.0 > 3 * (tight.state.rating - 1500.0)
    assert wide.state == rate_player(broad.rules(mode), "a", None, one_v_one(), {}).state
    assert rate_match(mode, one_v_one(), {}, broad)["a"] == wide


@st.composite
def shared_matches(draw: st.DrawFn) -> tuple[MatchView, dict[str, PlayerState]]:
    """Two to four teams of one to five players, any ratings and deviations, distinct ranks."""
    sizes = draw(st.lists(st.integers(1, 5), min_size=2, max_size=4))
    teams = tuple(tuple(f"t{t}p{i}" for i in range(size)) for t, size in enumerate(sizes))
    states = {
        pid: PlayerState(
            draw(st.floats(1000.0, 2000.0)), draw(st.floats(40.0, 350.0)), 0.06, 0, 10, T0
        )
        for team in teams
        for pid in team
    }
    ranks = tuple(draw(st.permutations(range(len(teams)))))
    return MatchView(teams, ranks, T0), states


@given(shared_matches(), st.floats(0.0, 300.0))
def test_shared_moves_every_winner_up_and_every_loser_down(
    drawn: tuple[MatchView, dict[str, PlayerState]], edge: float
) -> None:
    match, states = drawn
    mode = ModeConfig("m", teams=TeamStrategy.SHARED, population=PopulationConfig(size_edge=edge))
    updates = rate_match(mode, match, states)
    best, worst = match.ranks.index(0), match.ranks.index(len(match.teams) - 1)
    for pid in match.teams[best]:
        assert updates[pid].state.rating >= states[pid].rating
    for pid in match.teams[worst]:
        assert updates[pid].state.rating <= states[pid].rating
    for update in updates.values():
        assert 0.0 < update.expected_score < 1.0
        assert math.isfinite(update.state.rating)


def test_a_shared_draw_between_equal_teams_moves_nobody() -> None:
    even = PlayerState(1500.0, 80.0, 0.06, 0, 10, T0)
    match = MatchView((("a", "b"), ("c", "d")), (0, 0), T0)
    states = dict.fromkeys("abcd", even)
    updates = rate_match(ModeConfig("m", teams=TeamStrategy.SHARED), match, states)
    assert all(u.state.rating == pytest.approx(1500.0) for u in updates.values())
