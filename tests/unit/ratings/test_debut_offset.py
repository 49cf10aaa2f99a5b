"""The learned debut offset (stream.ratings.population): how far a player's rating as played
moves with it, what a match says about it, and how a window moves it."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from stream.ratings.elo import EloConfig
from stream.ratings.experience import ExperienceConfig
from stream.ratings.glicko2 import SCALE
from stream.ratings.modeconfig import ModeConfig
from stream.ratings.population import (
    MAX_OFFSET_STEP,
    OFFSET_PRIOR_INFORMATION,
    SETTLED_GAMES,
    Population,
    PopulationConfig,
    PopulationStats,
    next_population,
    offset_evidence,
    offset_sensitivity,
    start,
)
from stream.ratings.population.chain import Chain
from stream.ratings.population.evidence import quantised
from stream.ratings.skill import Skill

LEARNING = PopulationConfig(window_days=1.0)
TERM = ExperienceConfig(debut_offset=-300.0, games_scale=8.0)


def test_a_mode_learns_its_offset_only_with_a_prior_and_the_term_on() -> None:
    assert start(ModeConfig("m", experience=TERM)).debut_offset == -300.0
    assert start(ModeConfig("m")).debut_offset is None  # the term is off
    assert start(ModeConfig("elo", EloConfig(), experience=TERM)).debut_offset is None


def test_rules_carry_the_learned_offset_into_the_experience_term() -> None:
    mode = ModeConfig("m", experience=TERM)
    rules = Population(261.0, 0.0, 1.0, 1.0, 14.0, -120.0).rules(mode)
    assert rules.experience.debut_offset == -120.0
    assert rules.experience.games_scale == TERM.games_scale
    assert rules.experience.offset(0) == -120.0
    # A population that does not learn it leaves the mode's own.
    assert Population(261.0, 0.0, 1.0).rules(mode).experience == TERM
    # A population saying 0 (a cache hash written while the modes file had the term off)
    # leaves the term on as the modes file now says: 0 is never learned.
    assert Population(261.0, 0.0, 1.0, 1.0, 14.0, 0.0).rules(mode).experience == TERM
    # The term switched off stays off whatever a population says.
    off = ModeConfig("m")
    assert Population(261.0, 0.0, 1.0, 1.0, 14.0, -120.0).rules(off).experience.debut_offset == 0


def _recursion(games: int, information: float, scale: float) -> float:
    """The sensitivity by its definition, one update at a time, in the normal model where every
    game adds ``information`` (in units of the prior's): ``c_k`` the share of the uncertainty
    the k-th update removes."""
    fade = [math.exp(-k / scale) for k in range(games + 1)]
    sensitivity = 1.0
    for k in range(games):
        share = information / (1.0 + (k + 1) * information)
        sensitivity = (1.0 - share) * sensitivity - (fade[k] - fade[k + 1])
    return sensitivity


@settings(deadline=None)
@given(
    st.integers(0, SETTLED_GAMES - 1),
    st.floats(1e-3, 5.0),
    st.floats(0.5, 100.0),
)
@example(games=1, information=0.4, scale=8.0)
@example(games=20, information=0.05, scale=8.0)
def test_the_closed_form_is_the_update_by_update_sensitivity(
    games: int, information: float, scale: float
) -> None:
    prior = 261.0
    deviation = prior / math.sqrt(1.0 + games * information)
    found = offset_sensitivity(games, deviation, prior, scale)
    assert found == pytest.approx(_recursion(games, information, scale), abs=1e-9)
    # What the updates absorbed is never negative: below the offset's own share.
    assert found <= math.exp(-games / scale) + 1e-12


def test_a_debut_counts_whole_and_a_settled_player_not_at_all() -> None:
    assert offset_sensitivity(0, 261.0, 261.0, 8.0) == 1.0
    # A seed at 0 games with a smaller deviation: nothing absorbed yet either.
    assert offset_sensitivity(0, 80.0, 261.0, 8.0) == 1.0
    # A deviation of 0 (Glicko-1 allows it) or one whose square underflows: finite.
    for deviation in (0.0, 1e-200):
        found = offset_sensitivity(3, deviation, 350.0, 4.0)
        assert math.isfinite(found) and found < 0.0
    assert offset_sensitivity(SETTLED_GAMES, 100.0, 261.0, 8.0) == 0.0
    # A tenth game counts less than its fade: the rating has absorbed part of the offset.
    assert offset_sensitivity(10, 120.0, 261.0, 8.0) < math.exp(-10 / 8.0)


@pytest.mark.parametrize("debutant_won", [True, False])
def test_a_debutant_beating_expectations_raises_the_offset(debutant_won: bool) -> None:
    mode = Population(261.0, 0.0, 1.0, 1.0, 14.0, -300.0).rules(ModeConfig("m", experience=TERM))
    debutant, settled = Skill(1500.0 - 300.0, 261.0, 0.06), Skill(1500.0, 60.0, 0.06)
    stats = offset_evidence(
        mode, [[debutant], [settled]], [[1.0], [0.0]], [0, 1] if debutant_won else [1, 0]
    )
    assert stats.offset_information > 0.0
    assert (stats.offset_score > 0.0) == debutant_won
    # Two settled players say nothing.
    none = offset_evidence(mode, [[settled], [settled]], [[0.0], [0.0]], [0, 1])
    assert none.offset_score == none.offset_information == 0.0


@settings(deadline=None)
@given(st.floats(-1900.0, 1900.0), st.floats(-1e6, 1e6), st.floats(1e-9, 1e6))
def test_one_window_moves_the_offset_by_at_most_its_step_never_to_zero(
    offset: float, score: float, information: float
) -> None:
    if offset == 0.0:
        offset = -1.0
    now = Population(261.0, 0.0, 1.0, 1.0, 14.0, offset)
    stats = PopulationStats(offset_score=score, offset_information=information)
    after, _ = next_population(LEARNING, now, stats, stats)
    assert after.debut_offset is not None
    assert abs(after.debut_offset - offset) <= MAX_OFFSET_STEP + 1e-9
    assert after.debut_offset != 0.0
    assert -2000.0 <= after.debut_offset <= 2000.0
    assert (after.debut_offset - offset) * score >= 0.0
    # Nothing learned where the population has none.
    plain, _ = next_population(LEARNING, Population(261.0, 0.0, 1.0), stats, stats)
    assert plain.debut_offset is None


@pytest.mark.parametrize("start_at", [-600.0, -300.0, 0.5])
def test_the_offset_converges_to_where_its_evidence_points(start_at: float) -> None:
    """Windows whose evidence is a log-likelihood peaked at -150 points (score = information
    times the distance, plus noise): the running Newton step reaches it and stays."""
    rng = random.Random(11)
    first = Population(261.0, 0.0, 1.0, 1.0, 14.0, start_at)
    chain = Chain(first, first)
    path = []
    for window in range(300):
        now = chain.current.debut_offset
        assert now is not None
        information = rng.uniform(0.5, 2.0) * 1e-4
        score = information * (-150.0 - now) + rng.gauss(0.0, math.sqrt(information))
        stats = PopulationStats(offset_score=score, offset_information=information)
        chain.fold(LEARNING, window, quantised(stats))
        path.append(chain.current.debut_offset)
    assert all(o is not None and abs(o + 150.0) < 25.0 for o in path[150:])
    assert OFFSET_PRIOR_INFORMATION > 0.0


def test_glicko2_units_are_the_public_scale() -> None:
    # The sensitivity is a ratio of deviations: the same on the public and internal scales.
    assert offset_sensitivity(5, 150.0, 261.0, 8.0) == pytest.approx(
        offset_sensitivity(5, 150.0 / SCALE, 261.0 / SCALE, 8.0)
    )
