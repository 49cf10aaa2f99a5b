"""What every correction record shares: its audit (who, when, why, under which id) and the
readers of its fields, each raising ValueError with the field's name. Pure."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from stream.events import describe_value, parse_time
from stream.ratings.ranges import MAX_ABS_RATING

# A reason is for people: a sentence or two. Ids are at most the events' own limit.
MAX_REASON = 500
MAX_ID = 128
# The fields every correction record has, whatever its kind.
AUDIT_FIELDS = frozenset({"id", "kind", "by", "at", "reason"})
# Beyond this no rating scale goes (a unit or export mistake): the seeds' bound.
MAX_RATING = MAX_ABS_RATING


@dataclass(frozen=True, slots=True)
class Audit:
    """Who made a correction, when (epoch seconds, wall time) and why."""

    id: str
    by: str
    at: float
    reason: str


def audit_of(obj: Mapping[str, Any]) -> Audit:
    """The audit fields of a correction's JSON object."""
    return Audit(
        id=text(obj, "id"),
        by=text(obj, "by"),
        at=time_field(obj, "at"),
        reason=text(obj, "reason", MAX_REASON),
    )


def flag(obj: Mapping[str, Any], name: str) -> bool:
    value = obj.get(name, False)
    if not isinstance(value, bool):
        raise ValueError(f"'{name}' must be true or false, got {describe_value(value)}")
    return value


def text(obj: Mapping[str, Any], name: str, longest: int = MAX_ID) -> str:
    if name not in obj:
        raise ValueError(f"missing '{name}'")
    return identifier(obj[name], name, longest)


def identifier(value: object, name: str, longest: int = MAX_ID) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > longest:
        raise ValueError(
            f"'{name}' must be a string of 1 to {longest} characters, got {describe_value(value)}"
        )
    return value


def time_field(obj: Mapping[str, Any], name: str) -> float:
    if name not in obj:
        raise ValueError(f"missing '{name}'")
    try:
        return parse_time(obj[name])
    except ValueError as exc:
        raise ValueError(f"'{name}': {exc}") from None
