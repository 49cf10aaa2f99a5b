"""Seed ratings kept as given: checked against the modes they start in before anything is rated.

A seed whose rating, deviation or volatility lies outside the bounds of a mode it starts in is
refused (``--seed-bounds refuse``, the default: one line naming the file, the line and the
value, exit 2) or clamped to them with a line saying so (``--seed-bounds clamp``); it is never
changed without a word. A seed without ``games`` is taken for an established player (the
experience term's settled games: stream.ratings.experience) unless ``--seed-games new`` asks
for a debutant.

A seed that names a mode is checked against it; one that names none against the mode every
match is rated as (``--mode``), or else against the default mode and every listed one. The
bounds are the mode's configured ones: a learned population may later narrow the prior below a
seed's deviation, and the engine then bounds it as it bounds every player at their next match.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Iterator, Sequence
from enum import StrEnum

from stream.config.modes import Modes
from stream.history import HistoryError, SeedRating
from stream.offline.replayer import DEFAULT_MODE
from stream.ratings.engine import initial_state
from stream.ratings.modeconfig import ModeConfig

# How many clamped seeds are named one by one before the rest are counted.
NAMED_SEEDS = 5


class SeedBounds(StrEnum):
    REFUSE = "refuse"
    CLAMP = "clamp"


class SeedGames(StrEnum):
    ESTABLISHED = "established"
    NEW = "new"


def with_games(seeds: Iterable[SeedRating], games: SeedGames) -> list[SeedRating]:
    """``seeds`` as ``--seed-games`` takes them: a seed without games stays as it is (an
    established player) or, with ``new``, gets 0 games (a debutant)."""
    if games is SeedGames.ESTABLISHED:
        return list(seeds)
    return [dataclasses.replace(s, games=0) if s.games is None else s for s in seeds]


def out_of_bounds(mode: ModeConfig, seed: SeedRating) -> str | None:
    """What of ``seed`` lies outside ``mode``'s bounds (None: nothing)."""
    fresh = initial_state(mode)
    where = f"mode {mode.name!r}"
    deviation = seed.deviation
    if deviation is not None and fresh.deviation > 0.0 and deviation > fresh.deviation:
        return f"deviation {deviation:g} is above {where}'s largest, {fresh.deviation:.6g}"
    return mode.algorithm.limits.breach(seed.rating, deviation, seed.volatility, where)


def _modes_of(seed: SeedRating, modes: Modes, override: str | None) -> Iterator[ModeConfig]:
    if seed.mode is not None:
        names: Iterable[str] = (seed.mode,)
    elif override is not None:
        names = (override,)
    else:
        names = (DEFAULT_MODE, *modes.listed)
    for name in names:
        if modes.accepts(name):
            yield modes.get(name)


def check_seeds(
    seeds: Sequence[SeedRating],
    modes: Modes,
    override: str | None,
    bounds: SeedBounds,
    source: str,
) -> list[str]:
    """Check every seed against the modes it starts in. ``refuse``: the first seed outside them
    raises :class:`HistoryError` naming ``source`` and its line. ``clamp``: one line per clamped
    seed (the first :data:`NAMED_SEEDS`, then how many more), to print; the replay's
    ``seeded_state`` holds them to the bounds."""
    notes: list[str] = []
    clamped = 0
    for seed in seeds:
        for mode in _modes_of(seed, modes, override):
            problem = out_of_bounds(mode, seed)
            if problem is None:
                continue
            if bounds is SeedBounds.REFUSE:
                raise HistoryError(
                    source, seed.line, f"{problem} (--seed-bounds clamp would clamp it)"
                )
            clamped += 1
            if clamped <= NAMED_SEEDS:
                notes.append(f"{source} line {seed.line}: {problem}: clamped to it")
            break
    if clamped > NAMED_SEEDS:
        notes.append(f"{source}: {clamped - NAMED_SEEDS} more seeds clamped to their modes' bounds")
    return notes
