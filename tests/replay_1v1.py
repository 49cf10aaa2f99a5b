"""The offline replay the event-time tests hold the live pipeline to: 1v1 matches given as
(match id, start, finish, teams, ranks), applied in the order of play."""

from __future__ import annotations

from typing import Any

from stream.config.modes import Modes
from stream.history import HistoryMatch
from stream.offline.replayer import Replayer, in_play_order

Match = tuple[str, float, float, list[list[str]], list[int]]


def replayed(matches: list[Match]) -> dict[tuple[str, str], tuple[Any, ...]]:
    """Every (player, match)'s state after the match: rating, deviation, volatility, Rank
    Points, games; each match rated at its finish, as the live pipeline rates it, in the order
    of play and with its rule for overlapping matches (``skillstream replay --in-play-order``
    on a history that carries the starts)."""
    replayer = Replayer(Modes())
    out: dict[tuple[str, str], tuple[Any, ...]] = {}
    history = [
        HistoryMatch(
            row,
            match_id,
            "1v1",
            finish,
            tuple(map(tuple, teams)),
            tuple(ranks),
            None,
            frozenset(),
            start,
        )
        for row, (match_id, start, finish, teams, ranks) in enumerate(matches)
    ]
    for match, fates in in_play_order(history, replayer):
        for pid, update in replayer.apply_settled(match, fates).items():
            s = update.state
            out[(pid, match.match_id)] = (
                s.rating,
                s.deviation,
                s.volatility,
                s.rank_points,
                s.games,
            )
    return out
