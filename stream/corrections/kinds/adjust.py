"""``adjust``: ``player``'s rating in ``mode`` ``set`` to a value or ``shift``-ed by one, as of
event time ``effective`` (their matches before it are rated first, those after it from the
adjusted rating). ``set`` replaces the rating, ``shift`` adds to it (held to the algorithm's
limits); the deviation, games and Rank Points stay: an adjustment is not a match, so it adds no
game and does not restart inactivity. A player change (stream.corrections.effects)."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from stream.corrections.effects import Effects, Kind, Seen, Where
from stream.corrections.fields import MAX_RATING, Audit, flag, text, time_field
from stream.errors import did_you_mean
from stream.events import describe_value, format_time
from stream.ratings.ranges import Limits
from stream.ratings.skill import PlayerState

# The fields of its JSON besides the audit's.
FIELDS = frozenset({"mode", "player", "set", "shift", "effective", "may_match_nothing"})


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

    def changed(self, limits: Limits, state: PlayerState) -> PlayerState:
        rating = state.rating + self.value if self.shift else self.value
        return dataclasses.replace(state, rating=limits.rating_held(rating))

    def described(self) -> dict[str, Any]:
        return {("shift" if self.shift else "set"): self.value}


def parse(obj: Mapping[str, Any], audit: Audit) -> Adjust:
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
        mode=text(obj, "mode"),
        player=text(obj, "player"),
        value=float(value),
        shift=has_shift,
        effective=time_field(obj, "effective"),
        may_match_nothing=flag(obj, "may_match_nothing"),
    )


def fields(adjust: Adjust) -> dict[str, Any]:
    out: dict[str, Any] = {"mode": adjust.mode, "player": adjust.player}
    out["shift" if adjust.shift else "set"] = adjust.value
    out["effective"] = format_time(adjust.effective)
    if adjust.may_match_nothing:
        out["may_match_nothing"] = True
    return out


def effects(adjust: Adjust, line: int, into: Effects) -> None:
    into.changes.append((line, adjust))


def refused(adjust: Adjust, where: Where) -> str | None:
    if where.accepts(adjust.mode):
        return None
    return f"adjust {adjust.audit.id!r}: mode {adjust.mode!r} is not in {where.rated}"


def unmatched(adjust: Adjust, line: int, seen: Seen) -> str | None:
    if adjust.may_match_nothing or (seen.rated_as(adjust.player), adjust.mode) in seen.played:
        return None
    if adjust.mode not in seen.modes:
        return (
            f"adjust {adjust.audit.id!r} adjusts nobody: no match of the history is in mode"
            f" {adjust.mode!r}{did_you_mean(adjust.mode, seen.modes)}"
        )
    return (
        f"adjust {adjust.audit.id!r} adjusts nobody: {adjust.player!r} played no match in mode"
        f" {adjust.mode!r} (a typo would start a new player); one who is to start adjusted:"
        ' "may_match_nothing": true'
    )


KIND: Kind[Adjust] = Kind(
    "adjust", Adjust, parse, fields, FIELDS, effects=effects, refused=refused, unmatched=unmatched
)
