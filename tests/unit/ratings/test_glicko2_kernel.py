"""Glicko-2's float kernel against the objects' update: rate_one_twin is rate_twin of one
result, bit for bit, wherever its inputs can come from (any accepted configuration, a volatility
or none, moves large enough to leave the first-order step, ratings far outside the bounds)."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from stream.ratings import glicko2_kernel
from stream.ratings.glicko2 import Glicko2Config
from stream.ratings.skill import Result, Skill

ratings = st.floats(-3000.0, 6000.0, allow_nan=False)
deviations = st.floats(0.5, 900.0, allow_nan=False)
volatilities = st.one_of(st.none(), st.floats(0.001, 1.0, allow_nan=False))
scores = st.sampled_from([0.0, 0.5, 1.0])
# Moves along the drift: mostly small (the derivative's step), sometimes large enough that the
# twin's volatility is searched again.
moves = st.one_of(st.floats(-1.0, 1.0), st.floats(-400.0, 400.0), st.just(0.0))
configs = st.builds(
    Glicko2Config,
    tau=st.floats(0.01, 10.0),
    unrated_volatility=st.just(0.06),
    epsilon=st.sampled_from([1e-6, 1e-9, 1e-12]),
)


def _objects(
    config: Glicko2Config,
    own: tuple[float, float, float | None],
    moved: tuple[float, float],
    opponent: tuple[float, float],
    moved_opponent: tuple[float, float],
    score: float,
) -> tuple[float, float, float | None, float, float]:
    """What rate_twin gives for the same inputs as objects."""
    skill = Skill(*own)
    first, twin = config.rate_twin(
        skill,
        [Result(*opponent, score)],
        Skill(*moved, own[2]),
        [Result(*moved_opponent, score)],
    )
    return first.rating, first.deviation, first.volatility, twin.rating, twin.deviation


@settings(max_examples=500, deadline=None)
@example(  # the implicit function flat at the root (tau 10): the twin's volatility searched
    config=Glicko2Config(tau=10.0),
    own=(1500.0, 30.0, 0.05),
    move=(0.0, 0.0),
    opponent=(1500.0, 350.0),
    opponent_move=(0.0, 0.0),
    score=1.0,
)
@example(  # an opponent past the bounds: every expected score rounds to 1, the least information
    config=Glicko2Config(),
    own=(-3000.0, 30.0, None),
    move=(0.5, 1.0),
    opponent=(6000.0, 0.5),
    opponent_move=(0.5, 0.0),
    score=0.0,
)
@given(
    config=configs,
    own=st.tuples(ratings, deviations, volatilities),
    move=st.tuples(moves, moves),
    opponent=st.tuples(ratings, deviations),
    opponent_move=st.tuples(moves, moves),
    score=scores,
)
def test_rate_one_twin_is_rate_twin_of_one_result_bit_for_bit(
    config: Glicko2Config,
    own: tuple[float, float, float | None],
    move: tuple[float, float],
    opponent: tuple[float, float],
    opponent_move: tuple[float, float],
    score: float,
) -> None:
    moved = (own[0] + move[0], max(own[1] + move[1], 0.5))
    moved_opponent = (opponent[0] + opponent_move[0], max(opponent[1] + opponent_move[1], 0.5))
    floats = glicko2_kernel.rate_one_twin(
        config.kernel_params, *own, *moved, *opponent, *moved_opponent, score
    )
    assert floats == _objects(config, own, moved, opponent, moved_opponent, score)
    # The method on the configuration (the compiled build when there is one) gives the same.
    assert config.rate_one_twin(*own, *moved, *opponent, *moved_opponent, score) == floats


def test_the_parameters_are_the_configurations_in_the_kernels_order() -> None:
    config = Glicko2Config(tau=0.7, epsilon=1e-9, min_rating=-5.0, max_volatility=0.09)
    assert config.kernel_params == (0.7, 1e-9, 0.06, -5.0, 6.045, 0.175, 2.015, 0.04, 0.09)
    # Derived, never compared or printed: two configurations equal in their fields are equal.
    assert config == Glicko2Config(tau=0.7, epsilon=1e-9, min_rating=-5.0, max_volatility=0.09)
    assert "kernel_params" not in repr(config)


def test_glickmans_example_volatility() -> None:
    # Glickman, "Example of the Glicko-2 system": sigma' = 0.05999 (as printed, to five
    # places) from these step-4 values.
    sigma = glicko2_kernel.new_volatility(0.06, 1.1513**2, 1.7785, (-0.4834) ** 2, 0.5, 1e-6)
    assert sigma == pytest.approx(0.05999, abs=1e-5)
