"""``adjust``: ``player``'s rating in ``mode`` ``set`` to a value or ``shift``-ed by one, as of
event time ``effective`` (their matches before it are rated first, those after it from the
adjusted rating)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from stream.corrections.fields import MAX_RATING, Audit, flag, text, time_field
from stream.events import describe_value, format_time

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
