"""A mode's population (stream.ratings.population): its values, what applies them, how each
is learned from the evidence of rated matches."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream.ratings.elo import EloConfig
from stream.ratings.engine import MatchView, rate_match
from stream.ratings.glicko1 import Glicko1Config
from stream.ratings.glicko2 import SCALE, Glicko2Config
from stream.ratings.modeconfig import ModeConfig
from stream.ratings.population import (
    DEVIATION_BOUNDS,
    EMPTY,
    MAX_LOG_STEP,
    PERSISTENCE_PRIOR_PAIRS,
    Population,
    PopulationConfig,
    PopulationStats,
    lineup_evidence,
    lineup_key,
    next_population,
    prediction_evidence,
    predictions_evidence,
    size_evidence,
    start,
    update_evidence,
)
from stream.ratings.population.chain import Chain
from stream.ratings.population.evidence import quantised
from stream.ratings.probability import team_win_probability
from stream.ratings.ranges import ConfigError
from stream.ratings.skill import PlayerState, Skill
from stream.ratings.teams import TeamStrategy

T0 = 1_700_000_000.0
LEARNING = PopulationConfig(window_days=1.0)


def test_a_mode_starts_with_its_configured_values() -> None:
    mode = ModeConfig("m", population=PopulationConfig(size_edge=40.0, persistence=0.3))
    assert start(mode) == Population(2.015 * SCALE, 40.0, 0.3, 1.0, 14.0)
    assert start(ModeConfig("g1", Glicko1Config())).deviation == 350.0
    assert start(ModeConfig("elo", EloConfig())).deviation is None
    # Only Glicko-2's deviation grows with time by a drift period.
    assert start(ModeConfig("g1", Glicko1Config())).drift_period is None
    assert start(ModeConfig("elo", EloConfig())).drift_period is None


def test_the_configured_values_leave_the_mode_as_it_is() -> None:
    mode = ModeConfig("m")
    assert start(mode).rules(mode) is mode


def test_rules_carry_the_population_into_the_mode() -> None:
    mode = ModeConfig("m", teams=TeamStrategy.AUTO)
    rules = Population(104.0, 60.0, 0.2).rules(mode)
    assert isinstance(rules.algorithm, Glicko2Config)
    assert rules.algorithm.unrated_deviation == pytest.approx(104.0 / SCALE)
    assert rules.initial.deviation == pytest.approx(104.0)
    assert rules.population.size_edge == 60.0
    assert rules.team_rule is TeamStrategy.SHARED
    assert rules.teams is TeamStrategy.AUTO
    # Built once per mode: the same object every time it is asked.
    assert Population(104.0, 60.0, 0.2).rules(mode) == rules


def test_a_prior_below_the_minimum_deviation_takes_the_minimum_with_it() -> None:
    rules = Population(20.0, 0.0, 1.0).rules(ModeConfig("m"))
    assert isinstance(rules.algorithm, Glicko2Config)
    assert rules.algorithm.min_deviation == rules.algorithm.unrated_deviation


def test_the_lineup_key_is_the_set_of_players() -> None:
    assert lineup_key(["a", "b", "c"]) == lineup_key(["c", "a", "b"])
    assert lineup_key(["a", "b"]) != lineup_key(["a", "c"])
    # Stable across runs and processes (no salted hash): the live pipeline and a replay in
    # another process must compute the same key.
    assert lineup_key(["b", "a"]) == 0xF84C4D669FE0D410


def test_lineup_evidence_counts_teammate_pairs_kept_together() -> None:
    rosters = {"a": 1, "b": 1, "c": 1, "x": 2, "y": 3}
    found = lineup_evidence([["a", "b", "c"], ["x", "y", "new"]], rosters)
    # a-b, a-c, b-c kept; x-y not; the newcomer has no previous lineup.
    assert (found.same_pairs, found.pairs) == (3, 4)


@pytest.mark.parametrize("won_by_bigger", [True, False])
def test_size_evidence_points_the_edge_towards_what_happened(won_by_bigger: bool) -> None:
    mode = ModeConfig("m", teams=TeamStrategy.SHARED)
    even = Skill(1500.0, 80.0, 0.06)
    ranks = (0, 1) if won_by_bigger else (1, 0)
    found = size_evidence(mode, [[even] * 3, [even] * 2], ranks)
    assert found.edge_information > 0.0
    assert (found.edge_score > 0.0) == won_by_bigger
    assert size_evidence(mode, [[even] * 2, [even] * 2], ranks) == EMPTY


@pytest.mark.parametrize("won_by_fuller", [True, False])
def test_size_evidence_sees_a_side_missing_a_player_for_part_of_the_match(
    won_by_fuller: bool,
) -> None:
    # Three a side, one of the second there for 40% of it: evidence as for uneven sides, and
    # the predictions (the decisiveness's evidence) see the weaker side too.
    mode = ModeConfig("m", teams=TeamStrategy.SHARED, population=PopulationConfig(size_edge=100.0))
    even = Skill(1500.0, 80.0, 0.06)
    ranks = (0, 1) if won_by_fuller else (1, 0)
    played = ((1.0, 1.0, 1.0), (1.0, 0.4, 1.0))
    found = size_evidence(mode, [[even] * 3, [even] * 3], ranks, played)
    assert found.edge_information > 0.0
    assert (found.edge_score > 0.0) == won_by_fuller
    population = start(mode)
    plain = predictions_evidence(mode, population, [[even] * 3, [even] * 3], ranks)
    part = predictions_evidence(mode, population, [[even] * 3, [even] * 3], ranks, played)
    assert plain.decisiveness_information == 0.0  # even sides: a coin flip says nothing
    assert part.decisiveness_information > 0.0


def test_the_size_edge_is_learned_to_where_the_bigger_side_wins_as_often_as_predicted() -> None:
    # Sides of 3 against 2 equal players; the bigger side wins 70% of the time.
    config = PopulationConfig(window_days=1.0)
    mode = ModeConfig("m", teams=TeamStrategy.SHARED, population=config)
    even = Skill(1500.0, 60.0, 0.06)
    rng = random.Random(1)
    population, seen = start(mode), EMPTY
    for _window in range(40):
        stats = EMPTY
        for _match in range(50):
            ranks = (0, 1) if rng.random() < 0.7 else (1, 0)
            stats = stats + size_evidence(population.rules(mode), [[even] * 3, [even] * 2], ranks)
        seen = seen + stats
        population, _ = next_population(config, population, stats, seen)
    rules = population.rules(mode)
    predicted = team_win_probability(
        rules.algorithm, [even] * 3, [even] * 2, rules.team_rule, population.size_edge
    )
    assert predicted == pytest.approx(0.7, abs=0.03)


def test_persistence_counts_every_pair_seen_from_the_configured_start() -> None:
    config = PopulationConfig(window_days=1.0, persistence=1.0)
    now = Population(100.0, 0.0, 1.0)
    window = PopulationStats(same_pairs=10, pairs=400)
    after, _ = next_population(config, now, window, window)
    prior = PERSISTENCE_PRIOR_PAIRS
    assert after.persistence == pytest.approx((10 + prior * 1.0) / (400 + prior))


def one_newcomer_update(rating_moved: float, won: bool, games: int = 2) -> PopulationStats:
    """The evidence of a newcomer who has moved ``rating_moved`` from the start, then wins or
    loses against an equal opponent."""
    mode = ModeConfig("m", population=LEARNING)
    population = start(mode)
    player = PlayerState(1500.0 + rating_moved, 250.0, 0.06, 0, games, T0)
    foe = PlayerState(1500.0 + rating_moved, 60.0, 0.06, 0, 100, T0)
    match = MatchView((("p",), ("f",)), (0, 1) if won else (1, 0), T0)
    update = rate_match(mode, match, {"p": player, "f": foe})["p"]
    return update_evidence(population.rules(mode), population, update)


def test_a_newcomer_beating_expectations_in_the_direction_moved_widens_the_prior() -> None:
    assert one_newcomer_update(+200.0, won=True).prior_score > 0.0
    assert one_newcomer_update(+200.0, won=False).prior_score < 0.0
    assert one_newcomer_update(-200.0, won=False).prior_score > 0.0
    # A rating still at the start says nothing about the prior's width.
    assert one_newcomer_update(0.0, won=True).prior_score == 0.0


def test_a_settled_player_says_little_about_the_prior() -> None:
    early = one_newcomer_update(+200.0, won=True, games=1)
    late = one_newcomer_update(+200.0, won=True, games=30)
    assert 0.0 < late.prior_score < early.prior_score * 1e-3
    assert late.newcomer_updates < early.newcomer_updates


@settings(deadline=None)
@given(
    st.floats(DEVIATION_BOUNDS[0], DEVIATION_BOUNDS[1]),
    st.floats(-1e6, 1e6),
    st.floats(1e-9, 1e6),
    st.floats(0.0, 1e6),
)
def test_one_window_moves_the_prior_by_a_bounded_factor_within_the_bounds(
    deviation: float, score: float, information: float, updates: float
) -> None:
    now = Population(deviation, 0.0, 1.0)
    stats = PopulationStats(score, information, updates)
    after, _ = next_population(LEARNING, now, stats, stats)
    assert after.deviation is not None
    assert DEVIATION_BOUNDS[0] <= after.deviation <= DEVIATION_BOUNDS[1]
    assert abs(math.log(after.deviation / deviation)) <= MAX_LOG_STEP + 1e-12
    assert (after.deviation >= deviation) == (score >= 0.0) or after.deviation == deviation


@pytest.mark.parametrize("start", [80.0, 139.0, 350.0, 440.0])
def test_the_prior_converges_to_where_its_evidence_points_fast_then_stays(start: float) -> None:
    """Windows whose evidence is a log-likelihood peaked at 250 points (score = information
    times the log distance to it, plus noise): the running Newton step reaches it within a
    tenth within a hundred windows from either side, and later windows' noise moves it little,
    because each step is divided by all the information seen so far."""
    rng = random.Random(7)
    chain = Chain(Population(start, 0.0, 1.0), Population(start, 0.0, 1.0))
    path = []
    for window in range(400):
        now = chain.current.deviation
        assert now is not None
        information = rng.uniform(1.0, 10.0)
        score = information * math.log(250.0 / now) + rng.gauss(0.0, math.sqrt(information))
        chain.fold(
            LEARNING,
            window,
            quantised(PopulationStats(score, information, 150.0)),
        )
        path.append(chain.current.deviation)
    assert all(d is not None and abs(math.log(d / 250.0)) < 0.1 for d in path[100:])
    late = [d for d in path[300:] if d is not None]
    assert max(late) / min(late) < 1.05


def test_too_few_newcomer_updates_are_carried_into_the_next_window() -> None:
    now = Population(100.0, 0.0, 1.0)
    few = PopulationStats(5.0, 1.0, 10.0, edge_score=1.0, edge_information=1.0)
    after, carried = next_population(LEARNING, now, few, few)
    assert after.deviation == now.deviation
    assert carried == PopulationStats(5.0, 1.0, 10.0)
    # The size edge moves with any evidence: its step is divided by everything seen so far.
    assert after.size_edge > 0.0
    enough = PopulationStats(5.0, 1.0, 150.0)
    moved, nothing = next_population(LEARNING, now, enough, enough)
    assert moved.deviation is not None and moved.deviation > 100.0
    assert nothing == EMPTY


@pytest.mark.parametrize(("decisive", "expected"), [(1.6, 1.6), (1.0, 1.0), (0.7, 0.7)])
def test_the_decisiveness_is_learned_to_where_predictions_are_calibrated(
    decisive: float, expected: float
) -> None:
    # Predictions whose logit is 1/decisive of what the results follow.
    rng = random.Random(3)
    population, seen = Population(100.0, 0.0, 1.0), EMPTY
    for _window in range(30):
        stats = EMPTY
        for _ in range(300):
            p = rng.uniform(0.2, 0.8)
            truth = 1.0 / (1.0 + math.exp(-decisive * math.log(p / (1.0 - p))))
            actual = 1.0 if rng.random() < truth else 0.0
            stats = stats + prediction_evidence(p, actual, population.decisiveness)
        seen = seen + stats
        population, _ = next_population(LEARNING, population, stats, seen)
    assert population.decisiveness == pytest.approx(expected, abs=0.15)


def test_decisiveness_sharpens_predictions_and_changes_no_rating() -> None:
    mode = ModeConfig("m")
    sharp = Population(2.015 * SCALE, 0.0, 1.0, 1.5).rules(mode)
    assert sharp.population.decisiveness == 1.5
    assert sharp.algorithm == mode.algorithm
    match = MatchView((("a",), ("b",)), (0, 1), T0)
    assert rate_match(sharp, match, {}) == rate_match(mode, match, {})


# --- values held while the others are learned ([population] hold) ----------------------------

# A window whose evidence moves every value a learning mode has.
MOVING = PopulationStats(
    prior_score=40.0,
    prior_information=20.0,
    newcomer_updates=500.0,
    edge_score=5.0,
    edge_information=0.1,
    same_pairs=10,
    pairs=400,
    decisiveness_score=30.0,
    decisiveness_information=50.0,
    drift_score=2.0,
    drift_information=4.0,
    offset_score=0.5,
    offset_information=0.0001,
)
NAMES = ("deviation", "size_edge", "persistence", "decisiveness", "drift_period", "debut_offset")


@pytest.mark.parametrize("name", NAMES)
def test_a_held_value_keeps_its_start_while_the_others_move(name: str) -> None:
    now = Population(180.0, 100.0, 1.0, 1.0, 14.0, -300.0)
    free, _ = next_population(PopulationConfig(window_days=1.0), now, MOVING, MOVING)
    # Every value moves when nothing is held: the window above can show a hold.
    assert all(getattr(free, n) != getattr(now, n) for n in NAMES)
    held, _ = next_population(PopulationConfig(window_days=1.0, hold=(name,)), now, MOVING, MOVING)
    for other in NAMES:
        expected = getattr(now if other == name else free, other)
        assert getattr(held, other) == expected, other


def test_a_held_deviation_carries_no_evidence_to_the_next_window() -> None:
    # Too few newcomer updates: a learning deviation carries them; a held one has no use for them.
    few = PopulationStats(prior_score=3.0, prior_information=2.0, newcomer_updates=10.0)
    now = Population(180.0, 100.0, 1.0)
    _, carried = next_population(PopulationConfig(window_days=1.0), now, few, few)
    assert carried.prior_information == 2.0
    _, carried = next_population(
        PopulationConfig(window_days=1.0, hold=("deviation",)), now, few, few
    )
    assert carried == EMPTY


def test_hold_is_kept_sorted_whatever_order_it_is_given_in() -> None:
    given = PopulationConfig(hold=["decisiveness", "deviation"])  # type: ignore[arg-type]
    assert given.hold == ("decisiveness", "deviation")
    assert given == PopulationConfig(hold=("deviation", "decisiveness"))


@pytest.mark.parametrize(
    ("hold", "message"),
    [
        (["prior"], "hold must list names of"),
        ("decisiveness", "hold must list names of"),
        ([1], "hold must list names of"),
        (["decisiveness", "decisiveness"], "hold names a value twice"),
    ],
)
def test_hold_refuses_what_is_not_a_list_of_learned_values(hold: object, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        PopulationConfig(hold=hold)  # type: ignore[arg-type]
    assert info.value.key == "hold"
