"""Elo in the logistic (Fermi) form of "Estimation 101": reference values and properties."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream.ratings import elo
from stream.ratings.elo import EloConfig
from stream.ratings.skill import Result, Skill

# K = 32 on the 400 scale: T = 400 / ln 10, max_gain = 32 (the defaults).
CONFIG = EloConfig()


def play(winner: float, loser: float) -> tuple[float, float]:
    """Both new ratings after ``winner`` beats ``loser``, each rated from its own side."""
    new_winner = CONFIG.rate(Skill(winner), [Result(loser, 0.0, 1.0)]).rating
    new_loser = CONFIG.rate(Skill(loser), [Result(winner, 0.0, 0.0)]).rating
    return new_winner, new_loser


# --- published reference values (rating-vectors: Elo / logistic, K = 32) ---------------------


def test_equal_players() -> None:
    # 1000 beats 1000 -> 1016 / 984.
    new_winner, new_loser = play(1000.0, 1000.0)
    assert new_winner == pytest.approx(1016.0, abs=1e-9)
    assert new_loser == pytest.approx(984.0, abs=1e-9)


def test_upset() -> None:
    # 500 beats 1500 -> 532 / 1468 (rounded).
    new_winner, new_loser = play(500.0, 1500.0)
    assert round(new_winner) == 532
    assert round(new_loser) == 1468


def test_expected_score() -> None:
    # 2251 vs 1934 -> 0.86 (rounded).
    assert round(CONFIG.expected_score(Skill(2251.0), Skill(1934.0)), 2) == 0.86


def test_the_modified_glicko_seeds_win_probability_table() -> None:
    # rating-update "modified-glicko" post, Elo table: difference 0 / 100 / 200 / 400 ->
    # 50 / 64 / 76 / 91 %. (Its 500 and 600 rows, 96 and 98 %, are not the 400-scale logistic,
    # which gives 94.7 and 96.9 %.)
    table = {0.0: 50, 100.0: 64, 200.0: 76, 400.0: 91}
    for difference, percent in table.items():
        p = CONFIG.expected_score(Skill(1500.0 + difference), Skill(1500.0))
        assert round(100 * p) == percent


def test_fermi_is_the_documents_expectancy() -> None:
    # Estimation 101: expectancy = Fermi(opponent - me, T) = 1 / (1 + exp((opponent - me) / T)).
    assert elo.fermi(0.0, 1.0) == 0.5
    assert elo.fermi(1.0, 1.0) == pytest.approx(1.0 / (1.0 + math.e), abs=1e-15)
    assert elo.fermi(-2.0, 2.0) == pytest.approx(1.0 / (1.0 + math.exp(-1.0)), abs=1e-15)
    # No OverflowError far out on either side.
    assert elo.fermi(1e6, 1.0) == 0.0
    assert elo.fermi(-1e6, 1.0) == 1.0


def test_several_opponents_move_by_the_mean() -> None:
    me = Skill(1500.0)
    results = [Result(1500.0, 0.0, 1.0), Result(1700.0, 0.0, 0.0), Result(1300.0, 0.0, 0.5)]
    # By hand: E = 0.5, 1 / (1 + 10^0.5), 1 / (1 + 10^-0.5).
    e1 = 0.5
    e2 = 1.0 / (1.0 + 10.0**0.5)
    e3 = 1.0 / (1.0 + 10.0**-0.5)
    change = 32.0 * ((1.0 - e1) + (0.0 - e2) + (0.5 - e3)) / 3
    assert CONFIG.rate(me, results).rating == pytest.approx(1500.0 + change, abs=1e-9)


def test_a_match_never_swings_more_than_max_gain() -> None:
    many_upsets = [Result(3000.0, 0.0, 1.0)] * 10
    assert CONFIG.rate(Skill(0.0), many_upsets).rating <= 32.0


def test_shape_of_an_algorithm_without_uncertainty() -> None:
    assert EloConfig.name == "elo"
    assert CONFIG.initial() == Skill(1500.0, 0.0, None)
    skill = Skill(1612.5, 0.0, None)
    assert CONFIG.decay(skill, 10 * 365 * 86400.0) == skill
    assert CONFIG.rate(skill, []) == skill
    new = CONFIG.rate(skill, [Result(1500.0, 0.0, 0.0)])
    assert new.deviation == 0.0
    assert new.volatility is None
    lo, hi = CONFIG.rating_bounds
    assert lo == pytest.approx(1500.0 - 6.045 * 400.0 / math.log(10.0), abs=1e-9)
    assert hi == pytest.approx(1500.0 + 6.045 * 400.0 / math.log(10.0), abs=1e-9)


# --- properties -----------------------------------------------------------------------------

ratings = st.floats(min_value=-5000.0, max_value=10000.0)
skills = st.builds(Skill, ratings)
scores = st.sampled_from([0.0, 0.5, 1.0])


@settings(deadline=None)
@given(ratings, ratings, scores)
def test_one_on_one_is_zero_sum(a: float, b: float, score: float) -> None:
    new_a = CONFIG.rate(Skill(a), [Result(b, 0.0, score)]).rating
    new_b = CONFIG.rate(Skill(b), [Result(a, 0.0, 1.0 - score)]).rating
    assert new_a - a == pytest.approx(-(new_b - b), abs=1e-9)


@settings(deadline=None)
@given(skills, st.lists(st.builds(Result, ratings, st.just(0.0), scores), max_size=5))
def test_deterministic(skill: Skill, results: list[Result]) -> None:
    assert CONFIG.rate(skill, results) == CONFIG.rate(skill, results)


def test_a_weighted_result_is_the_gradient_step_of_the_weighted_logistic() -> None:
    # weight w: change = max_gain * w * (s - 1 / (1 + 10^(w * (opp - me) / 400))).
    config = EloConfig()
    new = elo.rate(config, Skill(1500.0), [Result(1600.0, 0.0, 1.0, 0.5)])
    expected = 1.0 / (1.0 + 10.0 ** (0.5 * (1600.0 - 1500.0) / 400.0))
    assert new.rating == pytest.approx(1500.0 + 32.0 * 0.5 * (1.0 - expected))


def test_weight_one_is_chess_elo_bit_for_bit() -> None:
    config = EloConfig()
    plain = elo.rate(config, Skill(1000.0), [Result(1000.0, 0.0, 1.0)])
    assert elo.rate(config, Skill(1000.0), [Result(1000.0, 0.0, 1.0, 1.0)]) == plain
