"""Rating drift points (stream.offline.ratingdrift): the spread's published values, a point at
every step over the players active before it, and the properties every spread has."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stream.offline.ratingdrift import QUANTILES, DriftWatch, spread

DAY = 86_400.0


def test_a_spread_is_the_mean_and_the_quantiles_between_order_statistics() -> None:
    s = spread([4.0, 1.0, 3.0, 2.0])
    assert s.mean == 2.5
    # numpy.quantile([1, 2, 3, 4], [.1, .25, .5, .75, .9]) (linear): 1.3, 1.75, 2.5, 3.25, 3.7
    assert s.quantiles == pytest.approx((1.3, 1.75, 2.5, 3.25, 3.7), abs=1e-12)
    assert s.to_json() == {
        "mean": 2.5,
        "p10": s.quantiles[0],
        "p25": 1.75,
        "p50": 2.5,
        "p75": 3.25,
        "p90": s.quantiles[4],
    }
    assert spread([7.0]).quantiles == (7.0,) * len(QUANTILES)
    with pytest.raises(ValueError, match="at least one"):
        spread([])


def test_a_point_every_step_over_the_players_active_before_it() -> None:
    watch = DriftWatch("m", active_seconds=10 * DAY, step_seconds=7 * DAY, season_of=int)
    assert watch.observe("a", 0.0, 1500.0, 0) == []
    assert watch.observe("b", 3 * DAY, 1600.0, 40) == []
    # Day 8 passes the first step (day 7): a and b are both active then.
    (first,) = watch.observe("a", 8 * DAY, 1550.0, 20)
    assert (first.at, first.active, first.rating.mean) == (7 * DAY, 2, 1550.0)
    assert first.season == int(7 * DAY)
    # Day 30 passes days 14, 21 and 28: a (day 8) is active at 14 only, b at none of them.
    points = watch.observe("c", 30 * DAY, 1400.0, 0)
    assert [(p.at, p.active) for p in points] == [(14 * DAY, 1)]
    assert points[0].rating.mean == 1550.0 and points[0].rank_points.mean == 20.0
    (last,) = watch.finish()
    assert (last.at, last.active, last.rating.mean) == (30 * DAY, 1, 1400.0)
    assert DriftWatch("m", DAY, DAY).finish() == []
    with pytest.raises(ValueError, match="positive"):
        DriftWatch("m", 0.0, DAY)


ratings = st.lists(st.floats(-5000, 5000, allow_nan=False), min_size=1, max_size=60)


@given(ratings, st.floats(-1000, 1000, allow_nan=False))
def test_a_spread_is_ordered_within_its_values_and_moves_with_them(
    values: list[float], shift: float
) -> None:
    s = spread(values)
    assert min(values) - 1e-9 <= s.quantiles[0] and s.quantiles[-1] <= max(values) + 1e-9
    assert all(a <= b + 1e-9 for a, b in zip(s.quantiles, s.quantiles[1:], strict=False))
    assert min(values) - 1e-9 <= s.mean <= max(values) + 1e-9
    # The whole scale shifted: every figure shifted by as much (the drift a watch is for).
    moved = spread([v + shift for v in values])
    assert math.isclose(moved.mean, s.mean + shift, abs_tol=1e-6)
    for a, b in zip(moved.quantiles, s.quantiles, strict=True):
        assert math.isclose(a, b + shift, abs_tol=1e-6)
