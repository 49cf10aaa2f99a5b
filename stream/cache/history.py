"""A player's recent rating changes as the cache keeps them: one list per player and mode.

Each element is the JSON of one rating change (:class:`HistoryEntry`), newest at the head; the
writer's script pushes it in the same atomic step as the player's hash, and only for a version
above the stored one, so a redelivered event never adds a second element (writer.py).

After a re-rate the history reads as re-rated: a change of the new generation takes the place
of the one it replaces (each match listed once, where its event time puts it, with the rating
it replaced), and a match the re-rate no longer counts (voided) keeps its element marked
``retracted``, which the readers leave out of the history and `ratings explain` names as
voided (writer.py, RETRACT_SCRIPT).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from stream.cache.codec import CacheFormatError, text
from stream.cache.entry import CachedRating, Correction, correction_of
from stream.ratings.explain import Explanation, describe

__all__ = [
    "HistoryEntry",
    "counted",
    "decode_history",
    "encode_history",
    "entry_of",
    "worded",
    "worded_correction",
]


@dataclass(frozen=True, slots=True)
class HistoryEntry:
    """One rating change of a player: the state after the match ``match_id`` (``at_ms``: its
    event time), its ``outcome`` and ``season`` (None when the event carried none), and the
    event's explanation of the change: ``why`` and ``before`` (rating, deviation), None for
    changes cached before explanations existed."""

    version: int
    match_id: str | None
    outcome: str | None
    season: int | None
    rating: float
    deviation: float
    rank_points: int
    games: int
    at_ms: int
    why: Explanation | None = None
    before: tuple[float, float] | None = None
    adjusted: tuple[str, str] | None = None  # an operator's adjustment: (by, reason)
    # A result refunded after a ban: (by, reason, the player banned, the ban's id).
    refunded: tuple[str, str, str, str] | None = None
    # A re-rate's change that replaces one published before, and the rating that one gave
    # (None when the cache no longer held it).
    corrected: Correction | None = None
    replaced_rating: float | None = None
    # The match no longer counts: a re-rate voided it (or rated it under a pseudonym).
    retracted: Correction | None = None


def entry_of(change: CachedRating) -> HistoryEntry:
    """The history element the writer would keep for ``change``, without a round trip."""
    return HistoryEntry(
        version=change.version,
        match_id=change.match_id,
        outcome=change.outcome,
        season=change.season,
        rating=change.rating,
        deviation=change.deviation,
        rank_points=change.rank_points,
        games=change.games,
        at_ms=change.updated_at_ms,
        why=change.why,
        before=change.before,
        adjusted=change.adjusted,
        refunded=change.refunded,
        corrected=change.correction,
    )


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
            "why": None if entry.why is None else entry.why.to_json(),
            "before": entry.before,
            **({} if entry.adjusted is None else {"adjusted": list(entry.adjusted)}),
            **({} if entry.refunded is None else {"refunded": list(entry.refunded)}),
            **({} if entry.correction is None else {"correction": entry.correction.to_json()}),
        }
    ).decode()


def counted(entries: Sequence[HistoryEntry]) -> list[HistoryEntry]:
    """``entries`` without the matches a re-rate no longer counts."""
    return [entry for entry in entries if entry.retracted is None]


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
            why=None if fields.get("why") is None else Explanation.from_json(fields["why"]),
            before=_pair(fields.get("before")),
            adjusted=_adjusted(fields.get("adjusted")),
            refunded=_refunded(fields.get("refunded")),
            corrected=_correction(fields.get("correction"), "correction"),
            replaced_rating=_optional_float(fields.get("replaced_rating")),
            retracted=_correction(fields.get("retracted"), "retracted"),
        )
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise CacheFormatError(f"unreadable history entry {element[:80]!r}: {exc!r}") from None


def worded(entry: HistoryEntry, player_id: str) -> list[str]:
    """``entry``'s change worded for a support agent (stream.ratings.explain.describe); a
    change cached before explanations existed says only where it went; a re-rate's correction
    ends with who corrected it, why, and what it replaced."""
    lines = _worded_change(entry, player_id)
    if entry.corrected is not None:
        lines.append(worded_correction(entry.corrected, entry.replaced_rating))
    return lines


def worded_correction(correction: Correction, replaced_rating: float | None) -> str:
    """One sentence on a re-rate's correction of a change, for a support agent."""
    who = "" if correction.by is None else f" by {correction.by}"
    was = "" if replaced_rating is None else f", which had left the rating at {replaced_rating:.0f}"
    return (
        f"This change is a correction: re-rate generation {correction.generation}{who}"
        f' ("{correction.reason}") replaced the change first published for this match'
        f" (version {correction.replaces}){was}."
    )


def _worded_change(entry: HistoryEntry, player_id: str) -> list[str]:
    after = (entry.rating, entry.deviation)
    if entry.adjusted is not None:
        by, reason = entry.adjusted
        lines = [f"An operator ({by}) adjusted {player_id}'s rating ({entry.match_id}): {reason}."]
        if entry.before is not None:
            lines.append(f"Before it: {entry.before[0]:.0f} (uncertainty {entry.before[1]:.0f}).")
        lines.append(f"After it: {after[0]:.0f} (uncertainty {after[1]:.0f}).")
        return lines
    if entry.refunded is not None:
        return _worded_refund(entry, player_id, entry.refunded)
    if entry.why is None:
        return [
            f"Match {entry.match_id} ({entry.outcome or 'result unknown'}) left {player_id} at "
            f"{after[0]:.0f} (uncertainty {after[1]:.0f}); this change was cached before "
            "skillstream explained changes."
        ]
    return describe(
        entry.why,
        player_id=player_id,
        match_id=entry.match_id,
        outcome=entry.outcome,
        before=entry.before,
        after=after,
    )


def _worded_refund(
    entry: HistoryEntry, player_id: str, refund: tuple[str, str, str, str]
) -> list[str]:
    by, reason, banned, ban = refund
    why = (
        f"{player_id} was banned"
        if banned == player_id
        else f"refunded: their opponent {banned} was banned"
    )
    return [
        f"Match {entry.match_id} no longer counts for {player_id}: {why} by an operator ({by},"
        f" {ban}): {reason}.",
        f"The rating stays at {entry.rating:.0f} (uncertainty {entry.deviation:.0f}), where it"
        " was before the match.",
    ]


def _refunded(value: object) -> tuple[str, str, str, str] | None:
    if value is None:
        return None
    if not (isinstance(value, list) and len(value) == 4 and all(isinstance(v, str) for v in value)):
        raise ValueError(f"'refunded': expected [by, reason, banned, ban], got {value!r}")
    by, reason, banned, ban = value
    return (by, reason, banned, ban)


def _correction(value: object, name: str) -> Correction | None:
    return None if value is None else correction_of(value, name)


def _optional_float(value: object) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"expected a number, got {value!r}")
    return float(value)


def _adjusted(value: object) -> tuple[str, str] | None:
    two = _two(value, "adjusted", "by, reason")
    return None if two is None else (str(two[0]), str(two[1]))


def _pair(value: object) -> tuple[float, float] | None:
    two = _two(value, "before", "rating, deviation")
    return None if two is None else (float(two[0]), float(two[1]))


def _two(value: object, name: str, elements: str) -> list[Any] | None:
    """``value``, a two-element list stored as field ``name`` (None: absent); ValueError naming
    the field and its ``elements`` otherwise."""
    if value is None:
        return None
    if not isinstance(value, list) or len(value) != 2:
        raise ValueError(f"{name!r} must be [{elements}], got {value!r}")
    return value
