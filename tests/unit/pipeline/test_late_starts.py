"""Starts read late (docs/event-time.md, "Late starts"): a start read after event time passed
it is ordered for all its players at once, after whatever any of them may have moved past, so
no two players wait for each other's match and every result is applied once. Before, each
player put a late start where it stood for them, and two players could each wait, for good,
for the other's match (found 2026-12-07 with `skillstream bench pipeline --backlog 12000
--backlog-players 20`, the starts dated months back)."""

from __future__ import annotations

import dataclasses
import math
import random
from collections import Counter
from typing import Any

import pytest
from builders import T0
from harness import FINISHED, STARTED, Cluster, epoch_ms

from stream.config.modes import Modes
from stream.pipeline.outbox import Outbox
from stream.pipeline.playerpartition import PlayerContext
from stream.pipeline.players import PlayerProcessor
from stream.protocol import Combined, Join, Ordered, Position, Rate, RatedPlayer, Snapshot

pytestmark = pytest.mark.usefixtures("batched")

PARTITIONS = 4


def start(c: Cluster, match_id: str, at: float, teams: list[list[str]]) -> None:
    ids = {"match_id": match_id, "mode": "1v1"}
    c.send(STARTED, {**ids, "started_at": epoch_ms(at), "teams": teams})


def finish(c: Cluster, match_id: str, at: float, ranks: list[int]) -> None:
    ids = {"match_id": match_id, "mode": "1v1"}
    c.send(FINISHED, {**ids, "finished_at": epoch_ms(at), "ranks": ranks})


def rated_once(c: Cluster) -> Counter[tuple[str, str]]:
    return Counter((e["player_id"], e["match_id"]) for e in c.ratings)


def games(c: Cluster, player: str) -> int:
    state = c.state(player, "1v1")
    return 0 if state is None else state.games


def test_a_late_start_two_players_had_moved_past_differently_is_rated() -> None:
    """b's z (T0 - 10 s) is still pending when a's and b's m (T0 + 30 s) starts and event
    time passes it, so a's snapshot for m goes out and b's waits for z. Then their p, started
    at T0, is read. Put where each stood, a would wait for m before p and b for p before m:
    each match waiting for the other, for good."""
    c = Cluster(partitions=PARTITIONS)
    start(c, "z", T0 - 10, [["b"], ["d"]])
    start(c, "m", T0 + 30, [["a"], ["b"]])
    start(c, "x", T0 + 40, [["x"], ["y"]])
    finish(c, "x", T0 + 45, [0, 1])
    c.run()
    start(c, "p", T0, [["a"], ["b"]])
    finish(c, "z", T0 + 20, [0, 1])
    finish(c, "p", T0 + 60, [0, 1])
    finish(c, "m", T0 + 90, [0, 1])
    c.run()
    assert rated_once(c) == Counter(
        {
            (p, m): 1
            for m, players in [("x", "xy"), ("z", "bd"), ("m", "ab"), ("p", "ab")]
            for p in players
        }
    )
    assert (games(c, "a"), games(c, "b")) == (2, 3)
    assert c.dead_letters == []


def late_rounds(
    seed: int, players: int = 4, matches: int = 36
) -> list[list[tuple[float, str, dict[str, Any]]]]:
    """1v1 matches among a few players, a player's own never overlapping, published in rounds:
    each round the events of a few consecutive matches, shuffled, so starts are read after
    their players' next matches began, finishes before their starts."""
    rng = random.Random(seed)
    names = [f"p{i}" for i in range(players)]
    free = dict.fromkeys(names, T0)
    events: list[tuple[float, str, dict[str, Any]]] = []
    for i in range(matches):
        a, b = rng.sample(names, 2)
        at = max(free[a], free[b]) + rng.choice([1.0, 10.0, 60.0])
        end = at + rng.choice([0.0, 30.0, 120.0])
        free[a] = free[b] = end
        ids = {"match_id": f"m{i:02d}", "mode": "1v1"}
        events.append((at, STARTED, {**ids, "started_at": epoch_ms(at), "teams": [[a], [b]]}))
        # With the line-up: a finish read long before its start stands in for it.
        result = {**ids, "finished_at": epoch_ms(end), "teams": [[a], [b]], "ranks": [0, 1]}
        events.append((end, FINISHED, result))
    events.sort(key=lambda e: e[0])
    rounds: list[list[tuple[float, str, dict[str, Any]]]] = []
    while events:
        size = rng.choice([4, 8, 16])
        chunk, events = events[:size], events[size:]
        rng.shuffle(chunk)
        rounds.append(chunk)
    # Some rounds read a round behind the next: their starts after later matches' snapshots.
    for i in range(len(rounds) - 1):
        if rng.random() < 0.5:
            rounds[i], rounds[i + 1] = rounds[i + 1], rounds[i]
    return rounds


@pytest.mark.parametrize("seed", range(12))
def test_starts_read_late_in_any_order_among_few_players_are_each_rated_once(seed: int) -> None:
    c = Cluster(partitions=PARTITIONS)
    played: Counter[str] = Counter()
    expected: set[tuple[str, str]] = set()
    for chunk in late_rounds(seed):
        for _, topic, event in chunk:
            c.send(topic, event)
            if topic == STARTED:
                for team in event["teams"]:
                    for player in team:
                        played[player] += 1
                        expected.add((player, event["match_id"]))
        c.run()
    counted = rated_once(c)
    assert set(counted) == expected and set(counted.values()) == {1}
    assert {p: games(c, p) for p in played} == dict(played)
    assert c.counts["late_starts"] > 0 and c.dead_letters == []


def test_a_late_join_answers_with_its_players_position_and_waits_for_its_order() -> None:
    """A join that asks (its start may be late) is answered with the player's position: just
    after the latest match of theirs whose snapshot is out. Nothing of the player's from there
    on goes until the order comes; then the match goes in its turn."""
    players = PlayerProcessor(Modes(), partitions=1)
    partition = players.restore(0, [])
    out = Outbox()
    ctx = PlayerContext.of(partition, {}, {}, out, 1.0)

    def snapshots() -> list[str]:
        return [c.match_id for c in out.match_commands[0] if isinstance(c, Snapshot)]

    players.on_command(ctx, Combined(T0 + 100))
    players.on_command(ctx, Join("next", "a", "1v1", T0 + 50, 0))
    assert snapshots() == ["next"]
    players.on_command(ctx, Join("late", "a", "1v1", T0, 0, ask=True))
    players.on_command(ctx, Join("after", "a", "1v1", T0 + 70, 0))
    position = math.nextafter(T0 + 50, math.inf)
    assert Position("late", "a", position) in out.match_commands[0]
    rate = Rate("next", "1v1", T0 + 60, [["a"], ["b"]], [0, 1], None, {"a": None, "b": None}, [])
    players.on_command(ctx, dataclasses.replace(rate, players=[RatedPlayer("a", None, None)]))
    players.on_command(ctx, Combined(T0 + 200))
    assert snapshots() == ["next"]  # "after" waits for the order of "late", before it
    players.on_command(ctx, Ordered("late", T0 + 60, ["a"]))
    assert snapshots() == ["next", "late"]
    record = ctx.pending.get("a")
    assert record is not None and record.matches["late"].turn == T0 + 60


@pytest.mark.parametrize(("order", "again"), [(T0, False), (T0 + 30, True)])
def test_a_late_join_with_nothing_out_sends_its_snapshot_at_once(order: float, again: bool) -> None:
    """Nothing of the player's was out when the late join came: its position is its start and
    its snapshot goes at once, taken for that time. Ordered there (no player had passed it),
    that snapshot stands; ordered later, the home drops it and the player sends another."""
    players = PlayerProcessor(Modes(), partitions=1)
    partition = players.restore(0, [])
    out = Outbox()
    ctx = PlayerContext.of(partition, {}, {}, out, 1.0)
    players.on_command(ctx, Combined(T0 + 100))
    players.on_command(ctx, Join("late", "a", "1v1", T0, 0, ask=True))
    sent = out.match_commands[0]
    assert Position("late", "a", T0) in sent
    assert [(c.match_id, c.turn) for c in sent if isinstance(c, Snapshot)] == [("late", T0)]
    players.on_command(ctx, Ordered("late", order, ["a"]))
    turns = [c.turn for c in out.match_commands[0] if isinstance(c, Snapshot)]
    assert turns == ([T0, order] if again else [T0])
