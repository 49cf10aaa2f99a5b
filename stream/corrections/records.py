"""An operator's corrections of the past: what each one says, and its JSON form.

Every correction is an audit record: ``id`` (unique), ``by`` (who), ``at`` (when it was made,
wall time), ``reason`` (why) and what it does:

- ``void``: matches that must count as never played: by ``matches`` (ids), or every match of
  ``player`` that finished in [``from``, ``until``) (in ``mode`` only, when given);
- ``adjust``: ``player``'s rating in ``mode`` ``set`` to a value or ``shift``-ed by one, as of
  event time ``effective`` (their matches before it are rated first, those after it from the
  adjusted rating);
- ``erase``: a player forgotten: every occurrence of their id in the inputs is read as
  ``pseudonym`` (stream.corrections.pseudonyms), so their opponents' ratings stay as they are
  and no output names them. The record holds only the pseudonym, never the id, and the
  fingerprint of the key it was made with (``key``: never the key itself), so an erasure
  applied with another key is refused instead of erasing nobody;
- ``rerate``: a re-rated ``generation`` took over rating-changed (``skillstream corrections
  cutover``), from the deployment ``group`` through its output topic ``shadow``. A record of
  what was done, not an instruction: what it applied are the corrections before it and the
  re-rating deployment's modes file, so replay passes over it.

An adjust or an erase that matches no player of the history it is applied to is refused
(stream.corrections.ledger), unless it says it may (``may_match_nothing``: a player of another
deployment or history, deliberately).

The same records are the lines of a corrections file (``skillstream replay --corrections``) and
the values of the audit topic, so a correction is applied identically wherever it is read.
Pure: parsing checks every field and raises ValueError with the field's name.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from stream.events import describe_value, format_time, parse_time
from stream.ratings.ranges import MAX_ABS_RATING

__all__ = [
    "Adjust",
    "Audit",
    "Correction",
    "Erase",
    "Rerate",
    "Void",
    "correction_json",
    "parse_correction",
]

# A reason is for people: a sentence or two. Ids are at most the events' own limit.
MAX_REASON = 500
MAX_ID = 128
MAX_VOIDED_IDS = 100_000
# Beyond this no rating scale goes (a unit or export mistake): the seeds' bound.
MAX_RATING = MAX_ABS_RATING


@dataclass(frozen=True, slots=True)
class Audit:
    """Who made a correction, when (epoch seconds, wall time) and why."""

    id: str
    by: str
    at: float
    reason: str


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


@dataclass(frozen=True, slots=True)
class Adjust:
    """``player``'s rating in ``mode`` set to ``value`` (``shift`` False) or moved by it, as of
    event time ``effective``."""

    audit: Audit
    mode: str
    player: str
    value: float
    shift: bool
    effective: float
    may_match_nothing: bool = False


@dataclass(frozen=True, slots=True)
class Erase:
    """A forgotten player, known here only by their ``pseudonym``; ``key``: the fingerprint
    of the pseudonym key it was made with (None: a record from before fingerprints)."""

    audit: Audit
    pseudonym: str
    key: str | None = None
    may_match_nothing: bool = False


@dataclass(frozen=True, slots=True)
class Rerate:
    """A re-rated ``generation`` took over from deployment ``group`` via topic ``shadow``."""

    audit: Audit
    generation: int
    group: str
    shadow: str


Correction = Void | Adjust | Erase | Rerate


def parse_correction(obj: object) -> Correction:
    """One correction from its JSON object; ValueError names the first field that is wrong."""
    if not isinstance(obj, Mapping):
        raise ValueError(f"a correction must be a JSON object, got {describe_value(obj)}")
    audit = Audit(
        id=_text(obj, "id"),
        by=_text(obj, "by"),
        at=_time(obj, "at"),
        reason=_text(obj, "reason", MAX_REASON),
    )
    kind = obj.get("kind")
    if kind == "void":
        return _void(obj, audit)
    if kind == "adjust":
        return _adjust(obj, audit)
    if kind == "erase":
        known = {"id", "kind", "by", "at", "reason", "pseudonym", "key", "may_match_nothing"}
        extra = sorted(set(obj) - known)
        if extra:
            # An erase record that also names the player would keep what it erases.
            raise ValueError(f"an erase holds only its pseudonym; unexpected: {', '.join(extra)}")
        key = None if obj.get("key") is None else _text(obj, "key")
        return Erase(audit, _text(obj, "pseudonym"), key, _flag(obj, "may_match_nothing"))
    if kind == "rerate":
        generation = obj.get("generation")
        if isinstance(generation, bool) or not isinstance(generation, int) or generation < 2:
            raise ValueError(f"'generation' must be an integer of 2 or more, got {generation!r}")
        return Rerate(audit, generation, _text(obj, "group"), _text(obj, "shadow"))
    raise ValueError(f"'kind' must be void, adjust, erase or rerate, got {describe_value(kind)}")


def correction_json(correction: Correction) -> dict[str, Any]:
    """The JSON object of ``correction`` (what :func:`parse_correction` reads back)."""
    audit = correction.audit
    out: dict[str, Any] = {"id": audit.id}
    if isinstance(correction, Void):
        out["kind"] = "void"
    elif isinstance(correction, Adjust):
        out["kind"] = "adjust"
    elif isinstance(correction, Rerate):
        out["kind"] = "rerate"
    else:
        out["kind"] = "erase"
    out.update(by=audit.by, at=format_time(audit.at), reason=audit.reason)
    if isinstance(correction, Void):
        if correction.matches:
            out["matches"] = sorted(correction.matches)
        else:
            assert correction.since is not None and correction.until is not None
            out.update(
                player=correction.player,
                **{"from": format_time(correction.since), "until": format_time(correction.until)},
            )
            if correction.mode is not None:
                out["mode"] = correction.mode
    elif isinstance(correction, Adjust):
        out.update(mode=correction.mode, player=correction.player)
        out["shift" if correction.shift else "set"] = correction.value
        out["effective"] = format_time(correction.effective)
        if correction.may_match_nothing:
            out["may_match_nothing"] = True
    elif isinstance(correction, Rerate):
        out.update(generation=correction.generation, group=correction.group)
        out["shadow"] = correction.shadow
    else:
        out["pseudonym"] = correction.pseudonym
        if correction.key is not None:
            out["key"] = correction.key
        if correction.may_match_nothing:
            out["may_match_nothing"] = True
    return out


def _void(obj: Mapping[str, Any], audit: Audit) -> Void:
    matches = obj.get("matches")
    player = obj.get("player")
    if matches is not None and player is not None:
        raise ValueError("a void names 'matches' or a 'player' with 'from' and 'until', not both")
    if matches is not None:
        if not isinstance(matches, list) or not matches or len(matches) > MAX_VOIDED_IDS:
            raise ValueError(
                f"'matches' must be a list of 1 to {MAX_VOIDED_IDS:,} match ids, got "
                f"{describe_value(matches)}"
            )
        ids = frozenset(_id(m, "matches[]") for m in matches)
        return Void(audit, matches=ids)
    if player is None:
        raise ValueError("a void names 'matches' (a list of ids) or a 'player' with a window")
    since, until = _time(obj, "from"), _time(obj, "until")
    if not since < until:
        raise ValueError(f"'from' must be before 'until' ({format_time(since)} is not)")
    mode = None if obj.get("mode") is None else _text(obj, "mode")
    return Void(audit, player=_text(obj, "player"), since=since, until=until, mode=mode)


def _adjust(obj: Mapping[str, Any], audit: Audit) -> Adjust:
    has_set, has_shift = "set" in obj, "shift" in obj
    if has_set == has_shift:
        raise ValueError("an adjust has exactly one of 'set' (a rating) and 'shift' (points)")
    name = "set" if has_set else "shift"
    value = obj[name]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"'{name}' must be a number, got {describe_value(value)}")
    if not (math.isfinite(value) and abs(value) <= MAX_RATING):
        raise ValueError(f"'{name}' must be a finite number within +-{MAX_RATING:g}")
    return Adjust(
        audit,
        mode=_text(obj, "mode"),
        player=_text(obj, "player"),
        value=float(value),
        shift=has_shift,
        effective=_time(obj, "effective"),
        may_match_nothing=_flag(obj, "may_match_nothing"),
    )


def _flag(obj: Mapping[str, Any], name: str) -> bool:
    value = obj.get(name, False)
    if not isinstance(value, bool):
        raise ValueError(f"'{name}' must be true or false, got {describe_value(value)}")
    return value


def _text(obj: Mapping[str, Any], name: str, longest: int = MAX_ID) -> str:
    if name not in obj:
        raise ValueError(f"missing '{name}'")
    return _id(obj[name], name, longest)


def _id(value: object, name: str, longest: int = MAX_ID) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > longest:
        raise ValueError(
            f"'{name}' must be a string of 1 to {longest} characters, got {describe_value(value)}"
        )
    return value


def _time(obj: Mapping[str, Any], name: str) -> float:
    if name not in obj:
        raise ValueError(f"missing '{name}'")
    try:
        return parse_time(obj[name])
    except ValueError as exc:
        raise ValueError(f"'{name}': {exc}") from None
