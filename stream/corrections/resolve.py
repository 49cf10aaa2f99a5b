"""Voids by player and time window turned into the match ids they void: pure.

A re-rating worker takes voids by match id only (stream.corrections.inputs); ``skillstream
corrections resolve`` reads the retained inputs and rewrites each window void as the ids of
the matches it holds, keeping the record's id, author, time and reason, so the audit trail
still says who voided what and why. A window that ends after the newest finish read could
still gain matches, and one that holds none voids nothing: both are refused with the record's
line, as replay refuses them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence

from stream.corrections.records import Correction, Void
from stream.errors import UserError
from stream.events import format_time

__all__ = ["FinishedMatch", "resolved"]

# match id, mode, finish time, every player of it
FinishedMatch = tuple[str, str, float, frozenset[str]]


def resolved(
    corrections: Sequence[tuple[int, Correction]],
    matches: Iterable[FinishedMatch],
    source: str,
) -> list[Correction]:
    """``corrections`` with every window void as a void of match ids (module docstring)."""
    windows = [(line, c) for line, c in corrections if isinstance(c, Void) and c.player is not None]
    found: dict[int, set[str]] = {line: set() for line, _ in windows}
    newest = float("-inf")
    for match_id, mode, at, players in matches:
        newest = max(newest, at)
        for line, void in windows:
            assert void.since is not None and void.until is not None
            if (
                void.player in players
                and void.since <= at < void.until
                and (void.mode is None or void.mode == mode)
            ):
                found[line].add(match_id)
    out: list[Correction] = []
    for line, correction in corrections:
        if isinstance(correction, Void) and correction.player is not None:
            assert correction.until is not None
            if correction.until > newest:
                raise UserError(
                    f"{source} line {line}: void {correction.audit.id!r} runs until "
                    f"{format_time(correction.until)}, after the newest finish retained "
                    f"({format_time(newest) if newest > float('-inf') else 'none'}): matches "
                    "could still join it; resolve it once its window is over"
                )
            if not found[line]:
                raise UserError(
                    f"{source} line {line}: void {correction.audit.id!r} voids nothing: "
                    f"{correction.player!r} finished no match in its window"
                )
            out.append(
                dataclasses.replace(
                    correction,
                    matches=frozenset(found[line]),
                    player=None,
                    since=None,
                    until=None,
                    mode=None,
                )
            )
            continue
        out.append(correction)
    return out
