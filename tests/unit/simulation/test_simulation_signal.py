"""The signal simulated histories carry: uneven matches, team effects, parties, newcomers."""

from __future__ import annotations

import random
import statistics
from collections import Counter
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from stream.config.modes import Modes
from stream.history import HistoryMatch
from stream.offline.newcomers import newcomer_calibration
from stream.offline.replayer import Replayer
from stream.quality import log_loss
from stream.ratings.modeconfig import ModeConfig
from stream.ratings.teams import TeamStrategy
from stream.simulation import Matchmaker, SimulatedMatch, SimulationConfig, simulate
from stream.simulation.matchmaker import balance, elo_changes
from stream.simulation.outcome import performance, team_performance

COIN_FLIP = 0.6931


# The simulator's signal is read with one fixed configuration, the published INVERSUS Glicko-2
# (no experience term, composite team), so that a change of the built-in defaults, which are
# chosen on real play, does not move what these tests say about the simulator.
PUBLISHED = Modes.single(ModeConfig("default", teams=TeamStrategy.COMPOSITE_TEAM))


def as_history(matches: Iterable[SimulatedMatch]) -> list[HistoryMatch]:
    """The matches as a history read from a file (rows from 1), without their start times."""
    return [
        HistoryMatch(n, m.match_id, m.mode, m.at, m.teams, m.ranks, m.stats, m.quitters)
        for n, m in enumerate(matches, start=1)
    ]


def default_log_loss(**changes: Any) -> float:
    config = replace(SimulationConfig(matches=4000, players=400, seed=5), **changes)
    replayer = Replayer(PUBLISHED)
    losses = []
    for match in as_history(simulate(config)):
        losses += [log_loss(p, actual) for p, actual in replayer.predict(match)]
        replayer.apply(match)
    return statistics.fmean(losses)


def win_rate(a: list[float], b: list[float], draws: int = 20_000, **knobs: float) -> float:
    rng = random.Random(1)
    carry = knobs.get("carry", 0.0)
    edge = knobs.get("edge", 0.0)
    mean_size = (len(a) + len(b)) / 2
    wins = 0
    for _ in range(draws):
        pa = team_performance([performance(s, rng) for s in a], carry, edge, mean_size)
        pb = team_performance([performance(s, rng) for s in b], carry, edge, mean_size)
        wins += pa > pb
    return wins / draws


def test_one_on_one_performances_follow_the_elo_curve() -> None:
    assert abs(win_rate([1700], [1500]) - 1 / (1 + 10 ** (-200 / 400))) < 0.01
    assert abs(win_rate([1500], [1500]) - 0.5) < 0.01


def test_a_mixed_team_differs_from_a_uniform_team_of_the_same_mean_only_with_carry() -> None:
    mixed, uniform = [1200.0, 1800.0], [1500.0, 1500.0]
    assert abs(win_rate(mixed, uniform) - 0.5) < 0.015
    assert win_rate(mixed, uniform, carry=0.25) > 0.55
    assert win_rate(mixed, uniform, carry=0.5) > win_rate(mixed, uniform, carry=0.25)


def test_the_bigger_team_keeps_the_edge_the_handicap_leaves() -> None:
    small, big = [1500.0, 1500.0], [1500.0, 1500.0, 1500.0]
    # Without an edge, only the skew of the performance noise tells the sizes apart.
    assert abs(win_rate(big, small) - 0.5) < 0.03
    assert win_rate(big, small, edge=50.0) > win_rate(big, small) + 0.05


def more_partied_side_win_rate(edge: float) -> float:
    """How often the side with more partied players beats the other, over 4v4 matches where
    every side holds a party (of 2 to 4): sides with as many, and draws, say nothing."""
    config = SimulationConfig(
        seed=1, matches=3000, players=400, team_size=4, party_probability=1.0, party_edge=edge
    )
    wins = decided = 0
    for match in simulate(config):
        members = {p for party in match.parties for p in party}
        counts = [sum(p in members for p in team) for team in match.teams]
        if counts[0] == counts[1]:
            continue
        more = 0 if counts[0] > counts[1] else 1
        decided += 1
        wins += match.ranks[more] < match.ranks[1 - more]
    assert decided > 1500  # two sizes of three differ in two matches of three
    return wins / decided


def test_a_party_edge_makes_the_more_partied_side_win_more() -> None:
    # 59% here (about 2,000 matches, a standard error of 1.1 points): the sides differ by one
    # or two partied players of four, 50 to 100 points of team performance.
    assert more_partied_side_win_rate(200.0) > 0.55
    # The control: without an edge, being partied is no advantage (51% here) ...
    assert abs(more_partied_side_win_rate(0.0) - 0.5) < 0.035
    # ... and a negative edge (parties that get in each other's way) turns it around.
    assert more_partied_side_win_rate(-200.0) < 0.45


def test_elo_matchmaking_leaves_signal_where_the_oracle_leaves_coin_flips() -> None:
    # The setting: teams balanced on true skill, no newcomers, no carry.
    oracle = default_log_loss(
        team_size=2,
        matchmaker=Matchmaker.ORACLE,
        matchmaking_noise=100.0,
        newcomer_deficit=0.0,
        drift_sd=0.0,
        carry=0.0,
        party_rate=0.0,
    )
    assert oracle > COIN_FLIP - 0.005  # 0.711 here: no better than a coin flip
    for changes in ({"team_size": 2}, {"team_size": 5}, {"team_sizes": (2, 3)}, {"teams": 4}):
        assert default_log_loss(**changes) < 0.665, changes


def test_the_matchmaker_learns_from_results() -> None:
    # A win against an equal team moves both of its members up by K/2, the losers down.
    assert elo_changes([1500.0, 1500.0], [0, 1], 32.0) == [16.0, -16.0]
    assert elo_changes([1500.0, 1500.0], [0, 0], 32.0) == [0.0, 0.0]
    changes = elo_changes([1500.0, 1500.0, 1500.0], [0, 1, 2], 32.0)
    assert changes == [16.0, 0.0, -16.0]
    # An expected win moves less than an upset.
    assert (
        elo_changes([1700.0, 1500.0], [0, 1], 32.0)[0]
        < elo_changes([1500.0, 1700.0], [0, 1], 32.0)[0]
    )


def test_teams_are_balanced_on_the_estimates_with_a_party_kept_together() -> None:
    estimates = [1900.0, 1800.0, 1600.0, 1500.0, 1400.0, 1300.0]
    assert balance([], [0, 1, 2, 3], estimates, (2, 2)) == [[0, 3], [1, 2]]  # snake draft
    teams = balance([[4, 5]], [0, 1, 2, 3], estimates, (3, 3))
    assert teams[0][:2] == [4, 5]
    assert sorted(len(t) for t in teams) == [3, 3]
    assert teams == [[4, 5, 0], [1, 2, 3]]
    assert [len(t) for t in balance([], [0, 1, 2, 3, 4], estimates, (2, 3))] == [2, 3]
    # Two parties: one per team, the weaker party gets the best solo player.
    assert balance([[0, 1], [4, 5]], [2, 3], estimates, (3, 3)) == [[0, 1, 3], [4, 5, 2]]


def test_parties_play_together_and_make_teammates_recur() -> None:
    config = SimulationConfig(matches=3000, players=200, team_size=2, seed=3, party_rate=1.0)

    def share_together(party_rate: float) -> float:
        # With every joiner in a party, the parties of a 2v2 are the pairs (2k, 2k + 1): when
        # both of a pair play one match, how often are they teammates?
        together = apart = 0
        for match in simulate(replace(config, party_rate=party_rate)):
            side = {p: t for t, team in enumerate(match.teams) for p in team}
            for p, t in side.items():
                n = int(p[1:])
                mate = f"p{n + 1:06d}"
                if n % 2 == 0 and mate in side:
                    together += side[mate] == t
                    apart += side[mate] != t
        return together / (together + apart)

    # A party queues together; only when the pool runs short may a member play without (or
    # against) their party.
    assert share_together(1.0) > 0.95
    assert share_together(0.0) < 0.45  # a random pair in a 2v2: one chance in three

    def share_beside_partner(party_rate: float) -> float:
        # Of all (player, match), how often is the player's pair partner their teammate?
        beside = total = 0
        for match in simulate(replace(config, party_rate=party_rate)):
            for team in match.teams:
                for p in team:
                    n = int(p[1:])
                    total += 1
                    beside += f"p{n ^ 1:06d}" in team
        return beside / total

    assert share_beside_partner(1.0) > 10 * share_beside_partner(0.0)


def test_newcomers_start_weaker_and_learn() -> None:
    config = SimulationConfig(matches=6000, players=600, seed=2, drift_sd=0.0)
    first: dict[str, float] = {}
    tenth: dict[str, float] = {}
    seen: Counter[str] = Counter()
    for match in simulate(config):
        for player, skill in match.true_skills.items():
            seen[player] += 1
            if seen[player] == 1:
                first[player] = skill
            elif seen[player] == 10:
                tenth[player] = skill
    newcomers = [p for p in tenth if int(p[1:]) >= config.starting_players]
    veterans = [p for p in tenth if int(p[1:]) < config.starting_players]
    assert len(newcomers) > 100
    rise = statistics.fmean(tenth[p] - first[p] for p in newcomers)
    expected = config.newcomer_deficit * (1 - 2.718281828 ** (-9 / config.learning_matches))
    assert abs(rise - expected) < 1e-6
    assert all(tenth[p] == first[p] for p in veterans)


def test_debuts_are_predicted_too_high_as_in_real_histories() -> None:
    def debut_gaps(**changes: Any) -> list[float]:
        config = replace(SimulationConfig(matches=8000, players=800, seed=4), **changes)
        rows = newcomer_calibration(as_history(simulate(config)), Replayer(PUBLISHED), rows=8)
        return [row.gap for row in rows]

    gaps = debut_gaps()
    assert -0.3 < gaps[0] < -0.1  # the real data: about -0.2
    assert abs(gaps[7]) < 0.06  # calibrated after a few matches
    assert abs(debut_gaps(newcomer_deficit=0.0)[0]) < 0.06
