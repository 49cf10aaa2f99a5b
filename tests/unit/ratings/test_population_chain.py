"""The learned population's chain and its integer evidence (stream.ratings.population.chain,
stream.ratings.population.evidence): the same chain whatever order the parts are added in,
windows two back, empty windows changing nothing."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream.ratings.engine import MatchView, rate_match
from stream.ratings.modeconfig import ModeConfig
from stream.ratings.population import (
    MIN_EVIDENCE,
    Population,
    PopulationConfig,
    PopulationStats,
    next_population,
    start,
)
from stream.ratings.population.chain import LAG, Chain
from stream.ratings.population.evidence import (
    FIELDS,
    NONE,
    SCALE,
    Evidence,
    add_match_evidence,
    match_evidence,
    quantised,
)
from stream.ratings.skill import PlayerState
from stream.ratings.teams import TeamStrategy

T0 = 1_780_000_000.0
MODE = ModeConfig("m", teams=TeamStrategy.AUTO, population=PopulationConfig(window_days=1.0))

finite = st.floats(-1e3, 1e3, allow_nan=False)
parts = st.lists(
    st.builds(
        PopulationStats,
        finite,
        st.floats(0.0, 1e3),
        st.floats(0.0, 1.0),
        finite,
        st.floats(0.0, 1e3),
        st.integers(0, 50),
        st.integers(0, 50),
        finite,
        st.floats(0.0, 1e3),
        finite,
        st.floats(0.0, 1e3),
    ),
    min_size=1,
    max_size=30,
)


@settings(max_examples=200, deadline=None)
@given(found=parts, seed=st.integers(0, 2**16))
def test_quantised_parts_add_up_the_same_in_any_order(
    found: list[PopulationStats], seed: int
) -> None:
    """What lets partitions report in any order: the integer sums are equal, and so is the
    population folded from them (float sums of the same parts may differ in the last bits)."""
    shuffled = list(found)
    random.Random(seed).shuffle(shuffled)
    one, other = NONE, NONE
    for a, b in zip(found, shuffled, strict=True):
        one, other = one + quantised(a), other + quantised(b)
    assert one == other
    first, second = Chain.of(MODE), Chain.of(MODE)
    first.fold(MODE.population, 10, one)
    second.fold(MODE.population, 10, other)
    assert first == second


@given(found=parts)
def test_a_part_quantised_again_is_the_same_integers(found: list[PopulationStats]) -> None:
    for stats in found:
        units = quantised(stats)
        assert quantised(units.stats()) == units
        assert Evidence.decode(units.encode()) == units


@pytest.mark.parametrize(
    "data",
    [
        [1, 2, 3],
        [1, 2, 3, 4, 5, 6, 7, 8, 9.5],
        [True, 0, 0, 0, 0, 0, 0, 0, 0],
        [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12],
        [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14],
        [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16],
    ],
)
def test_evidence_that_is_not_fifteen_integers_is_refused(data: list[object]) -> None:
    with pytest.raises(ValueError, match="15 integers"):
        Evidence.decode(data)  # type: ignore[arg-type]


def test_evidence_without_a_party_is_written_as_before_parties_and_with_one_whole() -> None:
    # A mode whose matches name no party writes the 13 integers a worker before parties read.
    plain = list(range(1, 14))
    assert Evidence.decode(plain).encode() == plain
    assert Evidence.decode(plain).unit("party_score") == 0
    partied = [*plain, -7, 9]
    found = Evidence.decode(partied)
    assert found.encode() == partied
    assert (found.unit("party_score"), found.unit("party_information")) == (-7, 9)
    assert (found + Evidence.decode(plain)).encode() == [*(2 * n for n in plain), -7, 9]


def test_evidence_written_before_the_drift_was_learned_reads_with_no_drift_evidence() -> None:
    old = [1, 2, 3, 4, 5, 6, 7, 8, 9]
    found = Evidence.decode(old)
    assert found.encode() == [*old, 0, 0, 0, 0]
    assert len(found.sums) == 15
    assert found.unit("drift_score") == found.unit("drift_information") == 0


def test_evidence_written_before_the_offset_was_learned_reads_with_no_offset_evidence() -> None:
    old = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]
    found = Evidence.decode(old)
    assert found.encode() == [*old, 0, 0]
    assert found.unit("drift_score") == 10
    assert found.unit("offset_score") == found.unit("offset_information") == 0


def test_a_window_is_in_force_two_windows_after_its_evidence() -> None:
    chain = Chain.of(MODE)
    initial = chain.current
    # Decisive predictions: the decisiveness moves with one window's evidence.
    evidence = quantised(PopulationStats(decisiveness_score=50.0, decisiveness_information=80.0))
    chain.fold(MODE.population, 100, evidence)
    assert chain.current != initial
    assert chain.at(100 + LAG - 1) == initial
    assert chain.at(100 + LAG) == chain.at(100 + LAG + 5) == chain.current
    with pytest.raises(ValueError, match="folded after"):
        chain.fold(MODE.population, 100, evidence)


def test_folding_only_the_windows_with_evidence_gives_the_same_chain() -> None:
    """A window without evidence changes nothing, carried prior evidence included."""
    little = quantised(
        PopulationStats(prior_score=3.0, prior_information=9.0, newcomer_updates=5.0)
    )
    enough = quantised(
        PopulationStats(
            prior_score=10.0, prior_information=30.0, newcomer_updates=MIN_EVIDENCE + 50.0
        )
    )
    dense, sparse = Chain.of(MODE), Chain.of(MODE)
    for window in range(10, 20):
        found = little if window == 11 else enough if window == 17 else NONE
        dense.fold(MODE.population, window, found)
        if found:
            sparse.fold(MODE.population, window, found)
    assert dense.current == sparse.current and dense.steps == sparse.steps
    assert dense.carried == sparse.carried == PopulationStats()  # used at window 17


def test_the_chain_folds_what_next_population_makes_of_each_window() -> None:
    config = MODE.population
    evidence = quantised(
        PopulationStats(2.0, 4.0, 150.0, 1.0, 2.0, 3, 10, 5.0, 40.0)
    )  # fmt: skip
    chain = Chain.of(MODE)
    chain.fold(config, 7, evidence)
    stats = evidence.stats()
    expected, carried = next_population(config, start(MODE), stats, stats)
    assert chain.current == expected and chain.carried == carried
    assert chain.steps[-1].window == 7 + LAG


def test_keeping_the_last_steps_answers_their_windows_as_before() -> None:
    chain = Chain.of(MODE)
    moves = quantised(PopulationStats(decisiveness_score=30.0, decisiveness_information=50.0))
    for window in range(10):
        chain.fold(MODE.population, window, moves)
    assert len(chain.steps) == 10
    wanted = {w: chain.at(w) for w in range(6, 15)}
    chain.keep_last(7)
    assert len(chain.steps) == 7 and chain.steps[0].window == 3 + LAG
    assert {w: chain.at(w) for w in range(6, 15)} == wanted


def player(rating: float, games: int, drift_slope: float = 0.0) -> PlayerState:
    return PlayerState(rating, 150.0, 0.06, 0, games, T0 - 3 * 86400.0, drift_slope, 900.0)


@pytest.mark.parametrize(
    "teams", [(("a",), ("b",)), (("a", "b"), ("c",)), (("a", "b"), ("c", "d"))]
)
@pytest.mark.parametrize("as_played", [True, False])
def test_a_matchs_evidence_is_its_parts_added_in_place(
    teams: tuple[tuple[str, ...], ...], as_played: bool
) -> None:
    """The live match side's total (match_evidence) and replay's sums added in place
    (add_match_evidence) are the same integers; a duel of settled players adds only its
    prediction, newcomers their updates too."""
    states = {
        "a": player(1600.0, 2, 12.0),
        "b": player(1500.0, 40, -8.0),
        "c": player(1450.0, 0),
    }
    population = Population(200.0, 50.0, 0.5, 1.1, 10.0)
    rules = population.rules(MODE)
    match = MatchView(teams, (0, 1), T0)
    updates = rate_match(rules, match, states)
    lineups = {"a": 7, "b": 7, "c": 9}
    total = match_evidence(
        rules, population, teams, (0, 1), T0, states, updates, lineups, as_played=as_played
    )
    sums = [5] * FIELDS
    add_match_evidence(
        sums, rules, population, teams, (0, 1), T0, states, updates, lineups, as_played=as_played
    )
    assert [s - 5 for s in sums] == list(total.sums)
    assert total.unit("newcomer_updates") > 0  # a and c are newcomers
    assert (total.unit("decisiveness_information") > 0) == as_played
    # Every participant has a slope or a growing deviation: a prediction says something of the
    # drift.
    assert (total.unit("drift_information") > 0) == as_played
    if as_played and len(teams[0]) != len(teams[1]):
        assert total.unit("edge_information") > 0
    if len(teams[0]) > 1:
        assert total.unit("pairs") > 0  # a and b kept their line-up


def test_a_duel_of_settled_players_says_nothing_about_the_prior() -> None:
    states = {"a": player(1600.0, 50), "b": player(1500.0, 60)}
    population = start(MODE)
    match = MatchView((("a",), ("b",)), (0, 1), T0)
    updates = rate_match(MODE, match, states)
    found = match_evidence(
        MODE, population, match.teams, match.ranks, T0, states, updates, {}, as_played=True
    )
    assert found.unit("prior_information") == found.unit("newcomer_updates") == 0
    assert found.unit("decisiveness_information") > 0
    assert abs(found.unit("decisiveness_score")) < SCALE
