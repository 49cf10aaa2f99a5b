"""A mode whose newcomers start from another (stream/ratings/carryover.py), live: a player's
first match in ``duo`` is rated from their ``solo`` rating as it stood when the match began,
and every rating equals replay of the same history, in any order the partitions are read."""

from __future__ import annotations

import random
from typing import Any

import pytest
from builders import T0
from harness import FINISHED, STARTED, Cluster, drain_in_order, epoch_ms
from replay_1v1 import replayed_history

from stream.config.modes import parse_modes
from stream.history import HistoryMatch

pytestmark = pytest.mark.usefixtures("batched")

MODES = parse_modes({"modes": {"solo": {}, "duo": {"start": {"from_mode": "solo"}}}})
PLAYERS = [f"p{i}" for i in range(6)]


def history(seed: int) -> list[HistoryMatch]:
    """1v1 matches in solo and duo (the first few in solo), no player's matches overlapping."""
    rng = random.Random(seed)
    out = []
    at = T0
    for i in range(30):
        at += rng.choice([5.0, 60.0, 3600.0])
        a, b = rng.sample(PLAYERS, 2)
        mode = "solo" if i < 8 else rng.choice(["solo", "duo"])
        ranks = rng.choice([(0, 1), (1, 0), (0, 0)])
        out.append(
            HistoryMatch(i, f"m{i:02d}", mode, at + 4.0, ((a,), (b,)), ranks, None, frozenset(), at)
        )
        at += 4.0
    return out


def publish(c: Cluster, matches: list[HistoryMatch]) -> None:
    for m in matches:
        ids = {"match_id": m.match_id, "mode": m.mode}
        assert m.started_at is not None
        teams = [list(t) for t in m.teams]
        c.send(STARTED, {**ids, "started_at": epoch_ms(m.started_at), "teams": teams})
        c.send(FINISHED, {**ids, "finished_at": epoch_ms(m.at), "ranks": list(m.ranks)})


@pytest.mark.parametrize("seed", range(6))
def test_live_starts_newcomers_from_the_other_mode_as_replay_does(seed: int) -> None:
    matches = history(seed)
    c = Cluster(MODES, partitions=4)
    publish(c, matches)
    if seed % 2:
        drain_in_order(c, seed)  # a backlog read partition by partition, in a seeded order
    else:
        c.run()
    live = {
        (e["player_id"], e["match_id"]): (
            e["rating"],
            e["deviation"],
            e["volatility"],
            e["rank_points"],
            e["games"],
        )
        for e in c.ratings
    }
    assert len(live) == len(c.ratings) == 2 * len(matches)
    assert live == replayed_history(matches, MODES)
    # Somebody's first duo match started from their solo rating, games carried.
    firsts: dict[str, dict[str, Any]] = {}
    for e in sorted(c.ratings, key=lambda e: e["match_id"]):
        if e["mode"] == "duo":
            firsts.setdefault(e["player_id"], e)
    solo_games = {
        pid: sum(
            1
            for m in matches
            if m.mode == "solo" and any(pid in t for t in m.teams) and m.match_id < e["match_id"]
        )
        for pid, e in firsts.items()
    }
    carried = [pid for pid, e in firsts.items() if solo_games[pid] > 0]
    assert carried, "no player started duo after playing solo"
    for pid in carried:
        assert firsts[pid]["games"] == solo_games[pid] + 1
        assert firsts[pid]["previous"]["rating"] != MODES.get("duo").initial.rating
