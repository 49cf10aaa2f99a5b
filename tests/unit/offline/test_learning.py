"""A learned population in replay (stream.offline.learning): windows of event time, evidence
carried until it is enough, the same population for the same history, and simulated
populations that differ where the population properties differ."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest

from stream.config.modes import Modes
from stream.history import HistoryMatch
from stream.offline.learning import PopulationLearner
from stream.offline.replayer import Replayer
from stream.ratings.engine import MatchView, rate_match
from stream.ratings.modeconfig import ModeConfig
from stream.ratings.population import EMPTY, PopulationConfig, prediction_evidence, start
from stream.ratings.probability import sharpened
from stream.ratings.teams import TeamStrategy
from stream.simulation import SimulationConfig, simulate

DAY = 86_400.0
LEARNS = PopulationConfig(window_days=1.0)


def history(config: SimulationConfig) -> list[HistoryMatch]:
    return [
        HistoryMatch(
            n, m.match_id, m.mode, m.at, m.teams, m.ranks, None, frozenset(m.quitters), None
        )
        for n, m in enumerate(simulate(config), 1)
    ]


def replayed(mode: ModeConfig, matches: list[HistoryMatch]) -> Replayer:
    replayer = Replayer(Modes.single(mode), "m")
    for match in matches:
        replayer.apply(match)
    return replayer


def learner_of(replayer: Replayer) -> PopulationLearner:
    return replayer.learners["m"]


# About 120 matches a day, so a few thousand span weeks of windows.
SLOW = 120 / DAY


@pytest.fixture(scope="module")
def broad() -> list[HistoryMatch]:
    return history(
        SimulationConfig(
            matches=4000, players=1500, skill_sd=450.0, matches_per_second=SLOW, seed=5
        )
    )


@pytest.fixture(scope="module")
def narrow() -> list[HistoryMatch]:
    return history(
        SimulationConfig(
            matches=4000,
            players=1500,
            skill_sd=80.0,
            newcomer_deficit=0.0,
            matches_per_second=SLOW,
            seed=5,
        )
    )


def test_a_mode_that_does_not_learn_keeps_its_values() -> None:
    mode = ModeConfig("m")
    learner = PopulationLearner(mode)
    assert learner.at(0.0) == learner.at(1e9) == start(mode)
    assert not learner.steps


def test_a_window_without_evidence_changes_nothing() -> None:
    learner = PopulationLearner(ModeConfig("m", population=LEARNS))
    before = learner.at(0.0)
    assert learner.at(3 * DAY) == before
    assert not learner.steps
    assert learner.evidence().newcomer_updates == 0.0


def test_a_broad_population_learns_a_broad_prior_and_a_narrow_one_does_not(
    broad: list[HistoryMatch], narrow: list[HistoryMatch]
) -> None:
    mode = ModeConfig("m", population=LEARNS).algorithm
    start_points = mode.prior_deviation  # type: ignore[union-attr]
    wide = learner_of(replayed(ModeConfig("m", population=LEARNS), broad))
    tight = learner_of(replayed(ModeConfig("m", population=LEARNS), narrow))
    assert len(wide.steps) > 10
    assert wide.current.deviation is not None and tight.current.deviation is not None
    assert wide.current.deviation > 1.3 * tight.current.deviation
    assert wide.current.deviation != start_points


def test_the_same_history_learns_the_same_population(broad: list[HistoryMatch]) -> None:
    mode = ModeConfig("m", population=LEARNS)
    first, second = replayed(mode, broad[:1500]), replayed(mode, broad[:1500])
    assert learner_of(first).steps == learner_of(second).steps
    assert first.tables == second.tables


def test_every_update_is_rate_match_with_the_population_in_force(
    broad: list[HistoryMatch],
) -> None:
    """What live rating must reproduce: each match rated by the engine's entry point with the
    population of its window, from the states before it."""
    mode = ModeConfig("m", population=LEARNS)
    replayer = Replayer(Modes.single(mode), "m")
    checked = 0
    for match in broad[:2500]:
        before = dict(replayer.tables.get("m", {}))
        population = replayer.population_of(match)
        updates = replayer.apply(match)
        view = MatchView(match.teams, match.ranks, match.at)
        assert updates == rate_match(mode, view, before, population)
        checked += population != start(mode)
    assert checked > 100  # the population moved during the check


def lineup_history(party_rate: float) -> Iterator[HistoryMatch]:
    config = SimulationConfig(
        matches=1500,
        players=300,
        team_size=4,
        party_rate=party_rate,
        matches_per_second=SLOW,
        seed=5,
    )
    return iter(history(config))


@pytest.mark.parametrize(("party_rate", "rule"), [(0.0, "shared"), (1.0, "composite_opponent")])
def test_auto_follows_whether_teams_stay_together(party_rate: float, rule: str) -> None:
    mode = ModeConfig("m", teams=TeamStrategy.AUTO, population=LEARNS)
    replayer = replayed(mode, list(lineup_history(party_rate)))
    learned = learner_of(replayer).current
    assert learned.rules(mode).team_rule.value == rule
    assert (learned.persistence < 0.3) == (party_rate == 0.0)


def test_uneven_sides_teach_the_size_edge() -> None:
    config = SimulationConfig(
        matches=2500,
        players=800,
        size_range=(2, 6),
        uneven_rate=0.5,
        extra_player_edge=100.0,
        pool_size=24,
        matches_per_second=SLOW,
        seed=5,
    )
    mode = ModeConfig("m", teams=TeamStrategy.SHARED, population=LEARNS)
    learned = learner_of(replayed(mode, history(config))).current
    assert learned.size_edge > 30.0
    flat = dataclasses.replace(config, extra_player_edge=0.0)
    assert abs(learner_of(replayed(mode, history(flat))).current.size_edge) < learned.size_edge / 2


def test_a_duels_evidence_is_its_predictions_evidence(broad: list[HistoryMatch]) -> None:
    """The learner sums a duel's decisiveness evidence in place: the same as adding up
    prediction_evidence of every prediction evaluate makes, window by window."""
    mode = ModeConfig("m", population=LEARNS)
    replayer = Replayer(Modes.single(mode), "m")
    expected = EMPTY
    for match in broad[:600]:
        population = replayer.population_of(match)
        for p, actual in replayer.predict(match):
            raw = sharpened(p, 1.0 / population.decisiveness)
            expected = expected + prediction_evidence(raw, actual, population.decisiveness)
        replayer.apply(match)
    found = learner_of(replayer).evidence()
    assert found.decisiveness_score == pytest.approx(expected.decisiveness_score, rel=1e-9)
    assert found.decisiveness_information == pytest.approx(
        expected.decisiveness_information, rel=1e-9
    )
