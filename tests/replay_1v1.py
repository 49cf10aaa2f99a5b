"""The offline replay the event-time tests hold the live pipeline to: 1v1 matches given as
(match id, start, finish, teams, ranks), applied in the order of play."""

from __future__ import annotations

from typing import Any

from stream.config.modes import Modes
from stream.history import HistoryMatch, play_order
from stream.offline.replayer import Replayer

Match = tuple[str, float, float, list[list[str]], list[int]]


def replayed(matches: list[Match]) -> dict[tuple[str, str], tuple[Any, ...]]:
    """Every (player, match)'s state after the match: rating, deviation, volatility, Rank
    Points, games; each match rated at its finish, as the live pipeline rates it."""
    replayer = Replayer(Modes())
    out: dict[tuple[str, str], tuple[Any, ...]] = {}
    ordered = sorted(matches, key=lambda m: play_order(m[1], m[0]))
    for row, (match_id, _start, finish, teams, ranks) in enumerate(ordered):
        match = HistoryMatch(
            row, match_id, "1v1", finish, tuple(map(tuple, teams)), tuple(ranks), None, frozenset()
        )
        for pid, update in replayer.apply(match).items():
            s = update.state
            out[(pid, match_id)] = (s.rating, s.deviation, s.volatility, s.rank_points, s.games)
    return out
