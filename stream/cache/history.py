"""A player's recent rating changes as the cache keeps them: one list per player and mode.

Each element is the JSON of one rating change (:class:`HistoryEntry`), newest at the head; the
writer's script pushes it in the same atomic step as the player's hash, and only for a version
above the stored one, so a redelivered event never adds a second element (writer.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from stream.cache.codec import CacheFormatError, text
from stream.cache.entry import CachedRating

__all__ = ["HistoryEntry", "decode_history", "encode_history"]


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One rating change of a player: the state after the match ``match_id`` (``at_ms``: its
    event time), its ``outcome`` and ``season`` (None when the event carried none)."""

    version: int
    match_id: str | None
    outcome: str | None
    season: int | None
    rating: float
    deviation: float
    rank_points: int
    games: int
    at_ms: int


def encode_history(entry: CachedRating) -> str:
    """The list element for ``entry`` (JSON text, keys in a fixed order)."""
    return orjson.dumps(
        {
            "version": entry.version,
            "match_id": entry.match_id,
            "outcome": entry.outcome,
            "season": entry.season,
            "rating": entry.rating,
            "deviation": entry.deviation,
            "rank_points": entry.rank_points,
            "games": entry.games,
            "at_ms": entry.updated_at_ms,
        }
    ).decode()


def decode_history(reply: object) -> list[HistoryEntry]:
    """An LRANGE reply as entries, in reply order (newest first); CacheFormatError for an
    element this code cannot read."""
    if reply is None:
        return []
    if not isinstance(reply, Sequence) or isinstance(reply, str | bytes):
        raise CacheFormatError(f"expected a list reply, got {type(reply).__name__}")
    return [_entry(text(element)) for element in reply]


def _entry(element: str) -> HistoryEntry:
    try:
        fields: dict[str, Any] = orjson.loads(element)
        return HistoryEntry(
            version=int(fields["version"]),
            match_id=fields["match_id"],
            outcome=fields["outcome"],
            season=fields["season"],
            rating=float(fields["rating"]),
            deviation=float(fields["deviation"]),
            rank_points=int(fields["rank_points"]),
            games=int(fields["games"]),
            at_ms=int(fields["at_ms"]),
        )
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise CacheFormatError(f"unreadable history entry {element[:80]!r}: {exc!r}") from None
