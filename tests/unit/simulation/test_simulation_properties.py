"""Invariants of every simulated history, for any knobs (hypothesis)."""

from __future__ import annotations

import itertools
from collections import defaultdict

from hypothesis import given, settings
from hypothesis import strategies as st

from stream.simulation import Matchmaker, SimulatedMatch, SimulationConfig, simulate


@st.composite
def configs(draw: st.DrawFn) -> SimulationConfig:
    sizes = tuple(draw(st.lists(st.integers(1, 3), min_size=2, max_size=4)))
    need = sum(sizes)
    players = draw(st.integers(need, need * 6))
    return SimulationConfig(
        seed=draw(st.integers(0, 2**32)),
        matches=draw(st.integers(0, 60)),
        players=players,
        initial_players=draw(st.none() | st.integers(need, players)),
        team_sizes=sizes,
        matchmaker=draw(st.sampled_from(Matchmaker)),
        matchmaking_noise=draw(st.sampled_from([0.0, 150.0])),
        pool_size=draw(st.integers(need, need + 8)),
        party_rate=draw(st.sampled_from([0.0, 0.5, 1.0])),
        break_probability=draw(st.sampled_from([0.0, 0.3, 1.0])),
        match_seconds=draw(st.sampled_from([1.0, 600.0, 5000.0])),
        matches_per_second=draw(st.sampled_from([0.01, 1.0])),
        quit_probability=draw(st.sampled_from([0.0, 0.2])),
        draw_probability=draw(st.sampled_from([0.0, 0.3])),
        drift_sd=draw(st.sampled_from([0.0, 30.0])),
        party_probability=draw(st.sampled_from([0.0, 0.5, 1.0])),
    )


@settings(max_examples=60, deadline=None)
@given(configs())
def test_every_match_is_well_formed(config: SimulationConfig) -> None:
    matches = list(simulate(config))
    assert len(matches) == config.matches
    for match in matches:
        players = [p for team in match.teams for p in team]
        assert len(set(players)) == len(players)  # nobody in two teams
        assert sorted(len(team) for team in match.teams) == sorted(config.sizes)
        assert len(match.ranks) == len(match.teams)
        assert min(match.ranks) == 0
        assert set(match.true_skills) == set(players)
        assert match.seconds > 0
        partied = [p for party in match.parties for p in party]
        assert len(set(partied)) == len(partied)  # nobody in two parties
        for party in match.parties:
            # A party of two or more, within one side.
            assert len(party) >= 2
            assert sum(set(party) <= set(team) for team in match.teams) == 1
        if config.party_probability == 0.0:
            assert match.parties == ()


@settings(max_examples=60, deadline=None)
@given(configs())
def test_times_increase_and_a_players_matches_never_overlap(config: SimulationConfig) -> None:
    matches = list(simulate(config))
    assert all(a.at < b.at for a, b in itertools.pairwise(matches))
    by_player: defaultdict[str, list[SimulatedMatch]] = defaultdict(list)
    for match in matches:
        for team in match.teams:
            for player in team:
                by_player[player].append(match)
    for played in by_player.values():
        for before, after in itertools.pairwise(played):
            # In whole milliseconds, as the simulator keeps time: a float subtraction rounds.
            start_ms = round(after.at * 1000) - round(after.seconds * 1000)
            assert round(before.at * 1000) <= start_ms


@settings(max_examples=30, deadline=None)
@given(configs())
def test_a_seed_gives_one_history(config: SimulationConfig) -> None:
    assert list(simulate(config)) == list(simulate(config))
