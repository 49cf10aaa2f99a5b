"""``void``: matches that must count as never played: by ``matches`` (ids), or every match of
``player`` that finished in [``from``, ``until``) (in ``mode`` only, when given).

A voided match is left out before anything is rated, as if it had never been played (it
neither rates nor supersedes any other match). A re-rating worker takes voids by match id only:
a window is decided by the finish time, which a worker does not know when the start arrives
(the start already holds a snapshot and may supersede the player's other matches), so it is
resolved to match ids from the retained inputs first (``skillstream corrections resolve``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from stream.corrections.effects import Effects, Kind, Resolution, Seen, Where, Window
from stream.corrections.fields import Audit, identifier, text, time_field
from stream.errors import UserError
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


def effects(void: Void, line: int, into: Effects) -> None:
    for match_id in void.matches:
        into.voided.setdefault(match_id, line)
    if void.player is not None:
        assert void.since is not None and void.until is not None
        into.windows.append(Window(void.player, void.since, void.until, void.mode, line))


def refused(void: Void, where: Where) -> str | None:
    if where.live and void.player is not None:
        return (
            f"void {void.audit.id!r} names a player and a time window; a worker takes match"
            " ids only: resolve it with `skillstream corrections resolve` first"
        )
    return None


def unmatched(void: Void, line: int, seen: Seen) -> str | None:
    if void.matches:
        missing = sorted(m for m in void.matches if m not in seen.hit_ids)
        if missing:
            shown = ", ".join(repr(m) for m in missing[:5])
            more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
            return f"void {void.audit.id!r}: match {shown}{more} is not in the history"
        if all(seen.voided[m] != line for m in void.matches):
            # A repeated record: counted once, it would read as done twice.
            first = min(seen.voided[m] for m in void.matches)
            return (
                f"void {void.audit.id!r} voids nothing more: every match it names is voided"
                f" from line {first} on"
            )
        return None
    if line in seen.window_hits:
        return None
    assert void.since is not None and void.until is not None
    where = "" if void.mode is None else f" in mode {void.mode!r}"
    return (
        f"void {void.audit.id!r} voids nothing: {void.player!r} finished no match{where} from "
        f"{format_time(void.since)} until {format_time(void.until)}"
    )


def resolved(void: Void, line: int, found: Resolution) -> Void:
    """A window void as the void of the ids of the matches it holds, keeping the record's id,
    author, time and reason (the audit trail still says who voided what and why); UserError
    for a window that could still gain matches or that holds none."""
    if void.player is None:
        return void
    assert void.until is not None
    source, newest = found.source, found.newest
    if void.until > newest:
        retained = format_time(newest) if newest > float("-inf") else "none"
        raise UserError(
            f"{source} line {line}: void {void.audit.id!r} runs until "
            f"{format_time(void.until)}, after the newest finish retained ({retained}): "
            "matches could still join it; resolve it once its window is over"
        )
    ids = found.found.get(line, frozenset())
    if not ids:
        raise UserError(
            f"{source} line {line}: void {void.audit.id!r} voids nothing: "
            f"{void.player!r} finished no match in its window"
        )
    return dataclasses.replace(void, matches=ids, player=None, since=None, until=None, mode=None)


KIND: Kind[Void] = Kind(
    "void",
    Void,
    parse,
    fields,
    FIELDS,
    effects=effects,
    refused=refused,
    unmatched=unmatched,
    resolved=resolved,
)
