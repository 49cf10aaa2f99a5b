"""Continuous Glicko-1 (rating-update): Glickman's example, the seed's formulas, properties."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream.ratings import glicko1
from stream.ratings.glicko1 import Glicko1Config
from stream.ratings.skill import Result, Skill, SkillLike

CONFIG = Glicko1Config()
Q = math.log(10.0) / 400.0
# The reference vectors use no minimum deviation.
NO_MIN = Glicko1Config(min_deviation=0.0)

# Glickman, "The Glicko system" (example): player 1500 / RD 200 against these three.
PLAYER = Skill(1500.0, 200.0, None)
OPPONENTS = [
    Result(1400.0, 30.0, 1.0),
    Result(1550.0, 100.0, 0.0),
    Result(1700.0, 300.0, 0.0),
]

HOUR = 3600.0


def seed_one_game(own: Skill, other: Skill, outcome: float) -> tuple[float, float]:
    """The rating-update post's calc_new_rating / calc_new_deviation, parentheses fixed."""
    q = math.log(10.0) / 400.0
    g = 1.0 / math.sqrt(1.0 + 3.0 * q**2 * other.deviation**2 / math.pi**2)
    e = 1.0 / (1.0 + 10.0 ** (g * (own.rating - other.rating) / -400.0))
    d_2 = 1.0 / (q**2 * g**2 * e * (1.0 - e))
    rating = own.rating + q / (1.0 / own.deviation**2 + 1.0 / d_2) * g * (outcome - e)
    deviation = math.sqrt(1.0 / (1.0 / own.deviation**2 + 1.0 / d_2))
    return rating, deviation


# --- published reference values -------------------------------------------------------------


def test_glickman_example_one_rating_period() -> None:
    # Glickman, "The Glicko system": published 1464 / 151.4; full precision
    # 1464.1064627569112 / 151.39890244796933 (rating-vectors reference, q = ln 10 / 400).
    new = NO_MIN.rate(PLAYER, OPPONENTS)
    assert new.rating == pytest.approx(1464.1064627569112, abs=1e-9)
    assert new.deviation == pytest.approx(151.39890244796933, abs=1e-9)
    assert new.volatility is None
    assert round(new.rating) == 1464
    assert round(new.deviation, 1) == 151.4


def test_seed_variant_one_game_at_a_time() -> None:
    # rating-update seed, one game at a time, opponents unchanged (rating-vectors reference):
    # after game 1 1563.4320 / 175.2202; after game 3 1464.2190389663429 / 151.2537434317832
    # (skillratings' sticko module asserts 151.253_743_431_783_2).
    after_first = NO_MIN.rate(PLAYER, OPPONENTS[:1])
    assert after_first.rating == pytest.approx(1563.4320, abs=5e-5)
    assert after_first.deviation == pytest.approx(175.2202, abs=5e-5)
    skill: SkillLike = PLAYER
    for result in OPPONENTS:
        skill = NO_MIN.rate(skill, [result])
    assert skill.rating == pytest.approx(1464.2190389663429, abs=1e-9)
    assert skill.deviation == pytest.approx(151.2537434317832, abs=1e-9)


def test_two_fresh_players_one_game() -> None:
    # rating-vectors reference: winner 1662.2120 / 290.2305, loser 1337.7880 / 290.2305.
    fresh = Skill(1500.0, 350.0, None)
    winner = CONFIG.rate(fresh, [Result(1500.0, 350.0, 1.0)])
    loser = CONFIG.rate(fresh, [Result(1500.0, 350.0, 0.0)])
    assert winner.rating == pytest.approx(1662.2120, abs=5e-5)
    assert loser.rating == pytest.approx(1337.7880, abs=5e-5)
    assert winner.deviation == pytest.approx(290.2305, abs=5e-5)
    assert loser.deviation == pytest.approx(290.2305, abs=5e-5)


def test_defaults_are_rating_updates_constants() -> None:
    # halvnykterist/rating-update src/glicko.rs and src/rater.rs (rating-vectors reference):
    # initial 1500 / 350, minimum deviation 25, rating period 3600 s, decay constant C 3.1.
    assert CONFIG.initial_rating == 1500.0
    assert CONFIG.initial_deviation == 350.0
    assert CONFIG.min_deviation == 25.0
    assert CONFIG.period_seconds == 3600.0
    assert CONFIG.c == 3.1
    assert CONFIG.initial() == Skill(1500.0, 350.0, None)
    assert Glicko1Config.name == "glicko1"


def test_decay_from_minimum_back_to_initial_takes_about_528_days() -> None:
    # rating-vectors reference: about 528 days from RD 25 back to 350 with C 3.1 and 3600 s
    # periods. By hand: 25^2 + n * 3.1^2 >= 350^2 first holds at n = 12683 hours = 528.5 days.
    settled = Skill(1500.0, 25.0, None)
    assert CONFIG.decay(settled, 12682 * HOUR).deviation < 350.0
    assert CONFIG.decay(settled, 12683 * HOUR).deviation == 350.0
    assert 528 <= 12683 / 24 < 529


def test_one_result_is_the_seeds_one_game_formula() -> None:
    own = Skill(1620.0, 120.0, None)
    other = Skill(1480.0, 240.0, None)
    for outcome in (0.0, 0.5, 1.0):
        new = CONFIG.rate(own, [Result(other.rating, other.deviation, outcome)])
        rating, deviation = seed_one_game(own, other, outcome)
        assert new.rating == pytest.approx(rating, abs=1e-9)
        assert new.deviation == pytest.approx(deviation, abs=1e-9)


def test_expected_score_is_the_seeds_calc_expected_outcome() -> None:
    a = Skill(1700.0, 80.0, None)
    b = Skill(1550.0, 200.0, None)
    # calc_expected_outcome: g of the combined deviation, base-10 logistic on the 400 scale.
    q = math.log(10.0) / 400.0
    combined = math.sqrt(80.0**2 + 200.0**2)
    g = 1.0 / math.sqrt(1.0 + 3.0 * q**2 * combined**2 / math.pi**2)
    expected = 1.0 / (1.0 + 10.0 ** (g * 150.0 / -400.0))
    assert CONFIG.expected_score(a, b) == pytest.approx(expected, abs=1e-12)


def test_g_matches_the_seeds_table() -> None:
    # rating-update post, g(deviation) table (rounded to 2 places).
    table = {350: 0.67, 300: 0.72, 250: 0.78, 200: 0.84, 150: 0.90, 100: 0.95, 50: 0.99}
    for deviation, g in table.items():
        assert round(glicko1.g(float(deviation)), 2) == g


# --- edges ----------------------------------------------------------------------------------


def test_no_results_leave_the_skill_unchanged() -> None:
    assert CONFIG.rate(PLAYER, []) == PLAYER


def test_partial_period_changes_nothing() -> None:
    assert CONFIG.decay(PLAYER, HOUR - 1.0) == PLAYER
    assert CONFIG.decay(PLAYER, 0.0) == PLAYER
    assert CONFIG.decay(PLAYER, -10 * HOUR) == PLAYER


def test_decay_counts_whole_periods() -> None:
    new = CONFIG.decay(PLAYER, 10.5 * HOUR)
    assert new.deviation == pytest.approx(math.sqrt(200.0**2 + 10 * 3.1**2), abs=1e-9)
    assert new.rating == PLAYER.rating


def test_deviation_is_clamped_to_the_minimum_after_games() -> None:
    skill = Skill(1500.0, 26.0, None)
    new = CONFIG.rate(skill, [Result(1500.0, 30.0, 1.0)] * 30)
    assert new.deviation == 25.0


def test_a_blowout_against_a_far_weaker_player_does_not_divide_by_zero() -> None:
    # E (1 - E) underflows to 0; the rating cannot move and the deviation stays.
    new = CONFIG.rate(Skill(1e6, 100.0, None), [Result(0.0, 30.0, 1.0)])
    assert new.rating == 1e6
    assert new.deviation == pytest.approx(100.0, abs=1e-9)


def test_rating_bounds_match_glicko2s_range() -> None:
    lo, hi = CONFIG.rating_bounds
    assert lo == pytest.approx(1500.0 - 6.045 * 173.7178, abs=1e-9)
    assert hi == pytest.approx(1500.0 + 6.045 * 173.7178, abs=1e-9)


# --- properties -----------------------------------------------------------------------------

ratings = st.floats(min_value=0.0, max_value=3000.0)
deviations = st.floats(min_value=25.0, max_value=350.0)
scores = st.sampled_from([0.0, 0.5, 1.0])
skills = st.builds(Skill, ratings, deviations, st.none())
opponents = st.builds(Result, ratings, deviations, scores)


@settings(deadline=None)
@given(deviations, st.integers(min_value=0, max_value=20000))
def test_o1_decay_equals_the_seeds_loop(deviation: float, periods: int) -> None:
    looped = deviation
    for _ in range(periods):
        looped = min(math.sqrt(looped**2 + 3.1**2), 350.0)
    new = CONFIG.decay(Skill(1500.0, deviation, None), periods * HOUR)
    assert new.deviation == pytest.approx(looped, abs=1e-9)


@settings(deadline=None)
@given(ratings, ratings, deviations)
def test_equal_deviation_changes_are_mirror_images(r_a: float, r_b: float, rd: float) -> None:
    new_a = CONFIG.rate(Skill(r_a, rd, None), [Result(r_b, rd, 1.0)])
    new_b = CONFIG.rate(Skill(r_b, rd, None), [Result(r_a, rd, 0.0)])
    assert new_a.rating - r_a == pytest.approx(-(new_b.rating - r_b), abs=1e-9)
    assert new_a.deviation == pytest.approx(new_b.deviation, abs=1e-9)


@settings(deadline=None)
@given(skills, st.lists(opponents, max_size=5), st.floats(0.0, 1e9))
def test_deterministic(skill: Skill, results: list[Result], gap: float) -> None:
    assert CONFIG.rate(skill, results) == CONFIG.rate(skill, results)
    assert CONFIG.decay(skill, gap) == CONFIG.decay(skill, gap)


@settings(deadline=None)
@given(skills, st.lists(opponents, min_size=1, max_size=5))
def test_deviation_never_grows_after_a_game(skill: Skill, results: list[Result]) -> None:
    # No time passed, so no decay: every result only adds information (1/d^2 >= 0).
    assert CONFIG.rate(skill, results).deviation <= skill.deviation * (1.0 + 1e-12)


def test_a_weighted_result_uses_the_weighted_slope() -> None:
    # Glickman's one-period update by hand with g(RD_j) replaced by w * g(w * RD_j).
    w = 0.5
    g_w = w / math.sqrt(1.0 + 3.0 * Q * Q * (w * 80.0) ** 2 / math.pi**2)
    e = 1.0 / (1.0 + 10.0 ** (-g_w * (1500.0 - 1450.0) / 400.0))
    inv_d_sq = Q * Q * g_w * g_w * e * (1.0 - e)
    precision = 1.0 / 200.0**2 + inv_d_sq
    new = glicko1.rate(CONFIG, Skill(1500.0, 200.0), [Result(1450.0, 80.0, 0.0, w)])
    assert new.rating == pytest.approx(1500.0 + Q / precision * g_w * (0.0 - e))
    assert new.deviation == pytest.approx(math.sqrt(1.0 / precision))
