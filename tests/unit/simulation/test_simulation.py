"""The match simulator: determinism, model properties, and writer round trips."""

from __future__ import annotations

import argparse
import hashlib
import io
import itertools
import math
import statistics
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson
import pytest

from stream.cli.simulate import config_from_args, register
from stream.events import decode_match_finished
from stream.history import read_history
from stream.simulation import (
    Matchmaker,
    SimulatedMatch,
    SimulationConfig,
    Simulator,
    match_finished_event,
    simulate,
    write_csv,
    write_jsonl,
)
from stream.simulation.core import DEFAULT_START


def run(**changes: Any) -> list[SimulatedMatch]:
    return list(simulate(replace(SimulationConfig(matches=500, players=100), **changes)))


def test_same_seed_same_history_other_seed_different() -> None:
    first = run(seed=3, team_size=2, draw_probability=0.1, quit_probability=0.05, drift_sd=5)
    again = run(seed=3, team_size=2, draw_probability=0.1, quit_probability=0.05, drift_sd=5)
    other = run(seed=4, team_size=2, draw_probability=0.1, quit_probability=0.05, drift_sd=5)
    assert first == again
    assert first != other


def test_defaults_are_1v1_without_stats() -> None:
    matches = list(simulate(SimulationConfig(matches=200)))
    assert len(matches) == 200
    for match in matches:
        assert len(match.teams) == 2
        assert all(len(team) == 1 for team in match.teams)
        assert match.teams[0] != match.teams[1]
        assert match.ranks in ((0, 1), (1, 0))  # no draws by default
        assert match.stats is None
        assert match.quitters == frozenset()
        assert match.mode == "1v1"
        assert set(match.true_skills) == {match.teams[0][0], match.teams[1][0]}
    assert matches[0].match_id == "sim0-1"
    assert len({m.match_id for m in matches}) == 200


def test_times_increase_in_whole_milliseconds_from_start() -> None:
    # Short matches: a player is in one match at a time, so 100 players cannot keep up 0.5
    # matches a second of the default 15-minute matches (the run would wait for them).
    matches = run(matches_per_second=0.5, match_seconds=10)
    times = [m.at for m in matches]
    assert times[0] > DEFAULT_START
    assert all(a < b for a, b in itertools.pairwise(times))
    assert all(round(t * 1000) / 1000 == t for t in times)
    mean_gap = (times[-1] - DEFAULT_START) / len(times)
    assert 1.6 < mean_gap < 2.4  # 0.5 matches per second


def test_team_and_ffa_shapes_and_stats() -> None:
    for team_size, teams, mode in ((2, 2, "2v2"), (1, 8, "ffa8"), (2, 4, "4x2")):
        matches = run(team_size=team_size, teams=teams)
        for match in matches:
            assert match.mode == mode
            assert len(match.teams) == teams
            assert all(len(team) == team_size for team in match.teams)
            players = [p for team in match.teams for p in team]
            assert len(set(players)) == len(players)
            assert sorted(match.ranks) == list(range(teams))  # a permutation without draws
            assert match.stats is not None
            assert set(match.stats) == set(players)
            for stats in match.stats.values():
                assert stats.score >= 0
                assert 0 < stats.seconds <= 900 * 1.3 + 1


def test_named_mode_and_forced_stats() -> None:
    match = run(mode="ranked", stats=True)[0]
    assert match.mode == "ranked"
    assert match.stats is not None


def test_draws() -> None:
    matches = run(matches=2000, draw_probability=0.3)
    draws = sum(1 for m in matches if m.ranks == (0, 0))
    assert 0.25 < draws / len(matches) < 0.35
    ffa = run(teams=4, draw_probability=0.5)
    assert any(len(set(m.ranks)) < 4 for m in ffa)
    for match in ffa:
        assert min(match.ranks) == 0


def test_quitters_finish_behind_teams_without_quitters() -> None:
    matches = run(team_size=2, quit_probability=0.2)
    with_quitters = [m for m in matches if m.quitters]
    assert with_quitters
    for match in with_quitters:
        assert match.stats is not None
        quitting = [any(p in match.quitters for p in team) for team in match.teams]
        if all(quitting):
            continue
        worst_clean = max(r for r, q in zip(match.ranks, quitting, strict=True) if not q)
        best_quitting = min(r for r, q in zip(match.ranks, quitting, strict=True) if q)
        assert worst_clean < best_quitting
        for player in match.quitters:
            assert match.stats[player].seconds < max(s.seconds for s in match.stats.values())


def test_outcomes_follow_the_logistic_curve() -> None:
    matches = run(matches=20_000, players=2000, matchmaking_noise=300)
    # Bucket by the true skill gap and compare the win rate with 1 / (1 + 10^(-gap/400)).
    buckets: dict[int, list[float]] = {}
    for match in matches:
        a, b = match.teams[0][0], match.teams[1][0]
        gap = match.true_skills[a] - match.true_skills[b]
        buckets.setdefault(round(gap / 100), []).append(1.0 if match.ranks == (0, 1) else 0.0)
    checked = 0
    for bucket, wins in buckets.items():
        if len(wins) < 500:
            continue
        expected = 1 / (1 + 10 ** (-bucket * 100 / 400))
        assert abs(statistics.fmean(wins) - expected) < 0.05
        checked += 1
    assert checked >= 3


def test_matchmaking_pairs_similar_players() -> None:
    # The oracle isolates the pairing step from the errors of the matchmaker's own rating, and
    # short matches keep most of the pool out of a match.
    def mean_gap(noise: float, pool: int) -> float:
        matches = run(
            matches=3000,
            matchmaking_noise=noise,
            pool_size=pool,
            matchmaker=Matchmaker.ORACLE,
            match_seconds=60,
        )
        return statistics.fmean(
            abs(m.true_skills[m.teams[0][0]] - m.true_skills[m.teams[1][0]]) for m in matches
        )

    assert mean_gap(0, 32) < mean_gap(0, 2) / 3  # 2 = random pairing
    assert mean_gap(0, 32) < mean_gap(300, 32)


def test_true_skills_are_normal_and_drift() -> None:
    simulator = Simulator(SimulationConfig(matches=4000, players=3000, initial_players=3000))
    before = dict(simulator.true_skills)
    assert before == {}  # nobody has joined before the run
    list(simulator)
    skills = list(simulator.true_skills.values())
    assert len(skills) == 3000
    assert abs(statistics.fmean(skills) - 1500) < 20
    assert abs(statistics.stdev(skills) - 300) < 20

    # Newcomers' skills also move as they learn: switched off to see the drift alone.
    still = Simulator(
        SimulationConfig(matches=300, players=50, seed=1, drift_sd=0, newcomer_deficit=0)
    )
    moving = Simulator(
        SimulationConfig(matches=300, players=50, seed=1, drift_sd=20, newcomer_deficit=0)
    )
    last_still = {p: s for m in still for p, s in m.true_skills.items()}
    last_moving = {p: s for m in moving for p, s in m.true_skills.items()}
    # Without drift a skill never changes; with it, the last match's skill is not the final one.
    assert last_still == {p: still.true_skills[p] for p in last_still}
    assert last_moving != {p: moving.true_skills[p] for p in last_moving}


def test_population_grows_over_the_run() -> None:
    simulator = Simulator(SimulationConfig(matches=1000, players=500, initial_players=50))
    seen_by_half: set[str] = set()
    for number, match in enumerate(simulator):
        if number == 0:
            assert len(simulator.true_skills) == 50
        if number < 500:
            seen_by_half.update(match.true_skills)
    assert len(simulator.true_skills) == 500
    assert max(seen_by_half) < "p000300"  # later joiners cannot have played yet


def test_breaks_create_long_gaps() -> None:
    def longest_gap_days(break_probability: float) -> float:
        matches = run(
            matches=3000,
            matches_per_second=0.002,  # about 17 days
            break_probability=break_probability,
            break_days=5,
        )
        last: dict[str, float] = {}
        longest = 0.0
        for match in matches:
            for player in match.true_skills:
                if player in last:
                    longest = max(longest, match.at - last[player])
                last[player] = match.at
        return longest / 86400

    assert longest_gap_days(0.0) < 3
    assert longest_gap_days(0.02) > 6


def test_everyone_on_a_break_is_called_back() -> None:
    matches = run(matches=300, players=4, break_probability=1.0, break_days=30)
    assert len(matches) == 300  # the simulator never stalls


def test_simulator_runs_once() -> None:
    simulator = Simulator(SimulationConfig(matches=3))
    list(simulator)
    with pytest.raises(RuntimeError, match="runs once"):
        iter(simulator)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"teams": 1}, "teams must be between 2 and 64, got 1"),
        ({"team_size": 0}, "team_size must be between 1 and 256, got 0"),
        (
            {"players": 3, "team_size": 2},
            "players must be at least the players of one match (4), got 3",
        ),
        ({"initial_players": 1}, "initial_players must be between 2 and players (1000), got 1"),
        ({"draw_probability": 1.5}, "draw_probability must be between 0 and 1, got 1.5"),
        ({"matches_per_second": 0}, "matches_per_second must be > 0, got 0"),
        ({"skill_sd": math.nan}, "skill_sd must be >= 0, got nan"),
        ({"pool_size": 3, "teams": 4}, "pool_size must be at least 4, got 3"),
        ({"matches": -1}, "matches must be between 0 and 1,000,000,000, got -1"),
        (
            {"players": 10**8},
            "players must be at most 10,000,000 (each takes about 350 bytes of memory), got"
            " 100000000",
        ),
        ({"mode": ""}, "mode must not be empty"),
        ({"team_sizes": (2,)}, "team_sizes must be 2 to 64 sizes of 1 to 256, got (2,)"),
        ({"team_sizes": [2, 0]}, "team_sizes must be 2 to 64 sizes of 1 to 256, got (2, 0)"),
        ({"carry": -0.1}, "carry must be between 0 and 1, got -0.1"),
        ({"learning_matches": 0}, "learning_matches must be > 0, got 0"),
        ({"matchmaker": "magic"}, "matchmaker must be one of elo, oracle, got 'magic'"),
        ({"party_probability": 1.5}, "party_probability must be between 0 and 1, got 1.5"),
        ({"party_probability": -0.1}, "party_probability must be between 0 and 1, got -0.1"),
        ({"party_probability": math.nan}, "party_probability must be between 0 and 1, got nan"),
        ({"party_edge": math.inf}, "party_edge must be between -1000 and 1000, got inf"),
        ({"party_edge": math.nan}, "party_edge must be between -1000 and 1000, got nan"),
        ({"party_edge": -1000.5}, "party_edge must be between -1000 and 1000, got -1000.5"),
    ],
)
def test_config_validation(changes: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError) as caught:
        SimulationConfig(**changes)  # type: ignore[arg-type]
    assert str(caught.value) == message


def test_a_party_edge_at_the_bounds_is_accepted() -> None:
    # A coordination that costs points is a valid control, as is a party of no edge at all.
    for edge in (-1000.0, 0.0, 1000.0):
        assert SimulationConfig(party_edge=edge).party_edge == edge


def test_the_command_sets_the_party_knobs() -> None:
    # --party-rate was taken (the matchmaker's parties): the coordinated ones have their own.
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    args = parser.parse_args(["simulate", "--team-party-rate", "0.4", "--party-edge", "-30"])
    config = config_from_args(args)
    assert (config.party_probability, config.party_edge) == (0.4, -30.0)
    assert config.party_rate == SimulationConfig().party_rate
    defaults = config_from_args(parser.parse_args(["simulate"]))
    assert (defaults.party_probability, defaults.party_edge) == (0.0, 100.0)


# --- parties -----------------------------------------------------------------------------------


def assert_parties_well_formed(match: SimulatedMatch) -> None:
    """Each party within one side, of at least two, sorted; nobody in two parties."""
    members = [p for party in match.parties for p in party]
    assert len(set(members)) == len(members)
    sides_used = []
    for party in match.parties:
        assert len(party) >= 2
        assert list(party) == sorted(party)
        sides = [t for t, team in enumerate(match.teams) if set(party) <= set(team)]
        assert len(sides) == 1, (party, match.teams)
        sides_used += sides
    assert len(set(sides_used)) == len(sides_used)  # at most one party a side
    assert [party[0] for party in match.parties] == sorted(party[0] for party in match.parties)


def test_parties_only_on_sides_of_two_or_more() -> None:
    for changes in ({"team_size": 1}, {"team_size": 1, "teams": 8}):
        assert not any(m.parties for m in run(party_probability=1.0, **changes))
    formats: list[dict[str, Any]] = [
        {"team_size": 2},
        {"team_size": 4},
        {"team_sizes": (1, 3)},  # the single player's side never holds a party
        {"teams": 4, "team_size": 2},
    ]
    for changes in formats:
        matches = run(party_probability=1.0, **changes)
        for match in matches:
            assert_parties_well_formed(match)
            # At a rate of 1 every side of two or more holds exactly one party.
            assert len(match.parties) == sum(len(team) >= 2 for team in match.teams), changes


def test_party_sizes_span_two_to_the_side_and_the_rate_is_per_side() -> None:
    matches = run(matches=2000, team_size=4, party_probability=0.5)
    sizes = Counter(len(party) for m in matches for party in m.parties)
    assert set(sizes) == {2, 3, 4}
    # Uniform in 2..4: a third each (about 670 of 2,000 parties).
    assert all(0.28 < count / sizes.total() < 0.39 for count in sizes.values()), sizes
    # One draw per side: about half of the 4,000 sides hold a party.
    assert 0.45 < sizes.total() / (2 * len(matches)) < 0.55


def jsonl_lines(config: SimulationConfig) -> str:
    out = io.StringIO()
    write_jsonl(simulate(config), out)
    return out.getvalue()


# Histories written before parties existed (Python 3.11, random's documented algorithms):
# without parties a seed must still write them byte for byte, so the knob draws nothing at 0.
PINNED = [
    (
        SimulationConfig(
            seed=11,
            matches=400,
            players=120,
            team_size=4,
            part_time_probability=0.2,
            quit_probability=0.05,
            draw_probability=0.1,
        ),
        "0202f6afce31e975533b8d57a33edde0ee3c10ebad8f76e5f8adec15f278ff3c",
    ),
    (
        SimulationConfig(
            seed=5, matches=400, players=150, size_range=(1, 5), uneven_rate=0.3, pool_size=24
        ),
        "b9598754709ffeca081845b52eca191bbd9dc7fe15585baf3d098ebc99bfb761",
    ),
]


@pytest.mark.parametrize(("config", "digest"), PINNED)
def test_without_parties_a_seed_writes_the_history_it_always_did(
    config: SimulationConfig, digest: str
) -> None:
    lines = jsonl_lines(config)
    assert hashlib.sha256(lines.encode()).hexdigest() == digest
    # The edge alone changes nothing while no party is drawn ...
    assert jsonl_lines(replace(config, party_edge=-700.0)) == lines
    # ... and a party rate does (so the comparison above can fail).
    with_parties = jsonl_lines(replace(config, party_probability=0.3))
    assert with_parties != lines
    assert '"parties":' in with_parties
    assert '"parties":' not in lines


# --- writers -----------------------------------------------------------------------------------


def test_csv_round_trip(tmp_path: Path) -> None:
    matches = list(simulate(SimulationConfig(matches=1000, players=200, draw_probability=0.2)))
    path = tmp_path / "sim.csv"
    with path.open("w", newline="") as out:
        assert write_csv(matches, out) == 1000
    assert path.read_text().splitlines()[0] == "played_at,player_a,player_b,score_a"
    assert path.read_text().splitlines()[1].split(",")[0].endswith("Z")
    read = list(read_history(path))
    assert len(read) == 1000
    for row, (original, back) in enumerate(zip(matches, read, strict=True), start=2):
        assert back.row == row
        assert back.match_id == f"row-{row}"
        assert back.mode is None
        assert back.at == original.at  # exactly: times are whole milliseconds
        assert back.teams == original.teams
        assert back.ranks == original.ranks


def test_jsonl_round_trip_with_stats_and_quitters(tmp_path: Path) -> None:
    config = SimulationConfig(matches=300, players=100, team_size=3, quit_probability=0.05)
    matches = list(simulate(config))
    assert any(m.quitters for m in matches)
    path = tmp_path / "sim.jsonl"
    with path.open("w") as out:
        assert write_jsonl(matches, out) == 300
    read = list(read_history(path))
    for number, (original, back) in enumerate(zip(matches, read, strict=True), start=1):
        assert back.row == number
        assert (back.match_id, back.mode, back.at) == (original.match_id, "3v3", original.at)
        assert (back.teams, back.ranks, back.quitters) == (
            original.teams,
            original.ranks,
            original.quitters,
        )
        assert back.stats is not None
        assert original.stats is not None
        assert dict(back.stats) == dict(original.stats)


def test_events_are_valid_match_finished() -> None:
    for match in simulate(SimulationConfig(matches=50, teams=5, quit_probability=0.1)):
        event = match_finished_event(match)
        parsed = decode_match_finished(orjson.dumps(event))
        assert parsed.teams == match.teams
        assert event["finished_at"].endswith("Z")


def test_write_csv_refuses_team_matches() -> None:
    matches = simulate(SimulationConfig(matches=2, team_size=2))
    with pytest.raises(ValueError, match="is not 1v1"):
        write_csv(matches, io.StringIO())


def test_event_names_the_parties_sorted_and_only_when_there_are_some() -> None:
    match = SimulatedMatch(
        match_id="m1",
        mode="3v3",
        at=DEFAULT_START,
        teams=(("p5", "p9", "p2"), ("p4", "p1", "p3")),
        ranks=(0, 1),
        stats=None,
        quitters=frozenset(),
        true_skills={},
        parties=(("p9", "p2"), ("p3", "p1", "p4")),
    )
    event = match_finished_event(match)
    assert event["parties"] == [["p1", "p3", "p4"], ["p2", "p9"]]
    decode_match_finished(orjson.dumps(event))  # a valid match-finished event
    assert "parties" not in match_finished_event(replace(match, parties=()))


def test_jsonl_writes_the_simulated_parties(tmp_path: Path) -> None:
    config = SimulationConfig(matches=200, players=80, team_size=3, party_probability=0.5)
    matches = list(simulate(config))
    path = tmp_path / "sim.jsonl"
    with path.open("w") as out:
        write_jsonl(matches, out)
    events = [orjson.loads(line) for line in path.read_bytes().splitlines()]
    written = [tuple(tuple(party) for party in e.get("parties", [])) for e in events]
    assert written == [m.parties for m in matches]
    assert any(written) and not all(written)
    assert all(e["parties"] for e in events if "parties" in e)  # never an empty list
