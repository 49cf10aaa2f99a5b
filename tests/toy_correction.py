"""A toy kind of correction, defined in the tests only (docs/architecture.md, "What a change
touches"): ``cap`` holds a player's rating in a mode at most at ``ceiling`` as of event time
``effective``. Registered with :func:`registered`, it is read from a corrections file, applied
by replay and by a re-rating worker, and says when it did nothing, with nothing of the
project told about it."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from stream.corrections import records
from stream.corrections.effects import Effects, Kind, Seen
from stream.corrections.fields import Audit, text, time_field
from stream.events import format_time
from stream.ratings.ranges import Limits
from stream.ratings.skill import PlayerState

FIELDS = frozenset({"mode", "player", "ceiling", "effective"})


@dataclass(frozen=True, slots=True)
class Cap:
    audit: Audit
    mode: str
    player: str
    ceiling: float
    effective: float

    def changed(self, limits: Limits, state: PlayerState) -> PlayerState:
        return dataclasses.replace(
            state, rating=limits.rating_held(min(state.rating, self.ceiling))
        )

    def described(self) -> dict[str, Any]:
        return {"ceiling": self.ceiling}


def parse(obj: Mapping[str, Any], audit: Audit) -> Cap:
    ceiling = obj.get("ceiling")
    if not isinstance(ceiling, int | float) or isinstance(ceiling, bool):
        raise ValueError(f"'ceiling' must be a number, got {ceiling!r}")
    return Cap(
        audit, text(obj, "mode"), text(obj, "player"), float(ceiling), time_field(obj, "effective")
    )


def fields(cap: Cap) -> dict[str, Any]:
    return {
        "mode": cap.mode,
        "player": cap.player,
        "ceiling": cap.ceiling,
        "effective": format_time(cap.effective),
    }


def effects(cap: Cap, line: int, into: Effects) -> None:
    into.changes.append((line, cap))


def unmatched(cap: Cap, line: int, seen: Seen) -> str | None:
    if (seen.rated_as(cap.player), cap.mode) in seen.played:
        return None
    return f"cap {cap.audit.id!r} caps nobody: {cap.player!r} played no match in {cap.mode!r}"


KIND: Kind[Cap] = Kind("cap", Cap, parse, fields, FIELDS, effects=effects, unmatched=unmatched)


@contextmanager
def registered() -> Iterator[Kind[Cap]]:
    """The toy kind in the registry for the duration (what one line of records.KINDS does)."""
    records.KINDS["cap"] = KIND
    try:
        yield KIND
    finally:
        del records.KINDS["cap"]
