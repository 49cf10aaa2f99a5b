"""What a player state may hold, per algorithm (stream.ratings.ranges.Limits): the values
published by each algorithm, states held onto them, and the one-line wording of a breach."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stream.ratings.algorithm import ALGORITHMS
from stream.ratings.elo import EloConfig
from stream.ratings.glicko1 import Glicko1Config
from stream.ratings.glicko2 import Glicko2Config
from stream.ratings.ranges import MAX_ABS_RATING, Limits
from stream.ratings.zonestats import ZoneStatsConfig


def test_each_algorithm_publishes_its_limits() -> None:
    glicko2 = Glicko2Config().limits
    # Glicko-2's rating bounds in public points, 0.175 x 173.7178 and the volatility range.
    assert glicko2.rating == Glicko2Config().rating_bounds
    assert glicko2.min_deviation == pytest.approx(30.4006, abs=1e-4)
    assert glicko2.volatility == (0.04, 0.08)
    assert Glicko1Config().limits == Limits((-MAX_ABS_RATING, MAX_ABS_RATING), 25.0, None)
    assert EloConfig().limits == ZoneStatsConfig().limits == Limits()
    assert all(cls().limits.rating[0] < cls().limits.rating[1] for cls in ALGORITHMS.values())


def test_a_state_is_held_onto_the_nearest_allowed_point() -> None:
    limits = Limits((0.0, 3000.0), 30.0, (0.04, 0.08))
    assert limits.held(-5.0, 10.0, 0.5) == (0.0, 30.0, 0.08)
    assert limits.held(1500.0, 200.0, 0.06) == (1500.0, 200.0, 0.06)
    assert limits.held(1500.0, 200.0, None) == (1500.0, 200.0, None)
    # An algorithm without a volatility leaves one given as it is (the engine ignores it).
    assert Limits().held(1e7, -1.0, 0.3) == (MAX_ABS_RATING, 0.0, 0.3)


def test_a_breach_is_said_in_one_line_naming_the_value() -> None:
    limits = Limits((0.0, 3000.0), 30.0, (0.04, 0.08))
    where = "mode 'ranked'"
    assert limits.breach(3500.0, None, None, where) == (
        "rating 3500 is outside mode 'ranked''s bounds, 0 to 3000"
    )
    assert limits.breach(1500.0, 20.0, None, where) == (
        "deviation 20 is below mode 'ranked''s smallest, 30"
    )
    assert limits.breach(1500.0, 50.0, 0.1, where) == (
        "volatility 0.1 is outside mode 'ranked''s bounds, 0.04 to 0.08"
    )
    assert limits.breach(1500.0, 50.0, 0.05, where) is None


finite = st.floats(-1e7, 1e7)


@given(finite, finite, st.none() | st.floats(0.0, 1.0))
def test_what_is_held_lies_within_and_holding_again_changes_nothing(
    rating: float, deviation: float, volatility: float | None
) -> None:
    limits = Glicko2Config().limits
    held = limits.held(rating, deviation, volatility)
    assert limits.breach(*held, "mode 'm'") is None
    assert limits.held(*held) == held
    if limits.breach(rating, deviation, volatility, "mode 'm'") is None:
        assert held == (rating, deviation, volatility)
