"""Parties (stream/ratings/parties.py and their use in the engine, the evidence and the
learned population): who is partied, a partied player played at the party edge in every
comparison, the edge learned from the mode's own matches, and nothing changed without one."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream.config.modes import parse_modes
from stream.ratings.engine import MatchView, rate_match, rate_player
from stream.ratings.explain import Explanation, describe, explain
from stream.ratings.modeconfig import ModeConfig
from stream.ratings.parties import partied, party_offsets
from stream.ratings.population import (
    EMPTY,
    Population,
    PopulationConfig,
    PopulationStats,
    next_population,
    start,
)
from stream.ratings.population.evidence import NAMES, match_evidence, played_skills
from stream.ratings.probability import team_win_probability
from stream.ratings.skill import PlayerState

TEAMS = (("a", "b", "c"), ("d", "e", "f"))
STATES = {
    pid: PlayerState(1500.0 + 10 * i, 120.0, 0.06, games=30, last_played=0.0)
    for i, pid in enumerate("abcdef")
}
PARTY = (("a", "b"),)


def mode(
    strategy: str = "composite_opponent", edge: float = 60.0, **population: object
) -> ModeConfig:
    table = {
        "algorithm": "glicko2",
        "teams": strategy,
        "population": {"party_edge": edge, **population},
    }
    return parse_modes({"modes": {"m": table}}).get("m")


# --- who is partied ------------------------------------------------------------------------


def test_a_party_of_one_is_no_party() -> None:
    assert partied(None) == frozenset()
    assert partied(()) == frozenset()
    assert partied((("a",), ("d",))) == frozenset()
    assert partied((("a", "b"), ("d",), ("e", "f"))) == {"a", "b", "e", "f"}


def test_offsets_are_the_edge_for_members_and_none_when_nothing_moves() -> None:
    assert party_offsets(TEAMS, frozenset({"a", "b"}), 40.0) == [[40.0, 40.0, 0.0], [0.0] * 3]
    assert party_offsets(TEAMS, frozenset(), 40.0) is None
    assert party_offsets(TEAMS, frozenset({"a", "b"}), 0.0) is None


# --- the engine ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "strategy", ["composite_opponent", "composite_team", "shared", "individual"]
)
def test_without_a_party_or_at_an_edge_of_0_the_match_rates_bit_for_bit_as_before(
    strategy: str,
) -> None:
    m = mode(strategy)
    plain = rate_match(m, MatchView(TEAMS, (0, 1), 100.0), STATES)
    solos = rate_match(m, MatchView(TEAMS, (0, 1), 100.0, parties=(("a",), ("d",))), STATES)
    at_zero = rate_match(mode(strategy, 0.0), MatchView(TEAMS, (0, 1), 100.0, None, PARTY), STATES)
    for pid in plain:
        assert plain[pid].state == solos[pid].state == at_zero[pid].state
        assert plain[pid].party is solos[pid].party is at_zero[pid].party is None


@pytest.mark.parametrize(
    "strategy", ["composite_opponent", "composite_team", "shared", "individual"]
)
def test_a_party_that_wins_gains_less_and_its_beaten_opponents_lose_less(strategy: str) -> None:
    m = mode(strategy)
    solo = rate_match(m, MatchView(TEAMS, (0, 1), 100.0), STATES)
    party = rate_match(m, MatchView(TEAMS, (0, 1), 100.0, parties=PARTY), STATES)
    # The side with a duo was expected to win more often: its win says less about the duo
    # and its opponents, and about a solo teammate where the strategy compares sides (under
    # composite_opponent and individual a teammate's rating never enters an update).
    for pid in "ab":
        assert STATES[pid].rating < party[pid].state.rating < solo[pid].state.rating
    if strategy in ("composite_team", "shared"):
        assert party["c"].state.rating < solo["c"].state.rating
    else:
        assert party["c"].state.rating == solo["c"].state.rating
    for pid in "def":
        assert solo[pid].state.rating < party[pid].state.rating < STATES[pid].rating
    # A loss of the party costs more than a loss of the same players alone.
    lost_solo = rate_match(m, MatchView(TEAMS, (1, 0), 100.0), STATES)
    lost_party = rate_match(m, MatchView(TEAMS, (1, 0), 100.0, parties=PARTY), STATES)
    assert lost_party["a"].state.rating < lost_solo["a"].state.rating < STATES["a"].rating


def test_each_player_is_rated_from_the_same_sides_alone_or_with_the_others() -> None:
    m = mode()
    view = MatchView(TEAMS, (0, 1), 100.0, parties=PARTY)
    together = rate_match(m, view, STATES)
    for pid in "abcdef":
        assert rate_player(m, pid, STATES[pid], view, STATES) == together[pid]
    # The expected scores see the party: the duo's side was favoured, the other not.
    assert (
        together["a"].expected_score
        > rate_match(m, replace(view, parties=None), STATES)["a"].expected_score
    )
    assert together["a"].party == (60.0, True) and together["c"].party == (60.0, False)


def test_a_party_is_as_good_as_its_edge_in_ratings() -> None:
    # The duo's side played at 60 points above its ratings: its update equals that of the
    # same side rated 60 points higher without a party (the players' own ratings aside).
    m = mode("individual")
    view = MatchView(TEAMS, (0, 1), 100.0, parties=(("a", "b", "c"),))
    partied_update = rate_match(m, view, STATES)["d"]
    lifted = {
        pid: replace(s, rating=s.rating + 60.0) if pid in "abc" else s for pid, s in STATES.items()
    }
    plain_update = rate_match(m, replace(view, parties=None), lifted)["d"]
    assert partied_update.state.rating == pytest.approx(plain_update.state.rating, abs=1e-9)


def test_a_forced_loss_ignores_nothing_of_the_parties_it_was_rated_with() -> None:
    # A quitter of a partied side takes their loss against the same sides as their team.
    m = mode()
    view = MatchView(TEAMS, (1, 0), 100.0, parties=PARTY)
    forced = rate_player(m, "a", STATES["a"], view, STATES, forced_score=0.0)
    plain = rate_player(m, "a", STATES["a"], replace(view, parties=None), STATES, forced_score=0.0)
    assert forced.state.rating < plain.state.rating


@settings(max_examples=150, deadline=None)
@given(
    edge=st.floats(1.0, 400.0),
    ranks=st.sampled_from([(0, 1), (1, 0), (0, 0)]),
    members=st.sets(st.sampled_from("abc"), min_size=2, max_size=3),
)
def test_a_party_never_moves_ratings_the_wrong_way_and_keeps_them_finite(
    edge: float, ranks: tuple[int, int], members: set[str]
) -> None:
    m = mode(edge=edge)
    view = MatchView(TEAMS, ranks, 100.0, parties=(tuple(sorted(members)),))
    updates = rate_match(m, view, STATES)
    solo = rate_match(m, replace(view, parties=None), STATES)
    for pid, update in updates.items():
        moved = update.state.rating - STATES[pid].rating
        assert abs(moved) < 1000.0
        won = ranks[0] < ranks[1] if pid in "abc" else ranks[1] < ranks[0]
        if ranks != (0, 0):
            assert moved > 0.0 if won else moved < 0.0
        # Against the same result, the partied side's players are moved down, the other up.
        if pid in members:
            assert update.state.rating < solo[pid].state.rating
        elif pid in "abc":  # composite_opponent: a teammate's party is not in their update
            assert update.state.rating == solo[pid].state.rating
        else:
            assert update.state.rating > solo[pid].state.rating


def test_a_party_change_is_explained() -> None:
    m = mode()
    view = MatchView(TEAMS, (0, 1), 100.0, parties=PARTY)
    updates = rate_match(m, view, STATES)
    member = explain(m, STATES["a"], updates["a"], 100.0)
    alone = explain(m, STATES["d"], updates["d"], 100.0)
    assert member.party == (60.0, True) and alone.party == (60.0, False)
    assert member.to_json()["party"] == {"edge": 60.0, "member": True}
    assert Explanation.from_json(member.to_json()) == member
    words = " ".join(
        describe(member, player_id="a", match_id="m", outcome="win", before=None, after=(1.0, 1.0))
    )
    assert "taken to play 60 points above their ratings (the mode's party edge)" in words
    assert "they queued in one" in words
    solo = explain(m, STATES["a"], rate_match(m, replace(view, parties=None), STATES)["a"], 100.0)
    assert solo.party is None and "party" not in solo.to_json()


@pytest.mark.parametrize(
    "bad", [{"edge": 1.0}, {"edge": "x", "member": True}, {"edge": 1.0, "member": 1}, 5]
)
def test_an_explanation_read_back_refuses_a_malformed_party(bad: object) -> None:
    with pytest.raises(ValueError, match="party"):
        Explanation.from_json({"score": 1.0, "expected": 0.5, "step": 10.0, "party": bad})


# --- the learned edge ------------------------------------------------------------------------


def test_predictions_and_the_evidence_see_the_edge_on_every_partied_player() -> None:
    m = mode(window_days=1.0)
    rules = start(m).rules(m)
    members = partied(PARTY)
    skills = played_skills(rules, STATES, TEAMS, 100.0, members)
    plain = played_skills(rules, STATES, TEAMS, 100.0)
    assert skills[0][0].rating == pytest.approx(plain[0][0].rating + 60.0)
    assert skills[0][2] == plain[0][2] and skills[1] == plain[1]
    algorithm, strategy = rules.algorithm, rules.team_rule
    assert team_win_probability(algorithm, skills[0], skills[1], strategy) > team_win_probability(
        algorithm, plain[0], plain[1], strategy
    )


def evidence(m: ModeConfig, ranks: tuple[int, int], parties: object) -> PopulationStats:
    population = start(m)
    rules = population.rules(m)
    found = match_evidence(
        rules,
        population,
        TEAMS,
        ranks,
        100.0,
        STATES,
        {},
        {},
        as_played=True,
        parties=parties,  # type: ignore[arg-type]
    )
    return found.stats()


def test_a_match_that_names_a_party_says_which_way_the_edge_should_go() -> None:
    m = mode(edge=0.0, window_days=1.0)
    won = evidence(m, (0, 1), PARTY)
    lost = evidence(m, (1, 0), PARTY)
    assert won.party_information > 0.0 and lost.party_information > 0.0
    assert won.party_score > 0.0 > lost.party_score
    # Learned at 0 too, and nothing without a party (or with a party of one).
    assert evidence(m, (0, 1), None).party_information == 0.0
    assert evidence(m, (0, 1), (("a",),)).party_score == 0.0
    # Everything else a match says is the same without parties at an edge of 0.
    plain = evidence(m, (0, 1), None)
    for name in NAMES:
        if not name.startswith("party"):
            assert getattr(plain, name) == getattr(won, name), name


def test_the_edge_steps_towards_the_evidence_within_its_range_and_holds_when_held() -> None:
    config = PopulationConfig(window_days=1.0)
    current = Population(300.0, 0.0, 0.5)
    stats = PopulationStats(party_score=2.0, party_information=0.01)
    moved, _ = next_population(config, current, stats, stats)
    # A Newton step over all the information seen so far and the +-100 point prior.
    assert moved.party_edge == pytest.approx(2.0 / (0.01 + 1e-4))
    big = PopulationStats(party_score=1e6, party_information=1e-6)
    assert next_population(config, current, big, big)[0].party_edge == 1000.0
    held = replace(config, hold=("party_edge",))
    assert next_population(held, current, stats, stats)[0].party_edge == 0.0
    assert next_population(config, current, EMPTY, EMPTY)[0].party_edge == 0.0


def test_the_population_in_force_rates_with_its_party_edge() -> None:
    m = mode(edge=0.0, window_days=1.0)
    learned = replace(start(m), party_edge=80.0)
    rules = learned.rules(m)
    assert rules.population.party_edge == 80.0
    view = MatchView(TEAMS, (0, 1), 100.0, parties=PARTY)
    assert rate_player(m, "a", STATES["a"], view, STATES, population=learned).party == (80.0, True)
    assert rate_player(m, "a", STATES["a"], view, STATES).party is None


def test_a_modes_file_sets_holds_and_refuses_the_party_edge() -> None:
    assert mode(edge=25.0).population.party_edge == 25.0
    held = parse_modes({"default": {"population": {"hold": ["party_edge"]}}}).get("m")
    assert held.population.hold == ("party_edge",)
    with pytest.raises(Exception, match="party_edge"):
        mode(edge=5000.0)
