"""The learned drift (stream.ratings.drift): each player's sensitivities to it are the
derivatives of their rating and squared deviation, the drift period follows a history's own
drift, and a mode that does not learn carries nothing."""

from __future__ import annotations

import dataclasses
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream.config.modes import Modes
from stream.history import HistoryMatch
from stream.offline.replayer import Replayer
from stream.ratings.drift import STEP, drifted
from stream.ratings.engine import MatchView, rate_match
from stream.ratings.glicko2 import Glicko2Config
from stream.ratings.modeconfig import ModeConfig
from stream.ratings.population import (
    DRIFT_PERIOD_BOUNDS,
    Population,
    PopulationConfig,
    PopulationStats,
    next_population,
    start,
)
from stream.ratings.population.evidence import FIELDS, add_match_evidence
from stream.ratings.skill import PlayerState, Skill
from stream.ratings.teams import TeamStrategy
from stream.simulation import SimulationConfig, simulate

DAY = 86_400.0
T0 = 1_780_000_000.0
LEARNS = PopulationConfig(window_days=1.0)


def learning(teams: TeamStrategy = TeamStrategy.COMPOSITE_OPPONENT) -> ModeConfig:
    return ModeConfig("m", teams=teams, population=LEARNS)


def state(rating: float, deviation: float, days_ago: float, games: int = 30) -> PlayerState:
    return PlayerState(rating, deviation, 0.06, 0, games, T0 - days_ago * DAY)


def test_a_mode_that_does_not_learn_carries_no_slopes() -> None:
    mode = ModeConfig("m")
    states = {"a": state(1600.0, 80.0, 10.0), "b": state(1500.0, 90.0, 20.0)}
    updates = rate_match(mode, MatchView((("a",), ("b",)), (0, 1), T0), states)
    assert all(u.state.drift_slope == u.state.variance_slope == 0.0 for u in updates.values())


@pytest.mark.parametrize(
    "teams",
    [
        (("a",), ("b",)),
        (("a", "b"), ("c", "d")),
        (("a", "b", "c"), ("d",)),
    ],
)
@pytest.mark.parametrize("strategy", [TeamStrategy.COMPOSITE_OPPONENT, TeamStrategy.SHARED])
def test_a_slope_is_the_change_of_the_rating_with_a_faster_drift(
    teams: tuple[tuple[str, ...], ...], strategy: TeamStrategy
) -> None:
    """With no slopes carried yet, a match's only dependence on the drift is the inactivity
    it grows every deviation by: the slopes after it equal the change of the update when the
    same match is rated with the period shortened by a factor exp(h)."""
    mode = learning(strategy)
    days = {"a": 9.0, "b": 30.0, "c": 3.0, "d": 60.0}
    states = {
        pid: state(1500.0 + 40.0 * i, 70.0 + 10.0 * i, days[pid])
        for i, pid in enumerate(sorted(days))
    }
    match = MatchView(teams, (0, 1), T0)
    updates = rate_match(mode, match, states)
    h = 1e-4
    algorithm = mode.algorithm
    assert isinstance(algorithm, Glicko2Config)
    period = algorithm.drift_period
    faster = Population(start(mode).deviation, 0.0, 1.0, 1.0, period * math.exp(-h)).rules(mode)
    again = rate_match(faster, match, states)
    for pid, update in updates.items():
        rating = (again[pid].state.rating - update.state.rating) / h
        square = (again[pid].state.deviation ** 2 - update.state.deviation**2) / h
        assert update.state.drift_slope == pytest.approx(rating, rel=2e-3, abs=1e-3)
        assert update.state.variance_slope == pytest.approx(square, rel=2e-3, abs=1e-2)
        assert update.state.variance_slope > 0.0  # more drift: less certain after the match


def test_a_newcomer_and_a_deviation_at_its_largest_do_not_move() -> None:
    largest = 139.0
    skill = Skill(1500.0, 100.0, 0.06)
    assert drifted(None, skill, largest) is skill
    held = Skill(1500.0, largest, 0.06)
    assert drifted(state(1500.0, 120.0, 30.0), held, largest) is held
    moved = drifted(dataclasses.replace(state(1500.0, 90.0, 5.0), drift_slope=20.0), skill, 1e3)
    assert moved.rating == pytest.approx(1500.0 + STEP * 20.0)
    assert moved.deviation > skill.deviation  # the inactivity's growth grows with the drift


@settings(max_examples=200, deadline=None)
@given(
    score=st.floats(-1e6, 1e6, allow_nan=False),
    information=st.floats(0.0, 1e6, allow_nan=False),
    period=st.floats(DRIFT_PERIOD_BOUNDS[0], DRIFT_PERIOD_BOUNDS[1]),
)
def test_the_period_moves_against_the_evidence_and_stays_in_bounds(
    score: float, information: float, period: float
) -> None:
    current = Population(200.0, 0.0, 1.0, 1.0, period)
    stats = PopulationStats(drift_score=score, drift_information=information)
    found, _ = next_population(LEARNS, current, stats, stats)
    assert found.drift_period is not None
    low, high = DRIFT_PERIOD_BOUNDS
    assert low <= found.drift_period <= high
    if information > 0.0 and score > 0.0:
        assert found.drift_period <= period  # the results ask for more drift: a shorter period
    if information > 0.0 and score < 0.0:
        assert found.drift_period >= period
    if information == 0.0:
        assert found.drift_period == period


def test_an_algorithm_without_a_drift_period_learns_none() -> None:
    from stream.ratings.elo import EloConfig

    assert start(ModeConfig("e", EloConfig(), population=LEARNS)).drift_period is None
    assert not ModeConfig("e", EloConfig(), population=LEARNS).tracks_drift
    assert ModeConfig("g", Glicko2Config(), population=LEARNS).tracks_drift
    assert not ModeConfig("g", Glicko2Config()).tracks_drift


def _learned_period(drift_sd: float) -> float:
    config = SimulationConfig(
        matches=5000,
        players=200,
        drift_sd=drift_sd,
        newcomer_deficit=0.0,
        matches_per_second=40 / DAY,
        seed=5,
    )
    replayer = Replayer(Modes.single(learning()), "m")
    for n, m in enumerate(simulate(config), 1):
        replayer.apply(
            HistoryMatch(
                n, m.match_id, m.mode, m.at, m.teams, m.ranks, None, frozenset(m.quitters), None
            )
        )
    period = replayer.learners["m"].current.drift_period
    assert period is not None
    return period


def test_the_period_follows_how_fast_a_history_drifts() -> None:
    """Skills that never move (the simulator's random walk off) lengthen the 14-day period;
    skills that walk 40 points a match shorten it."""
    assert _learned_period(0.0) > 14.0 > _learned_period(40.0)


def test_replay_reads_a_duels_prediction_from_its_update_as_live_computes_it() -> None:
    """Replay passes ``rated_here`` so a duel's prediction (and its drift slope) is read from
    rate_match's update; the live match side, which has no update, computes it from the
    states: the two give the same evidence, to the last unit, with the experience term on
    and a population that learns."""
    config = SimulationConfig(matches=600, players=60, matches_per_second=20 / DAY, seed=9)
    replayer = Replayer(Modes(), "default")
    checked = 0
    for n, m in enumerate(simulate(config), 1):
        match = HistoryMatch(
            n, m.match_id, m.mode, m.at, m.teams, m.ranks, None, frozenset(m.quitters), None
        )
        population = replayer.population_of(match)
        rules = population.rules(replayer.mode_of(match)[1])
        states = dict(replayer.tables.get("default", {}))
        updates = rate_match(rules, match, states)
        sums = {}
        for rated_here in (False, True):
            found = [0] * FIELDS
            add_match_evidence(
                found,
                rules,
                population,
                match.teams,
                match.ranks,
                match.at,
                states,
                updates,
                {},
                as_played=True,
                rated_here=rated_here,
            )
            sums[rated_here] = found
        assert sums[True] == sums[False]
        checked += sums[True][9] != 0  # a drift term was there to compare
        replayer.apply(match)
    assert rules.tracks_drift and rules.experience.active
    assert checked > 100
