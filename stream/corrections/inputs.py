"""Corrections as a re-rating worker applies them to its inputs, before anything is rated.

A worker that re-rates the retained inputs (``SKILLSTREAM_CORRECTIONS_FILE``,
docs/operations.md#correcting-the-past-live) reads every match event through this: a voided
match's start and finish are left out (the event still moves event time, as any event read
does: when a decision is taken never changes what it is), and an erased player's id is read as
their pseudonym in the event's bytes, so everything downstream (the tables, the stored
messages, rating-changed, the cache) only ever sees the pseudonym. Pure: no I/O, no clock.

What it takes, in the terms of stream.corrections.effects: match ids left out, erasures,
player changes (these the player side applies at their effective time:
stream/pipeline/players.py) and refunds (the player side decides them as it applies a result).
What a worker cannot apply its kind refuses, with the file's line (:func:`input_corrections`):
a void by player and time window, a ban's included (it is resolved to match ids from the
retained inputs first: stream/corrections/kinds/void.py), an adjustment or a ban in a mode the
modes file does not rate.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from stream.corrections.effects import PlayerChange, Refund, Where
from stream.corrections.pseudonyms import ErasedNames
from stream.corrections.records import Correction, effects_of, needs_key, refusal
from stream.errors import UserError

if TYPE_CHECKING:
    from stream.config.modes import Modes

__all__ = ["InputCorrections", "input_corrections", "load_input_corrections"]


class InputCorrections:
    """Which matches are void, which ids are erased, the adjustments and the refunds, each
    naming the player as rated (their pseudonym once erased), in the file's order (module
    docstring)."""

    def __init__(
        self,
        voided: frozenset[str] = frozenset(),
        erased: frozenset[str] = frozenset(),
        key: bytes | None = None,
        adjustments: Sequence[PlayerChange] = (),
        refunds: Sequence[Refund] = (),
    ) -> None:
        self.voided = voided
        self._names = ErasedNames(erased, key)
        self._erased = erased
        # Each with the player as rated.
        self.adjustments = tuple((self.name(a.player), a) for a in adjustments)
        self.refunds = tuple(dataclasses.replace(r, player=self.name(r.player)) for r in refunds)

    def is_void(self, match_id: str) -> bool:
        return match_id in self.voided

    def name(self, player_id: str) -> str:
        """The id ``player_id`` is rated under: its pseudonym once erased, else itself."""
        return self._names.name(player_id)

    def renamed(self, value: bytes) -> bytes:
        """The event's bytes with every erased id in ``teams``, ``parties``, ``quitters`` and
        ``stats`` read as its pseudonym; the same bytes when it names none (or is not a JSON
        object: the checks after this refuse it as they would have)."""
        if not self._erased:
            return value
        try:
            event = orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
        if not isinstance(event, dict):
            return value
        changed = False
        name = self.name
        for field in ("teams", "parties"):
            groups = event.get(field)
            if isinstance(groups, list):
                new_groups = [
                    [name(p) if isinstance(p, str) else p for p in group]
                    if isinstance(group, list)
                    else group
                    for group in groups
                ]
                if new_groups != groups:
                    event[field], changed = new_groups, True
        quitters = event.get("quitters")
        if isinstance(quitters, list):
            new_quitters = [name(p) if isinstance(p, str) else p for p in quitters]
            if new_quitters != quitters:
                event["quitters"], changed = new_quitters, True
        stats = event.get("stats")
        if isinstance(stats, dict):
            new_stats = {name(p): s for p, s in stats.items()}
            if list(new_stats) != list(stats):
                event["stats"], changed = new_stats, True
        return orjson.dumps(event) if changed else value


def input_corrections(
    corrections: Sequence[tuple[int, Correction]],
    key: bytes | None,
    source: str,
    modes: Modes | None = None,
) -> InputCorrections:
    """The corrections of a file as a worker applies them; UserError (one line naming the
    file's line) for one a worker cannot apply (its kind says: a void by player window, an
    adjustment in a mode ``modes`` does not rate; module docstring), and for erasures without
    the key."""
    where = Where(
        accepts=(lambda mode: True) if modes is None else modes.accepts,
        rated="the modes file",
        live=True,
    )
    refused = refusal(corrections, where)
    if refused is not None:
        line, why = refused
        raise UserError(f"{source} line {line}: {why}")
    effects = effects_of(corrections)
    if effects.erased and key is None:
        raise UserError(f"{source}: holds erasures; set SKILLSTREAM_PSEUDONYM_KEY")
    return InputCorrections(
        frozenset(effects.voided),
        frozenset(effects.erased),
        key,
        [c for _, c in effects.changes],
        effects.refunds,
    )


def load_input_corrections(
    path: Path | None, modes: Modes | None = None
) -> InputCorrections | None:
    """The corrections of ``SKILLSTREAM_CORRECTIONS_FILE`` (None: no file, nothing corrected);
    UserError names the file's line of the first problem."""
    if path is None:
        return None
    from stream.corrections.corrections_file import read_corrections
    from stream.corrections.pseudonyms import pseudonym_key

    corrections = read_corrections(path)
    return input_corrections(
        corrections,
        pseudonym_key() if needs_key(corrections) else None,
        f"SKILLSTREAM_CORRECTIONS_FILE {path}",
        modes,
    )
