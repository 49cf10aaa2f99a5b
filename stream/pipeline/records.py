"""How states, table keys and output events are written: compact JSON, exact floats.

orjson writes the shortest representation that reads back to the same float, so a state that
goes through a table, a changelog and a recovery is bit-for-bit the state that was stored: the
live pipeline and ``skillstream replay`` can agree exactly.
"""

from __future__ import annotations

from typing import Any

import orjson

from stream.events import format_time
from stream.ratings.modes import ModeConfig
from stream.ratings.skill import PlayerState

# [rating, deviation, volatility | None, rank_points, games, last_played | None]
StateList = list[Any]

# How many of a player's latest match ids the rating record keeps to recognise redeliveries.
RECENT_MATCHES = 16


def encode_state(state: PlayerState) -> StateList:
    return [
        state.rating,
        state.deviation,
        state.volatility,
        state.rank_points,
        state.games,
        state.last_played,
    ]


def decode_state(data: StateList) -> PlayerState:
    rating, deviation, volatility, rank_points, games, last_played = data
    return PlayerState(
        float(rating),
        float(deviation),
        None if volatility is None else float(volatility),
        int(rank_points),
        int(games),
        None if last_played is None else float(last_played),
    )


def rating_key(player_id: str, mode: str) -> str:
    """The rating table's key: unambiguous for any player id and mode."""
    return orjson.dumps([player_id, mode]).decode()


def rating_changed(
    *,
    player_id: str,
    mode: ModeConfig,
    match_id: str,
    outcome: str,
    before: PlayerState,
    after: PlayerState,
    version: int,
    expected_score: float,
    at: float,
) -> dict[str, Any]:
    """The rating-changed event (rating-changed.schema.json). No wall-clock time inside:
    processing the same input again produces the same bytes."""
    return {
        "player_id": player_id,
        "mode": mode.name,
        "match_id": match_id,
        "outcome": outcome,
        "rating": after.rating,
        "deviation": after.deviation,
        "volatility": after.volatility,
        "rank_points": after.rank_points,
        "games": after.games,
        "version": version,
        "previous": {
            "rating": before.rating,
            "deviation": before.deviation,
            "volatility": before.volatility,
            "rank_points": before.rank_points,
        },
        "expected_score": expected_score,
        # What a matchmaker compares: the experience offset is never stored in the rating.
        "effective_rating": after.rating + mode.experience.offset(after.games),
        "provisional": mode.experience.provisional(after.games),
        "algorithm": mode.algorithm.name,
        "at": format_time(at),
    }
