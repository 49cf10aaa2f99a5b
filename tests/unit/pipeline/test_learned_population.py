"""A mode that learns its population, live (stream/pipeline/learnedpopulation.py): every rating
equals replay of the same history with the same modes file, whatever order the partitions are read
in, while the population moves window after window; every partition folds the same chain."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import orjson
import pytest
from harness import FINISHED, STARTED, Cluster, drain_in_order, epoch_ms
from jsonschema import Draft202012Validator
from replay_1v1 import live_states, replayed_history

import stream
from stream.config.modes import Modes, parse_modes
from stream.history import HistoryMatch
from stream.offline.replayer import Replayer, in_play_order
from stream.protocol import POPULATIONS
from stream.ratings.parttime import played_shares
from stream.ratings.population.chain import Step
from stream.ratings.skill import PlayerStats
from stream.simulation import SimulationConfig, simulate

# Every test with one message per runner call and with batches (tests/conftest.py, batched).
pytestmark = pytest.mark.usefixtures("batched")

PARTITIONS = 4
# Windows of two hours: the histories below span a dozen of them.
WINDOW_DAYS = 2 / 24


def learning(**population: Any) -> Modes:
    table: dict[str, Any] = {"window_days": WINDOW_DAYS, **population}
    return parse_modes({"default": {"population": table}}, "test modes")


def simulated(seed: int, *, with_stats: bool = False, **config: Any) -> list[HistoryMatch]:
    """A history with its starts (each match started ``seconds`` before its finish), mode
    ``m``: broad skills and many newcomers, so the prior has evidence in every window;
    ``with_stats``: the matches keep the simulator's per-player stats."""
    settings: dict[str, Any] = {
        "matches": 700,
        "players": 500,
        "initial_players": 60,
        "skill_sd": 450.0,
        "matches_per_second": 700 / (24 * 3600.0),
        "match_seconds": 600.0,
        "mode": "m",
        "seed": seed,
        **config,
    }
    out = []
    for row, m in enumerate(simulate(SimulationConfig(**settings)), 1):
        start = round(m.at - m.seconds, 3)
        out.append(
            HistoryMatch(
                row,
                m.match_id,
                m.mode,
                m.at,
                m.teams,
                m.ranks,
                m.stats if with_stats else None,
                m.quitters,
                start,
                m.parties or None,
            )
        )
    return out


def send_all(c: Cluster, history: list[HistoryMatch]) -> None:
    """Every event at its own time, in the order a fleet publishes them."""
    events: list[tuple[float, str, dict[str, Any]]] = []
    for m in history:
        ids: dict[str, Any] = {"match_id": m.match_id, "mode": m.mode}
        teams = [list(team) for team in m.teams]
        assert m.started_at is not None
        started = {**ids, "started_at": epoch_ms(m.started_at), "teams": teams}
        finished = {**ids, "finished_at": epoch_ms(m.at), "ranks": list(m.ranks)}
        if m.quitters:
            finished["quitters"] = sorted(m.quitters)
        if m.stats:
            finished["stats"] = {
                p: {"score": s.score, "seconds": s.seconds} for p, s in m.stats.items()
            }
        if m.parties:
            finished["parties"] = [list(party) for party in m.parties]
        events.append((m.started_at, STARTED, started))
        events.append((m.at, FINISHED, finished))
    for _, topic, event in sorted(events, key=lambda e: e[0]):
        c.send(topic, event)


def live(c: Cluster) -> dict[tuple[str, str], tuple[Any, ...]]:
    return live_states(c.ratings)


def replayed_steps(modes: Modes, history: list[HistoryMatch]) -> list[Step]:
    """The populations replay learned for mode ``m``, window by window."""
    replayer = Replayer(modes)
    for match, fates in in_play_order(history, replayer):
        replayer.apply_settled(match, fates)
    return replayer.learners["m"].steps


def learned_steps(modes: Modes, history: list[HistoryMatch]) -> int:
    return len(replayed_steps(modes, history))


def run_live(modes: Modes, history: list[HistoryMatch]) -> Cluster:
    """The history through the in-memory cluster: no dead letter, every rating as replay's,
    every match partition holding the same chain."""
    c = Cluster(modes, partitions=PARTITIONS)
    send_all(c, history)
    c.run()
    assert not c.dead_letters
    assert live(c) == replayed_history(history, modes)
    steps = chains(c)
    assert all(s == steps[0] for s in steps)
    return c


def chains(c: Cluster) -> list[tuple[object, ...]]:
    """Every match partition's chain of mode ``m`` as stored: what it folded (the steps it
    still needs, and where it stands)."""
    table = c.store.tables["populations"]
    found: list[tuple[object, ...]] = []
    for p in range(PARTITIONS):
        chain = POPULATIONS.value(table[POPULATIONS.key_bytes(p)]).chains["m"].chain
        found.append((chain.folded, chain.current, chain.seen, chain.steps[-1:]))
    return found


def carried(c: Cluster) -> set[tuple[object, ...]]:
    """The populations the rate commands carried."""
    return {
        tuple(cmd[10])
        for (topic, _), log in c.logs.items()
        if topic.endswith("player-commands")
        for value in log
        for cmd in orjson.loads(value)
        if cmd[0] == "rate" and len(cmd) > 10
    }


@pytest.mark.parametrize("seed", range(3))
def test_a_learning_mode_rates_live_as_replay_with_the_population_moving(seed: int) -> None:
    modes = learning()
    history = simulated(seed)
    assert learned_steps(modes, history) >= 3  # the population moved during the history
    offsets = {step.population.debut_offset for step in replayed_steps(modes, history)}
    assert len(offsets) >= 3  # the debut offset too
    c = run_live(modes, history)
    assert len(carried(c)) >= 3
    assert {cmd[5] for cmd in carried(c)} >= offsets - {-300.0}


def test_values_held_stay_put_live_as_in_replay_while_the_rest_is_learned() -> None:
    modes = learning(hold=["debut_offset", "decisiveness"])
    history = simulated(4)
    steps = replayed_steps(modes, history)
    # The prior deviation is still learned: it moves, and with it the ratings.
    assert len({step.population.deviation for step in steps}) >= 3
    assert {(s.population.decisiveness, s.population.debut_offset) for s in steps} == {
        (1.0, -300.0)
    }
    # Not held, the same history moves them: the hold is what kept them.
    free = replayed_steps(learning(), history)[-1].population
    assert free.decisiveness != 1.0 and free.debut_offset != -300.0
    run_live(modes, history)


@pytest.mark.parametrize("seed", range(2))
def test_a_learning_mode_learns_its_drift_live_as_in_replay(seed: int) -> None:
    """Ten days of play in half-day windows: players come back after days away, so every
    deviation grows between their matches, the players' drift slopes move and the drift period
    with them; the live ratings, which depend on both, equal replay's."""
    modes = learning(window_days=0.5)
    history = simulated(
        seed, matches=500, players=120, initial_players=120, matches_per_second=50 / 86400.0
    )
    periods = {step.population.drift_period for step in replayed_steps(modes, history)}
    assert len(periods) >= 3  # the period moved during the history
    c = run_live(modes, history)
    # A carried population: [deviation, edge, persistence, decisiveness, period, offset].
    assert {cmd[4] for cmd in carried(c)} >= periods - {14.0}


@pytest.mark.parametrize("seed", range(4))
def test_a_backlog_of_a_learning_mode_read_in_any_order_equals_replay(seed: int) -> None:
    modes = learning()
    history = simulated(10 + seed, matches=400, players=300)
    c = Cluster(modes, partitions=PARTITIONS)
    send_all(c, history)
    drain_in_order(c, seed)
    assert not c.dead_letters
    assert live(c) == replayed_history(history, modes)


def test_teams_uneven_sides_and_reshuffled_lineups_learn_live_as_in_replay() -> None:
    """The size edge, the persistence (line-up keys carried in the players' records) and the
    decisiveness move too; live equals replay throughout."""
    modes = learning(persistence=1.0)
    history = simulated(
        3,
        matches=500,
        players=400,
        size_range=(1, 4),
        uneven_rate=0.4,
        party_rate=0.0,
        teams=2,
    )
    replayer = Replayer(modes)
    for match, fates in in_play_order(history, replayer):
        replayer.apply_settled(match, fates)
    learned = replayer.learners["m"].current
    assert learned.persistence < 0.6 and learned.size_edge != 100.0
    c = Cluster(modes, partitions=PARTITIONS)
    send_all(c, history)
    c.run()
    assert not c.dead_letters
    assert live(c) == replayed_history(history, modes)
    assert len(carried(c)) >= 3  # the rate commands carried several populations


def test_a_match_waits_for_its_population_until_every_partition_has_closed_its_windows() -> None:
    """A partition that has not read its inputs holds back every other partition's matches of
    the windows its own settled matches decide; once it catches up they are rated, as replay."""
    modes = learning()
    history = simulated(4, matches=300, players=200)
    c = Cluster(modes, partitions=PARTITIONS)
    send_all(c, history)
    held = (STARTED, 2)
    c.hold(*held)
    c.run()
    assert c.match_table  # the other partitions read their inputs
    rated = len(c.ratings)
    windows = [int((m.started_at or 0.0) // (WINDOW_DAYS * 86_400)) for m in history]
    assert max(windows) - min(windows) >= 4
    assert rated < len(replayed_history(history, modes))
    c.release(*held)
    c.run()
    assert live(c) == replayed_history(history, modes)


def test_a_shuffled_partition_order_still_folds_the_same_chain_everywhere() -> None:
    modes = learning()
    history = simulated(5, matches=400, players=300)
    c = Cluster(modes, partitions=PARTITIONS)
    send_all(c, history)
    drain_in_order(c, random.Random(5).randrange(100))
    steps = chains(c)
    assert all(s == steps[0] for s in steps)


@pytest.mark.parametrize(
    ("seed", "strategy", "points"),
    [(0, "composite_opponent", 0.0), (1, "shared", 0.0), (2, "auto", 3.5)],
)
def test_part_time_play_rates_and_learns_live_as_in_replay(
    seed: int, strategy: str, points: float
) -> None:
    """Players who played part of a match (their seconds in the stats), quitters among them,
    and (``points``) individual performance: the size edge is learned from the sides' summed
    shares and every rating equals replay's; without the stats the same matches rate
    otherwise (the inputs are used)."""
    table: dict[str, Any] = {
        "teams": strategy,
        "population": {"window_days": WINDOW_DAYS},
        "performance": {"points": points},
    }
    modes = parse_modes({"default": table}, "test modes")
    history = simulated(
        30 + seed,
        with_stats=True,
        matches=500,
        players=300,
        team_size=3,
        part_time_probability=0.2,
        quit_probability=0.03,
    )
    partial = [m for m in history if played_shares(m.teams, m.stats) is not None]
    assert len(partial) > len(history) / 2
    c = run_live(modes, history)
    moved = [e for e in c.ratings if "performance" in (e.get("why") or {})]
    assert bool(moved) == (points > 0.0)
    assert any("played" in (e.get("why") or {}) for e in c.ratings)
    schema = json.loads(
        (Path(stream.__file__).parent / "schemas/rating-changed.schema.json").read_text()
    )
    validator = Draft202012Validator(schema)
    for event in c.ratings:
        validator.validate(event)
    without = [m._replace(stats=None) for m in history]
    assert live(c) != replayed_history(without, modes)
    edges = {step.population.size_edge for step in replayed_steps(modes, history)}
    assert len(edges) >= 3  # learned from the shares alone: every side has three players


def test_duels_with_unequal_seconds_rate_live_as_in_replay_and_as_without_them() -> None:
    """A duel's seconds are no part-time play (stream.ratings.parttime): its players are rated
    on the duel's fast paths, live as in replay, as if the stats were not there."""
    modes = learning()
    history = simulated(7, matches=400, players=200)
    rng = random.Random(7)
    parted = []
    for m in history:
        if rng.random() < 0.4:
            (a,), (b,) = m.teams
            seconds = float(rng.randint(60, 600))
            parted.append(
                m._replace(stats={a: PlayerStats(10.0, 600.0), b: PlayerStats(5.0, seconds)})
            )
        else:
            parted.append(m)
    c = run_live(modes, parted)
    assert live(c) == replayed_history(history, modes)


@pytest.mark.parametrize(("seed", "strategy"), [(0, "composite_opponent"), (1, "shared")])
def test_parties_rate_and_learn_their_edge_live_as_in_replay(seed: int, strategy: str) -> None:
    """Matches that name parties (who played with a coordination edge): the party edge is
    learned from them, live exactly as in replay, every rating equal to replay's, the events
    valid; without the parties the same matches rate otherwise (the input is used)."""
    table: dict[str, Any] = {"teams": strategy, "population": {"window_days": WINDOW_DAYS}}
    modes = parse_modes({"default": table}, "test modes")
    history = simulated(
        40 + seed,
        matches=500,
        players=300,
        team_size=3,
        party_probability=0.6,
        party_edge=200.0,
        quit_probability=0.03,
    )
    assert sum(1 for m in history if m.parties) > len(history) / 2
    c = run_live(modes, history)
    schema = json.loads(
        (Path(stream.__file__).parent / "schemas/rating-changed.schema.json").read_text()
    )
    validator = Draft202012Validator(schema)
    for event in c.ratings:
        validator.validate(event)
    edges = [step.population.party_edge for step in replayed_steps(modes, history)]
    assert edges[-1] > 40.0, edges  # learned from 0 (the start), towards the 200 drawn
    assert any((e.get("why") or {}).get("party", {}).get("member") for e in c.ratings)
    assert {e["population"]["party_edge"] for e in c.ratings} - {0.0}
    without = [m._replace(parties=None) for m in history]
    assert live(c) != replayed_history(without, modes)


def test_an_abandonment_in_a_partied_match_is_rated_live_as_in_replay() -> None:
    """a starts m2 100 s into m1, whose result comes 300 s in: a abandoned m1 (grace 60 s) and
    takes that loss without the result's inputs, parties included; the others are rated from
    the result with the duo at the party edge, live exactly as in replay."""
    modes = learning(party_edge=80.0)
    t = 1_780_000_000.0
    history = [
        HistoryMatch(
            1, "m1", "m", t + 300, (("a", "b"), ("c", "d")), (0, 1), None, frozenset(), t,
            (("a", "b"),),
        ),
        HistoryMatch(
            2, "m2", "m", t + 400, (("a", "e"), ("f", "g")), (1, 0), None, frozenset(), t + 100,
            (("f", "g"),),
        ),
        HistoryMatch(3, "x", "m", t + 1060, (("x",), ("y",)), (0, 1), None, frozenset(), t + 1000),
    ]  # fmt: skip
    c = Cluster(modes, partitions=PARTITIONS)
    send_all(c, history)
    c.run()
    assert not c.dead_letters
    assert live(c) == replayed_history(history, modes)
    found = {(e["player_id"], e["match_id"]): e for e in c.ratings}
    assert found[("a", "m1")]["outcome"] == "abandoned"
    assert "party" not in found[("a", "m1")]["why"]
    assert found[("b", "m1")]["outcome"] == "win"
    assert found[("b", "m1")]["why"]["party"] == {"edge": 80.0, "member": True}
    assert found[("c", "m1")]["why"]["party"] == {"edge": 80.0, "member": False}
    assert found[("f", "m2")]["why"]["party"]["member"] is True
