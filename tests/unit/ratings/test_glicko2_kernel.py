"""Glicko-2's float kernel against the objects' update: rate_one_twin is rate_twin of one
result, bit for bit, wherever its inputs can come from (any accepted configuration, a volatility
or none, moves large enough to leave the first-order step, ratings far outside the bounds);
rate_duel_twin is that for both players of a duel with their drift slopes, and duel_evidence is
the population's evidence of a duel's prediction as the objects' path computes it."""

from __future__ import annotations

import math

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from stream.ratings import glicko2_kernel
from stream.ratings.drift import STEP, slopes_between
from stream.ratings.glicko2 import Glicko2Config, expected_score
from stream.ratings.population import evidence
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


@settings(max_examples=300, deadline=None)
@given(
    config=configs,
    a=st.tuples(ratings, deviations, volatilities),
    b=st.tuples(ratings, deviations, volatilities),
    a_move=st.tuples(moves, moves),
    b_move=st.tuples(moves, moves),
    offsets=st.tuples(st.floats(-400.0, 400.0), st.just(0.0)),
    score_a=scores,
)
def test_rate_duel_twin_is_each_players_rate_twin_with_their_slopes(
    config: Glicko2Config,
    a: tuple[float, float, float | None],
    b: tuple[float, float, float | None],
    a_move: tuple[float, float],
    b_move: tuple[float, float],
    offsets: tuple[float, float],
    score_a: float,
) -> None:
    # Each as the other meets them (an experience offset's difference), and moved.
    a_met, b_met = a[0] + offsets[0], b[0] - offsets[0]
    a_moved = (a[0] + a_move[0], max(a[1] + a_move[1], 0.5))
    b_moved = (b[0] + b_move[0], max(b[1] + b_move[1], 0.5))
    a_moved_met, b_moved_met = a_met + a_move[0], b_met + b_move[0]
    rated = config.rate_duel_twin(
        STEP,
        (*a, *a_moved, a_met, a_moved_met),
        (*b, *b_moved, b_met, b_moved_met),
        score_a,
    )
    first = _objects(config, a, a_moved, (b_met, b[1]), (b_moved_met, b_moved[1]), score_a)
    second = _objects(config, b, b_moved, (a_met, a[1]), (a_moved_met, a_moved[1]), 1 - score_a)
    for mine, found in ((first, rated[:5]), (second, rated[5:])):
        rating, deviation, volatility, twin_rating, twin_deviation = mine
        slopes = slopes_between(Skill(rating, deviation), Skill(twin_rating, twin_deviation))
        assert found == (rating, deviation, volatility, *slopes)


def _evidence_of_objects(
    decisiveness: float,
    own: Skill,
    met: Result,
    actual: float,
    moved: tuple[Skill, Skill] | None,
    shares: tuple[float, float] | None,
) -> list[int]:
    """A duel's evidence as the objects' path of the population's evidence computes it: the
    published expected score, the prediction's sums and each parameter's slope."""
    sums = [0] * evidence.FIELDS
    p = expected_score(own, met)
    if not 0.0 < p < 1.0:
        return sums
    logit = math.log(p / (1.0 - p))
    sharp = 1.0 / (1.0 + math.exp(-decisiveness * logit))
    sums[evidence.DECISIVENESS] += round((actual - sharp) * logit * evidence.SCALE)
    sums[evidence.DECISIVENESS + 1] += round(sharp * (1 - sharp) * logit * logit * evidence.SCALE)
    if moved is not None:
        p_more = expected_score(*moved)
        if 0.0 < p_more < 1.0:
            evidence._add_slope(
                sums, evidence.DRIFT, p_more, logit, sharp, actual, decisiveness, STEP
            )
    if shares is not None:
        shifted = Skill(own.rating + shares[0], own.deviation)
        p_more = expected_score(shifted, Result(met.rating + shares[1], met.deviation, 0.5))
        if 0.0 < p_more < 1.0:
            evidence._add_slope(
                sums, evidence.OFFSET, p_more, logit, sharp, actual, decisiveness, 1.0
            )
    return sums


@settings(max_examples=500, deadline=None)
@example(  # a prediction rounding to certainty says nothing
    decisiveness=1.0,
    own=(-3000.0, 0.5),
    met=(6000.0, 0.5),
    actual=1.0,
    moved=None,
    shares=None,
)
@given(
    decisiveness=st.floats(0.2, 3.0),
    own=st.tuples(ratings, deviations),
    met=st.tuples(ratings, deviations),
    actual=scores,
    moved=st.one_of(st.none(), st.tuples(moves, moves, moves, moves)),
    shares=st.one_of(st.none(), st.tuples(st.floats(0.0, 1.0), st.floats(-0.2, 1.0))),
)
def test_duel_evidence_is_the_published_predictions_evidence_bit_for_bit(
    decisiveness: float,
    own: tuple[float, float],
    met: tuple[float, float],
    actual: float,
    moved: tuple[float, float, float, float] | None,
    shares: tuple[float, float] | None,
) -> None:
    moved_skills = None
    moved_floats = (*own, *met)
    if moved is not None:
        moved_floats = (
            own[0] + moved[0],
            max(own[1] + moved[1], 0.5),
            met[0] + moved[2],
            max(met[1] + moved[3], 0.5),
        )
        moved_skills = (Skill(*moved_floats[:2]), Skill(*moved_floats[2:]))
    found = glicko2_kernel.duel_evidence(
        decisiveness,
        STEP,
        float(evidence.SCALE),
        (*own, *met),
        actual,
        None if moved is None else moved_floats,
        shares,
    )
    want = _evidence_of_objects(
        decisiveness, Skill(*own), Result(*met, 0.5), actual, moved_skills, shares
    )
    assert list(found) == [
        want[evidence.DECISIVENESS],
        want[evidence.DECISIVENESS + 1],
        want[evidence.DRIFT],
        want[evidence.DRIFT + 1],
        want[evidence.OFFSET],
        want[evidence.OFFSET + 1],
    ]
    # The kernel's expected score is the published one's arithmetic.
    assert glicko2_kernel.expected(*own, *met) == expected_score(Skill(*own), Skill(*met))
