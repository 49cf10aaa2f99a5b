"""What every rating algorithm behind stream/ratings/algorithm.py promises, whichever it is:
expected scores that sum to one, results that move a pairwise rating their way, and configs
that cannot rate refused. Each algorithm is drawn on the domain its own tests use
(test_elo.py, test_glicko1.py, test_glicko2.py, test_zonestats.py)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream.ratings.algorithm import PairwiseAlgorithm, RatingAlgorithm
from stream.ratings.elo import EloConfig
from stream.ratings.glicko1 import Glicko1Config
from stream.ratings.glicko2 import SCALE, Glicko2Config
from stream.ratings.skill import Result, Skill
from stream.ratings.zonestats import ZoneStatsConfig

elo_ratings = st.floats(min_value=-5000.0, max_value=10000.0)
glicko1_ratings = st.floats(min_value=0.0, max_value=3000.0)
glicko1_deviations = st.floats(min_value=25.0, max_value=350.0)
# Glicko-2 within its bounds (its ratings, deviations and volatilities are clamped to them).
glicko2_ratings = st.floats(min_value=1500.0 - 6.045 * SCALE, max_value=1500.0 + 6.045 * SCALE)
glicko2_deviations = st.floats(min_value=0.175 * SCALE, max_value=2.015 * SCALE)
glicko2_volatilities = st.floats(min_value=0.04, max_value=0.08)

# Each algorithm's players, and a win of one of them, on its domain.
ELO = (EloConfig(), st.builds(Skill, elo_ratings))
ELO_WINS = st.builds(Result, elo_ratings, st.just(0.0), st.just(1.0))
GLICKO1 = (Glicko1Config(), st.builds(Skill, glicko1_ratings, glicko1_deviations, st.none()))
GLICKO1_WINS = st.builds(Result, glicko1_ratings, glicko1_deviations, st.just(1.0))
GLICKO2 = (
    Glicko2Config(),
    st.builds(Skill, glicko2_ratings, glicko2_deviations, glicko2_volatilities),
)
GLICKO2_WINS = st.builds(Result, glicko2_ratings, glicko2_deviations, st.just(1.0))
ZONESTATS = (ZoneStatsConfig(), st.builds(Skill, st.floats(min_value=0.0, max_value=1500.0)))

EVERY = [ELO, GLICKO1, GLICKO2, ZONESTATS]
PAIRWISE = [(*ELO, ELO_WINS), (*GLICKO1, GLICKO1_WINS), (*GLICKO2, GLICKO2_WINS)]
NAMES = ["elo", "glicko1", "glicko2", "zonestats"]


@pytest.mark.parametrize(("algorithm", "skills"), EVERY, ids=NAMES)
@settings(deadline=None)
@given(data=st.data())
def test_expected_scores_sum_to_one(
    algorithm: RatingAlgorithm, skills: st.SearchStrategy[Skill], data: st.DataObject
) -> None:
    a, b = data.draw(skills), data.draw(skills)
    assert algorithm.expected_score(a, b) + algorithm.expected_score(b, a) == pytest.approx(
        1.0, abs=1e-12
    )


@pytest.mark.parametrize(("algorithm", "skills", "wins"), PAIRWISE, ids=NAMES[:3])
@settings(deadline=None)
@given(data=st.data())
def test_a_win_never_lowers_and_a_loss_never_raises(
    algorithm: PairwiseAlgorithm,
    skills: st.SearchStrategy[Skill],
    wins: st.SearchStrategy[Result],
    data: st.DataObject,
) -> None:
    skill, win = data.draw(skills), data.draw(wins)
    assert algorithm.rate(skill, [win]).rating >= skill.rating
    loss = Result(win.rating, win.deviation, 0.0)
    assert algorithm.rate(skill, [loss]).rating <= skill.rating


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(lambda: EloConfig(temperature=0.0), id="elo temperature"),
        pytest.param(lambda: EloConfig(max_gain=-1.0), id="elo max_gain"),
        pytest.param(lambda: Glicko1Config(initial_deviation=0.0), id="glicko1 initial_deviation"),
        pytest.param(lambda: Glicko1Config(min_deviation=400.0), id="glicko1 min_deviation"),
        pytest.param(lambda: Glicko1Config(period_seconds=0.0), id="glicko1 period_seconds"),
        pytest.param(lambda: Glicko1Config(c=-1.0), id="glicko1 c"),
        pytest.param(lambda: Glicko2Config(tau=0.0), id="glicko2 tau"),
        pytest.param(lambda: Glicko2Config(min_deviation=3.0), id="glicko2 min_deviation"),
        pytest.param(lambda: Glicko2Config(min_volatility=0.07), id="glicko2 min_volatility"),
        pytest.param(lambda: Glicko2Config(period_days=0.0), id="glicko2 period_days"),
        pytest.param(lambda: ZoneStatsConfig(temperature=0.0), id="zonestats temperature"),
        pytest.param(lambda: ZoneStatsConfig(game_mult=0.0), id="zonestats game_mult"),
        pytest.param(
            lambda: ZoneStatsConfig(max_game_minutes=-1.0), id="zonestats max_game_minutes"
        ),
    ],
)
def test_invalid_configs_are_refused(make: Callable[[], object]) -> None:
    with pytest.raises(ValueError):
        make()
