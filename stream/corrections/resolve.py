"""Each correction as a re-rating worker takes it, resolved by its kind from the retained inputs.

A re-rating worker takes voids by match id only (stream.corrections.inputs); ``skillstream
corrections resolve`` reads the retained inputs, finds the matches each window holds and asks
each record's kind for the record a worker takes (stream/corrections/kinds/void.py rewrites a
window void as the ids of the matches it holds, keeping the record's id, author, time and
reason; a window that could still gain matches, or that holds none, is refused with the
record's line, as replay refuses them).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from stream.corrections.effects import Resolution
from stream.corrections.records import Correction, effects_of, kind_of

__all__ = ["FinishedMatch", "resolved"]

# match id, mode, finish time, every player of it
FinishedMatch = tuple[str, str, float, frozenset[str]]


def resolved(
    corrections: Sequence[tuple[int, Correction]],
    matches: Iterable[FinishedMatch],
    source: str,
) -> list[Correction]:
    """``corrections`` as a worker takes them, each resolved by its kind from the matches
    retained (module docstring); UserError names the line of one that cannot be."""
    windows = effects_of(corrections).windows
    found: dict[int, set[str]] = {window.line: set() for window in windows}
    newest = float("-inf")
    for match_id, mode, at, players in matches:
        newest = max(newest, at)
        for window in windows:
            if (
                window.player in players
                and window.since <= at < window.until
                and window.mode in (None, mode)
            ):
                found[window.line].add(match_id)
    resolution = Resolution({line: frozenset(ids) for line, ids in found.items()}, newest, source)
    return [kind_of(c).resolved(c, line, resolution) for line, c in corrections]
