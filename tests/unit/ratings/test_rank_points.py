"""Rank Points follow the INVERSUS rules (Juckett, 'Adding Online Skill Ranking to INVERSUS')."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stream.ratings.glicko2 import Glicko2Config
from stream.ratings.rank_points import RankPointsConfig, next_rank_points, to_points

CFG = RankPointsConfig()
BOUNDS = Glicko2Config().rating_bounds  # 1500 -/+ 6.045 * 173.7178


def test_bounds_map_onto_zero_and_ten_thousand() -> None:
    assert BOUNDS[0] == 1500 - 6.045 * 173.7178
    assert to_points(CFG, BOUNDS[0], BOUNDS) == 0.0
    assert to_points(CFG, BOUNDS[1], BOUNDS) == 10000.0
    assert to_points(CFG, 1500.0, BOUNDS) == pytest.approx(5000.0)
    # Below the bounds clamps to zero (an inactive, below-average player).
    assert to_points(CFG, 0.0, BOUNDS) == 0.0


def test_unrated_player_functional_rating_is_zero_points() -> None:
    # INVERSUS: an unrated player's lower 99.7% bound equals the minimum rating.
    unrated = Glicko2Config().initial()
    assert to_points(CFG, unrated.rating - 3 * unrated.deviation, BOUNDS) == 0.0


@pytest.mark.parametrize(
    ("current", "rating", "deviation", "score", "expected"),
    [
        # After a first win a new player's lower bound is ~1624 points; half way is ~812 > 500.
        pytest.param(0, 1662.31, 290.32, 1.0, 500, id="first win capped at 500"),
        # Target: lower bound 1800 - 180 = 1620, 5571.36 points; a win goes half way there.
        pytest.param(5000, 1800, 60, 1.0, 5286, id="half way towards the target"),
        # Target far below current RP (inactivity grew the deviation): a win still gives +1.
        pytest.param(6000, 1600, 200, 1.0, 6001, id="a win below target still earns one point"),
        # A loss costs at least one point, but never goes below zero.
        pytest.param(3000, 1900, 50, 0.0, 2999, id="a loss costs at least one point"),
        pytest.param(0, 1400, 300, 0.0, 0, id="a loss never goes below zero"),
        pytest.param(9000, 1500, 100, 0.0, 8500, id="a loss capped at 500"),
        # Target: lower bound 1700 - 150 = 1550, 5238.07 points; a draw moves part way there,
        # from either side, without the one-point minimum.
        pytest.param(5000, 1700, 50, 0.5, 5119, id="a draw below the target"),
        pytest.param(5500, 1700, 50, 0.5, 5369, id="a draw above the target"),
    ],
)
def test_next_rank_points(
    current: int, rating: float, deviation: float, score: float, expected: int
) -> None:
    assert next_rank_points(CFG, BOUNDS, current, rating, deviation, score) == expected


@pytest.mark.parametrize(
    ("rating", "deviation", "points"),
    [
        # (1620 - 449.876) / 2100.248 * 10000 = 5571.36.
        (1800, 60, 5571.36),
        (1700, 50, 5238.07),
    ],
)
def test_the_target_is_the_lower_bound_in_points(
    rating: float, deviation: float, points: float
) -> None:
    assert to_points(CFG, rating - 3 * deviation, BOUNDS) == pytest.approx(points, abs=0.01)


def test_win_never_steps_past_upper_confidence_bound() -> None:
    upper = to_points(CFG, 1500 + 3 * 30.4, BOUNDS)  # ~5434
    current = int(upper)  # one more point would pass it
    assert next_rank_points(CFG, BOUNDS, current, 1500, 30.4, 1.0) == current


def test_a_draw_at_the_target_stays() -> None:
    at_target = round(to_points(CFG, 1700 - 3 * 50, BOUNDS))
    assert next_rank_points(CFG, BOUNDS, at_target, 1700, 50, 0.5) == at_target


def test_upset_bonus_is_off_by_default_and_scales_with_the_gap() -> None:
    plain = next_rank_points(CFG, BOUNDS, 5000, 1600, 60, 1.0, upset=400.0)
    assert plain == next_rank_points(CFG, BOUNDS, 5000, 1600, 60, 1.0)
    bonus_cfg = RankPointsConfig(upset_bonus=250.0)
    full_gap = BOUNDS[1] - BOUNDS[0]
    with_bonus = next_rank_points(bonus_cfg, BOUNDS, 5000, 1600, 60, 1.0, upset=full_gap / 2)
    # The bonus replaces the one-point minimum a win below its target would otherwise get.
    assert plain == 5001
    assert with_bonus == 5000 + 125
    # A win over a lower-rated opponent earns no bonus.
    assert next_rank_points(bonus_cfg, BOUNDS, 5000, 1600, 60, 1.0, upset=-300.0) == plain


ratings = st.floats(min_value=BOUNDS[0], max_value=BOUNDS[1])
deviations = st.floats(min_value=30.0, max_value=350.04)
points = st.integers(min_value=0, max_value=10000)


@given(points, ratings, deviations, st.sampled_from([0.0, 0.5, 1.0]))
def test_rank_points_stay_in_range_and_never_jump_more_than_500(
    current: int, rating: float, deviation: float, score: float
) -> None:
    new = next_rank_points(CFG, BOUNDS, current, rating, deviation, score)
    assert 0 <= new <= 10000
    assert abs(new - current) <= 500


@given(points, ratings, deviations)
def test_a_win_never_loses_points_and_a_loss_never_gains(
    current: int, rating: float, deviation: float
) -> None:
    assert next_rank_points(CFG, BOUNDS, current, rating, deviation, 1.0) >= current
    assert next_rank_points(CFG, BOUNDS, current, rating, deviation, 0.0) <= current


@given(points, ratings, deviations)
def test_a_loss_always_costs_a_point_unless_at_zero(
    current: int, rating: float, deviation: float
) -> None:
    new = next_rank_points(CFG, BOUNDS, current, rating, deviation, 0.0)
    assert new < current or current == 0


@given(points, ratings, deviations)
def test_a_win_earns_a_point_unless_capped_by_the_upper_bound(
    current: int, rating: float, deviation: float
) -> None:
    new = next_rank_points(CFG, BOUNDS, current, rating, deviation, 1.0)
    upper = to_points(CFG, rating + 3 * deviation, BOUNDS)
    assert new > current or current + 1 > upper
