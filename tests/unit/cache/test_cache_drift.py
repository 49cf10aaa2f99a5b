"""The cache's drift figures from a board read at evenly spaced ranks (stream/cache/drift.py):
the quantiles exactly the offline watch's, the mean within a fraction of a point of the exact
one on boards of every shape, and a board small enough read whole."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream.cache.drift import (
    EXACT_UP_TO,
    GRID,
    _ranks_needed,
    grid_ranks,
    season_started,
    spread_of,
)
from stream.config.modes import parse_modes
from stream.offline.ratingdrift import spread


def read_at_ranks(ordered: list[float]) -> dict[int, float]:
    """What the feed reads of a board holding ``ordered`` (sorted): the ranks it needs."""
    return {rank: ordered[rank] for rank in _ranks_needed(len(ordered))}


@pytest.mark.parametrize(
    "shape",
    [
        lambda rng: rng.gauss(1500, 300),  # ratings
        lambda rng: 1000 + rng.expovariate(1 / 200),  # a long top tail
        lambda rng: rng.choice([1100.0, 1900.0]) + rng.gauss(0, 40),  # two clumps
        lambda rng: float(rng.randrange(0, 10_000, 25)),  # Rank Points: coarse, many ties
        lambda rng: 1000 + 100 * rng.paretovariate(2.5),  # a heavy top tail
    ],
    ids=["normal", "skewed", "bimodal", "rank points", "heavy tail"],
)
def test_a_large_board_read_at_ranks_gives_exact_quantiles_and_a_mean_within_half_a_point(
    shape: object,
) -> None:
    rng = random.Random(7)
    ordered = sorted(shape(rng) for _ in range(200_000))  # type: ignore[operator]
    read = read_at_ranks(ordered)
    assert len(read) < 3 * GRID  # a few thousand members, not 200,000
    estimate, exact = spread_of(len(ordered), read), spread(ordered)
    assert estimate.quantiles == pytest.approx(exact.quantiles, abs=1e-9)
    assert abs(estimate.mean - exact.mean) < 0.5


@settings(max_examples=50)
@given(st.lists(st.floats(-3000, 3000, allow_nan=False), min_size=1, max_size=300))
def test_a_board_small_enough_is_read_whole_and_is_the_offline_spread(values: list[float]) -> None:
    ordered = sorted(values)
    read = read_at_ranks(ordered)
    assert len(read) == len(ordered) <= EXACT_UP_TO
    assert spread_of(len(ordered), read) == spread(ordered)


def test_the_grid_is_the_middles_of_equal_shares_of_the_board() -> None:
    ranks = grid_ranks(2_001_000)
    assert len(ranks) == GRID
    assert (ranks[0], ranks[1], ranks[-1]) == (499.5, 1499.5, 2_000_499.5)
    assert grid_ranks(3, k=5) == pytest.approx([0.0, 0.4, 1.0, 1.6, 2.0])


def test_a_seasons_start_is_the_schedules_and_none_where_it_has_none() -> None:
    monthly = parse_modes(
        {
            "default": {"seasons": {"starts": ["2026-01-01"], "period_days": 30}},
            "modes": {"casual": {}},
        }
    )
    assert season_started(monthly, "ranked", 1) == 1_767_225_600.0
    assert season_started(monthly, "ranked", 3) == 1_767_225_600.0 + 60 * 86_400
    assert season_started(monthly, "ranked", None) is None
    assert season_started(monthly, "ranked", 0) is None  # no season 0: before the first
    fixed = parse_modes({"default": {"seasons": {"starts": ["2026-01-01"]}}})
    assert season_started(fixed, "ranked", 2) is None  # a schedule shortened since
    rejecting = parse_modes({"default": {"unlisted": "reject"}, "modes": {"m": {}}})
    assert season_started(rejecting, "ranked", 1) is None
    assert season_started(parse_modes({}), "ranked", 1) is None
