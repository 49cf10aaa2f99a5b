"""The player hash's fields, and turning Redis replies back into Python values.

Hash fields (all strings, as Redis stores them):

- ``rating``, ``deviation``: ``repr(float)``, the shortest text that reads back as the same
  float, so a cached rating is bit-for-bit the pipeline's;
- ``volatility``: like rating, or ``""`` for algorithms without one;
- ``rank_points``, ``games``, ``version``: decimal integers;
- ``updated_at``: the match's event time, epoch milliseconds;
- ``match_id``: the match that produced this state, ``""`` if unknown;
- ``schema``: :data:`SCHEMA_VERSION`, the layout of these fields. A reader refuses a hash whose
  schema it does not know instead of misreading it; a change of layout bumps the number.

Decoding accepts what every redis-py configuration returns: bytes or str (``decode_responses``),
HGETALL as a dict or a flat list, scores as pairs (RESP3) or a flat list (RESP2).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from stream.cache.entry import CachedRating

__all__ = [
    "FIELDS",
    "SCHEMA_VERSION",
    "CacheFormatError",
    "decode_entry",
    "encode_fields",
    "encode_float",
    "hash_mapping",
    "score_pairs",
    "text",
]

SCHEMA_VERSION = 1

FIELDS = (
    "rating",
    "deviation",
    "volatility",
    "rank_points",
    "games",
    "version",
    "updated_at",
    "match_id",
    "schema",
)


class CacheFormatError(ValueError):
    """A cached value this code cannot read: another schema, or a damaged hash."""


def encode_float(value: float) -> str:
    """Shortest round-trip text; Redis parses it with strtod, so a score is exact too."""
    return repr(float(value))


def encode_fields(entry: CachedRating) -> list[str]:
    """``[field, value, field, value, ...]`` for HSET, in :data:`FIELDS` order."""
    values = (
        encode_float(entry.rating),
        encode_float(entry.deviation),
        "" if entry.volatility is None else encode_float(entry.volatility),
        str(entry.rank_points),
        str(entry.games),
        str(entry.version),
        str(entry.updated_at_ms),
        entry.match_id or "",
        str(SCHEMA_VERSION),
    )
    pairs: list[str] = []
    for name, value in zip(FIELDS, values, strict=True):
        pairs += (name, value)
    return pairs


def text(value: object) -> str:
    """A reply element as str (redis-py gives bytes unless ``decode_responses`` is on)."""
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, str):
        return value
    raise CacheFormatError(f"expected a string reply, got {type(value).__name__}")


def hash_mapping(reply: object) -> dict[str, str]:
    """An HGETALL reply as ``{field: value}``, whether it came as a dict or a flat list."""
    if reply is None:
        return {}
    if isinstance(reply, Mapping):
        return {text(k): text(v) for k, v in reply.items()}
    if isinstance(reply, Sequence) and not isinstance(reply, str | bytes):
        return {text(reply[i]): text(reply[i + 1]) for i in range(0, len(reply) - 1, 2)}
    raise CacheFormatError(f"expected a hash reply, got {type(reply).__name__}")


def decode_entry(mode: str, player_id: str, reply: object) -> CachedRating | None:
    """The cached rating in an HGETALL reply; None for an absent (empty) hash.

    CacheFormatError if the hash has another schema or a field is missing or unreadable.
    """
    fields = hash_mapping(reply)
    if not fields:
        return None
    where = f"cached rating of {player_id!r} in mode {mode!r}"
    schema = fields.get("schema")
    if schema != str(SCHEMA_VERSION):
        raise CacheFormatError(
            f"{where} has schema {schema!r}; this reader knows schema {SCHEMA_VERSION}"
        )
    try:
        volatility = fields["volatility"]
        return CachedRating(
            player_id=player_id,
            mode=mode,
            rating=float(fields["rating"]),
            deviation=float(fields["deviation"]),
            volatility=float(volatility) if volatility else None,
            rank_points=int(fields["rank_points"]),
            games=int(fields["games"]),
            version=int(fields["version"]),
            updated_at_ms=int(fields["updated_at"]),
            match_id=fields["match_id"] or None,
        )
    except KeyError as exc:
        raise CacheFormatError(f"{where} lacks field {exc.args[0]!r}") from None
    except ValueError as exc:
        raise CacheFormatError(f"{where} is unreadable: {exc}") from None


def score_pairs(reply: object) -> list[tuple[str, float]]:
    """A WITHSCORES reply as ``[(member, score), ...]`` in reply order.

    RESP3 and redis-py's own parsing give pairs; a raw RESP2 reply or a Lua table is flat.
    """
    if reply is None:
        return []
    if not isinstance(reply, Sequence) or isinstance(reply, str | bytes):
        raise CacheFormatError(f"expected a list reply, got {type(reply).__name__}")
    if not reply:
        return []
    if isinstance(reply[0], list | tuple):
        return [(text(member), _score(score)) for member, score in reply]
    return [(text(reply[i]), _score(reply[i + 1])) for i in range(0, len(reply) - 1, 2)]


def _score(value: Any) -> float:
    if isinstance(value, float | int) and not isinstance(value, bool):
        return float(value)
    return float(text(value))
