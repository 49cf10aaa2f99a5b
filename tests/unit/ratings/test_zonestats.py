"""ZoneStats (MechWarrior 4): hand-worked examples of the "Detail Equations", and properties.

Defaults throughout: T = 120, GAME_MULT = 2, MAX_GAME_LENGTH = 20 minutes, start rating 500.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream.ratings import zonestats
from stream.ratings.skill import PlayerStats, Skill
from stream.ratings.zonestats import ZoneStatsConfig

CONFIG = ZoneStatsConfig()
MIN = 60.0  # seconds


def predicted(me: float, opponent: float) -> float:
    """Equation 1, written out independently of the module."""
    return 1.0 / (1.0 + math.exp((opponent - me) / 120.0))


def played(**stats: tuple[float, float]) -> dict[str, PlayerStats]:
    """Each player's stats from (score, minutes in the game)."""
    return {p: PlayerStats(score, minutes * MIN) for p, (score, minutes) in stats.items()}


def one_against_two(a: tuple[float, float]) -> dict[str, float]:
    """The offsets of A (380, with ``a``: score and minutes) beating B and C (500 each, 30 and
    20 points in 20 minutes) alone."""
    stats = played(A=a, B=(30.0, 20), C=(20.0, 20))
    return CONFIG.offsets([["A"], ["B", "C"]], {"A": 380.0, "B": 500.0, "C": 500.0}, [1, 2], stats)


# --- hand-worked examples -------------------------------------------------------------------


def test_one_on_one_equal_ratings() -> None:
    # Both 500, both 20 minutes. A: 100 points (300 per hour), B: 50 (150 per hour): A wins.
    # Eq. 1: predicted 0.5. Eq. 2: A 1 - 0.5 = 0.5. Eq. 3: time min(20, 20, 20) = 20,
    # 0.5 * 2 * 20 = 20. Eq. 5: scale = 20 * 2 / 20 = 2, capped at 1.
    stats = played(A=(100.0, 20), B=(50.0, 20))
    result = CONFIG.offsets([["A"], ["B"]], {"A": 500.0, "B": 500.0}, [1, 2], stats)
    assert result == {"A": pytest.approx(20.0, abs=1e-12), "B": pytest.approx(-20.0, abs=1e-12)}


def test_score_per_hour_decides_and_shared_time_weighs() -> None:
    # A (620) played 15 minutes and scored 30: 120 per hour. B (500) played 30 minutes and
    # scored 50: 100 per hour. A wins on SPH although B scored more.
    # Eq. 1: predicted_A = 1 / (1 + exp(-120 / 120)) = 0.7310585786300049.
    # Eq. 2: A 1 - 0.7310585786300049 = 0.2689414213699951.
    # Eq. 3: time = min(20, 15, 30) = 15; 0.2689414213699951 * 2 * 15 = 8.068242641099853.
    # Eq. 5: both |offsets| are highest; shortest time 15: 15 * 2 / 8.07 > 1, no scaling.
    stats = played(A=(30.0, 15), B=(50.0, 30))
    result = CONFIG.offsets([["A"], ["B"]], {"A": 620.0, "B": 500.0}, [2, 1], stats)
    indiv = (1.0 - predicted(620.0, 500.0)) * 2.0 * 15.0
    assert indiv == pytest.approx(8.068242641099853, abs=1e-12)
    assert result["A"] == pytest.approx(indiv, abs=1e-12)
    assert result["B"] == pytest.approx(-indiv, abs=1e-12)


def test_game_mult_scaling_kicks_in() -> None:
    # 1 v 2: A (380) outscores B and C (500 each); all 20 minutes.
    # Eq. 1: predicted_A = 1 / (1 + exp(120 / 120)) = 0.2689414213699951 against each.
    # Eq. 2-3: A gets (1 - 0.2689414213699951) * 2 * 20 = 29.24234314520019 per opponent.
    # Eq. 4: A +58.48468629040039; B and C -29.24234314520019 each (they are teammates).
    # Eq. 5: highest 58.48468629040039 (A, 20 minutes): scale = 20 * 2 / 58.48... = 0.68394.
    # Eq. 6: A exactly 40 = 2 points per minute, B and C -20 each.
    result = one_against_two((90.0, 20))
    per_pair = (1.0 - predicted(380.0, 500.0)) * 2.0 * 20.0
    assert per_pair == pytest.approx(29.24234314520019, abs=1e-12)
    scale = 20.0 * 2.0 / (2 * per_pair)
    assert scale == pytest.approx(0.6839397205857212, abs=1e-12)
    assert result == pytest.approx({"A": 40.0, "B": -20.0, "C": -20.0}, abs=1e-9)


def test_the_scale_uses_the_top_players_own_time() -> None:
    # As above, but A was in only 10 minutes: pair times min(20, 10, 20) = 10.
    # A: 2 * 0.7310585786300049 * 2 * 10 = 29.24234314520019; B, C: -14.621171572600095.
    # Scale = 10 * 2 / 29.24234314520019: A ends at exactly 20, B and C at -10.
    result = one_against_two((45.0, 10))
    assert result == pytest.approx({"A": 20.0, "B": -10.0, "C": -10.0}, abs=1e-9)


def test_time_in_game_for_the_scale_is_not_capped_at_max_game_length() -> None:
    # As in the scaling example, but A stayed 60 minutes: pair times are capped at 20, so A's
    # offset is still 58.48468629040039, while the allowance is 60 * 2 = 120: no scaling.
    result = one_against_two((270.0, 60))
    assert result["A"] == pytest.approx(58.48468629040039, abs=1e-9)


def test_two_versus_two_teammates_are_not_compared() -> None:
    # Teams [A, B] v [C, D], all 500, all 20 minutes, so SPH orders like score:
    # A 300 > C 200 > D 100 > B 10. Every pair is worth +-0.5 * 2 * 20 = +-20.
    # A-C: A +20, C -20. A-D: A +20, D -20. B-C: B -20, C +20. B-D: B -20, D +20.
    # Eq. 4: A +40, B -40, C 0, D 0 (A-B and C-D are teammates: not compared, else A +60).
    # Eq. 5: highest 40 at 20 minutes: scale 1. The ranks given (team 2 first) are ignored
    # because everyone has stats.
    stats = played(A=(300.0, 20), B=(10.0, 20), C=(200.0, 20), D=(100.0, 20))
    ratings = dict.fromkeys("ABCD", 500.0)
    result = CONFIG.offsets([["A", "B"], ["C", "D"]], ratings, [2, 1], stats)
    assert result == {
        "A": pytest.approx(40.0, abs=1e-12),
        "B": pytest.approx(-40.0, abs=1e-12),
        "C": pytest.approx(0.0, abs=1e-12),
        "D": pytest.approx(0.0, abs=1e-12),
    }


def test_free_for_all() -> None:
    # Three teams of one, all 10 minutes (pair time 10). Ratings A 500, B 560, C 440.
    # Scores A 50, B 50, C 20: SPH 300, 300, 120.
    # A-B tie:  0.5 - 1 / (1 + exp(0.5)) = 0.1224593312018546; * 2 * 10 = 2.449186624037092.
    # A-C A:    1 - 1 / (1 + exp(-0.5)) = 0.3775406687981454; * 20 = 7.550813375962908.
    # B-C B:    1 - 1 / (1 + exp(-1.0)) = 0.2689414213699951; * 20 = 5.378828427399902.
    # Eq. 4: A 2.449 + 7.551 = 10; B -2.449 + 5.379 = 2.92964180336281; C -12.92964180336281.
    # Eq. 5: highest 12.93 (C, 10 minutes): 10 * 2 / 12.93 > 1, no scaling.
    stats = played(A=(50.0, 10), B=(50.0, 10), C=(20.0, 10))
    ratings = {"A": 500.0, "B": 560.0, "C": 440.0}
    result = CONFIG.offsets([["A"], ["B"], ["C"]], ratings, [1, 1, 3], stats)
    a_b = (0.5 - predicted(500.0, 560.0)) * 20.0
    a_c = (1.0 - predicted(500.0, 440.0)) * 20.0
    b_c = (1.0 - predicted(560.0, 440.0)) * 20.0
    assert a_b == pytest.approx(2.449186624037092, abs=1e-12)
    assert a_c == pytest.approx(7.550813375962908, abs=1e-12)
    assert b_c == pytest.approx(5.378828427399902, abs=1e-12)
    assert result["A"] == pytest.approx(a_b + a_c, abs=1e-12)
    assert result["A"] == pytest.approx(10.0, abs=1e-12)
    assert result["B"] == pytest.approx(-a_b + b_c, abs=1e-12)
    assert result["C"] == pytest.approx(-a_c - b_c, abs=1e-12)
    assert result["C"] == pytest.approx(-12.92964180336281, abs=1e-12)


def test_without_stats_ranks_decide_and_everyone_counts_full_time() -> None:
    # 1 v 1, both 500, no stats: B ranks 1st. Predicted 0.5; A (0 - 0.5) * 2 * 20 = -20.
    result = CONFIG.offsets([["A"], ["B"]], {"A": 500.0, "B": 500.0}, [2, 1], None)
    assert result == {"A": pytest.approx(-20.0, abs=1e-12), "B": pytest.approx(20.0, abs=1e-12)}
    # Equal ranks tie: nothing moves between equal players.
    tie = CONFIG.offsets([["A"], ["B"]], {"A": 500.0, "B": 500.0}, [1, 1], None)
    assert tie == {"A": 0.0, "B": 0.0}


def test_rank_fallback_for_a_player_missing_from_stats() -> None:
    # FFA A 500, B 500, C 380; ranks A 3rd, B 2nd, C 1st; C has no stats.
    # A-B by SPH (A 100 in 10 min = 600/h beats B 10 in 10 min = 60/h): time min(20, 10, 10)
    #   = 10; (1 - 0.5) * 2 * 10 = +10 A, -10 B.
    # A-C by rank (C better), time 20: (0 - 0.7310585786300049) * 40 = -29.24234314520019 A.
    # B-C the same for B. Eq. 4: A -19.24234314520019, B -39.24234314520019,
    # C +58.48468629040039. Eq. 5: C's time counts as 20 minutes: scale 40 / 58.48468629040039.
    stats = played(A=(100.0, 10), B=(10.0, 10))
    ratings = {"A": 500.0, "B": 500.0, "C": 380.0}
    result = CONFIG.offsets([["A"], ["B"], ["C"]], ratings, [3, 2, 1], stats)
    by_rank = (0.0 - predicted(500.0, 380.0)) * 2.0 * 20.0
    assert by_rank == pytest.approx(-29.24234314520019, abs=1e-12)
    scale = 20.0 * 2.0 / (-2 * by_rank)
    assert result["C"] == pytest.approx(40.0, abs=1e-9)
    assert result["A"] == pytest.approx((10.0 + by_rank) * scale, abs=1e-9)
    assert result["B"] == pytest.approx((-10.0 + by_rank) * scale, abs=1e-9)


def test_a_player_with_zero_seconds_contributes_nothing() -> None:
    # A scored but has 0 seconds: compared as a tie with time 0, no division by zero.
    # B (20 min, 200 points) beats C (20 min, 100 points): +-0.5 * 2 * 20 = +-20.
    stats = played(A=(500.0, 0), B=(200.0, 20), C=(100.0, 20))
    ratings = dict.fromkeys("ABC", 500.0)
    result = CONFIG.offsets([["A"], ["B"], ["C"]], ratings, [1, 2, 3], stats)
    assert result == {
        "A": 0.0,
        "B": pytest.approx(20.0, abs=1e-12),
        "C": pytest.approx(-20.0, abs=1e-12),
    }
    alone = CONFIG.offsets([["A"], ["B"]], {"A": 600.0, "B": 400.0}, [1, 2], stats)
    assert alone == {"A": 0.0, "B": 0.0}


def test_tied_top_offsets_use_the_strictest_scale_in_any_order() -> None:
    # [A, B] (380 each, 20 min) beat [C, D] (500 each, 30 min): every pair
    # (1 - 0.2689414213699951) * 2 * 20 = 29.24234314520019, so all four |offsets| are
    # 58.48468629040039. The shortest time among them is 20: scale 40 / 58.48 (with C's 30
    # minutes it would be 60 / 58.48 > 1, no scaling). Listing order does not matter.
    stats = played(A=(100.0, 20), B=(100.0, 20), C=(10.0, 30), D=(10.0, 30))
    ratings = {"A": 380.0, "B": 380.0, "C": 500.0, "D": 500.0}
    first = CONFIG.offsets([["A", "B"], ["C", "D"]], ratings, [1, 2], stats)
    second = CONFIG.offsets([["D", "C"], ["B", "A"]], ratings, [2, 1], stats)
    for result in (first, second):
        assert result == pytest.approx({"A": 40.0, "B": 40.0, "C": -40.0, "D": -40.0}, abs=1e-9)


def test_unrated_players_start_at_500() -> None:
    stats = played(A=(100.0, 20), B=(50.0, 20))
    result = CONFIG.offsets([["A"], ["B"]], {}, [1, 2], stats)
    assert result["A"] == pytest.approx(20.0, abs=1e-12)
    assert zonestats.rate_player(CONFIG, "A", [["A"], ["B"]], {}, [1, 2], stats) == pytest.approx(
        520.0, abs=1e-12
    )


def test_rate_player_adds_the_offset() -> None:
    stats = played(A=(30.0, 15), B=(50.0, 30))
    ratings = {"A": 620.0, "B": 500.0}
    teams = [["A"], ["B"]]
    offsets = CONFIG.offsets(teams, ratings, [1, 2], stats)
    for player in ("A", "B"):
        new = CONFIG.rate_player(player, teams, ratings, [1, 2], stats)
        assert new == ratings[player] + offsets[player]
    with pytest.raises(ValueError):
        CONFIG.rate_player("Z", teams, ratings, [1, 2], stats)


def test_malformed_matches_are_refused() -> None:
    with pytest.raises(ValueError):
        CONFIG.offsets([["A"], ["B"]], {}, [1], None)
    with pytest.raises(ValueError):
        CONFIG.offsets([["A"], ["A"]], {}, [1, 2], None)


def test_shape_of_an_algorithm_without_uncertainty() -> None:
    assert ZoneStatsConfig.name == "zonestats"
    assert CONFIG.initial() == Skill(500.0, 0.0, None)
    skill = Skill(612.0, 0.0, None)
    assert CONFIG.decay(skill, 1e9) == skill
    assert CONFIG.expected_score(Skill(620.0), Skill(500.0)) == pytest.approx(
        1.0 / (1.0 + math.exp(-1.0)), abs=1e-15
    )
    lo, hi = CONFIG.rating_bounds
    assert lo == pytest.approx(500.0 - 6.045 * 120.0, abs=1e-9)
    assert hi == pytest.approx(500.0 + 6.045 * 120.0, abs=1e-9)


# --- properties -----------------------------------------------------------------------------

ratings_st = st.floats(min_value=0.0, max_value=1500.0)
scores_st = st.floats(min_value=-50.0, max_value=500.0)
seconds_st = st.floats(min_value=0.0, max_value=3600.0)
# A drawn match: (teams, ratings, ranks, stats).
Match = tuple[list[list[str]], dict[str, float], list[int], dict[str, PlayerStats]]


@st.composite
def matches(draw: st.DrawFn, equal_time: bool) -> Match:
    sizes = draw(st.lists(st.integers(1, 3), min_size=2, max_size=4))
    teams: list[list[str]] = []
    for t, size in enumerate(sizes):
        teams.append([f"p{t}_{i}" for i in range(size)])
    players = [p for team in teams for p in team]
    ratings = {p: draw(ratings_st) for p in players}
    ranks = [draw(st.integers(1, len(teams))) for _ in teams]
    common = draw(st.floats(min_value=1.0, max_value=3600.0))
    stats = {
        p: PlayerStats(draw(scores_st), common if equal_time else draw(seconds_st)) for p in players
    }
    return teams, ratings, ranks, stats


@settings(deadline=None)
@given(matches(equal_time=True))
def test_zero_sum_when_everyone_played_equally_long(match: Match) -> None:
    teams, ratings, ranks, stats = match
    result = CONFIG.offsets(teams, ratings, ranks, stats)
    assert math.fsum(result.values()) == pytest.approx(0.0, abs=1e-9)


@settings(deadline=None)
@given(matches(equal_time=False), st.booleans())
def test_zero_sum_and_within_the_cap_in_any_match(match: Match, drop_stats: bool) -> None:
    # Stronger than the equal-time case: each pair is exactly antisymmetric, so any match sums
    # to zero; and nobody ends above GAME_MULT points per minute of their own time in game
    # (max_game_minutes when compared by rank).
    teams, ratings, ranks, stats = match
    result = CONFIG.offsets(teams, ratings, ranks, None if drop_stats else stats)
    assert math.fsum(result.values()) == pytest.approx(0.0, abs=1e-9)
    highest = max(abs(v) for v in result.values())
    top = [p for p, v in result.items() if abs(v) == highest]
    for player in top:
        minutes = 20.0 if drop_stats else stats[player].seconds / 60.0
        assert highest <= 2.0 * minutes * (1.0 + 1e-12) + 1e-12


@settings(deadline=None)
@given(
    st.lists(st.integers(1, 3), min_size=2, max_size=4),
    ratings_st,
    scores_st,
    st.floats(min_value=0.0, max_value=3600.0),
)
def test_equal_players_in_a_tie_do_not_move(
    sizes: list[int], rating: float, score: float, seconds: float
) -> None:
    teams = [[f"p{t}_{i}" for i in range(size)] for t, size in enumerate(sizes)]
    players = [p for team in teams for p in team]
    stats = {p: PlayerStats(score, seconds) for p in players}
    result = CONFIG.offsets(teams, dict.fromkeys(players, rating), [1] * len(teams), stats)
    assert all(v == 0.0 for v in result.values())
    by_rank = CONFIG.offsets(teams, dict.fromkeys(players, rating), [1] * len(teams), None)
    assert all(v == 0.0 for v in by_rank.values())


@settings(deadline=None)
@given(ratings_st, ratings_st, st.floats(1.0, 3600.0), st.floats(1.0, 3600.0))
def test_a_win_never_lowers_and_a_loss_never_raises(
    r_a: float, r_b: float, sec_a: float, sec_b: float
) -> None:
    # A outscores B per hour: 100 points in A's time against 50 in twice B's.
    stats = {
        "A": PlayerStats(100.0 * sec_a / 3600.0, sec_a),
        "B": PlayerStats(50.0 * sec_b / 3600.0, sec_b),
    }
    result = CONFIG.offsets([["A"], ["B"]], {"A": r_a, "B": r_b}, [2, 1], stats)
    assert result["A"] >= 0.0
    assert result["B"] <= 0.0


@settings(deadline=None)
@given(matches(equal_time=False))
def test_deterministic(match: Match) -> None:
    teams, ratings, ranks, stats = match
    assert CONFIG.offsets(teams, ratings, ranks, stats) == CONFIG.offsets(
        teams, ratings, ranks, stats
    )
