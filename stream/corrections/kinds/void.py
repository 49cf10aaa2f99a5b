"""``void``: matches that must count as never played: by ``matches`` (ids), or every match of
``player`` that finished in [``from``, ``until``) (in ``mode`` only, when given)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from stream.corrections.fields import Audit, identifier, text, time_field
from stream.events import describe_value, format_time

MAX_VOIDED_IDS = 100_000


# The fields of its JSON besides the audit's.
FIELDS = frozenset({"matches", "player", "from", "until", "mode"})


@dataclass(frozen=True, slots=True)
class Void:
    """Matches that count as never played: ``matches`` by id, or ``player``'s matches that
    finished in [``since``, ``until``), in ``mode`` only when it is not None."""

    audit: Audit
    matches: frozenset[str] = frozenset()
    player: str | None = None
    since: float | None = None
    until: float | None = None
    mode: str | None = None


def parse(obj: Mapping[str, Any], audit: Audit) -> Void:
    matches = obj.get("matches")
    player = obj.get("player")
    if matches is not None and player is not None:
        raise ValueError("a void names 'matches' or a 'player' with 'from' and 'until', not both")
    if matches is not None:
        if not isinstance(matches, list) or not matches or len(matches) > MAX_VOIDED_IDS:
            got = "an empty list" if matches == [] else describe_value(matches)
            raise ValueError(
                f"'matches' must be a list of 1 to {MAX_VOIDED_IDS:,} match ids, got {got}"
            )
        ids = frozenset(identifier(m, "matches[]") for m in matches)
        return Void(audit, matches=ids)
    if player is None:
        raise ValueError("a void names 'matches' (a list of ids) or a 'player' with a window")
    since, until = time_field(obj, "from"), time_field(obj, "until")
    if not since < until:
        raise ValueError(f"'from' must be before 'until' ({format_time(since)} is not)")
    mode = None if obj.get("mode") is None else text(obj, "mode")
    return Void(audit, player=text(obj, "player"), since=since, until=until, mode=mode)


def fields(void: Void) -> dict[str, Any]:
    if void.matches:
        return {"matches": sorted(void.matches)}
    assert void.since is not None and void.until is not None
    out: dict[str, Any] = {
        "player": void.player,
        "from": format_time(void.since),
        "until": format_time(void.until),
    }
    if void.mode is not None:
        out["mode"] = void.mode
    return out
