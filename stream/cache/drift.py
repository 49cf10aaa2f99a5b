"""Where a mode's active players sit, read from the cache's boards: the figures of
stream.offline.ratingdrift for the players the current boards hold (those who played in the
season being played, within the writer's inactivity window when one is set), and the modes the
cache holds.

A board is a sorted set, so a quantile is two members read by rank. A board of at most
:data:`EXACT_UP_TO` players is read whole (the mean and quantiles exact, as the offline watch
computes them); a larger one by :data:`GRID` members at evenly spaced ranks (the middles of
equal shares of the board), whose mean stands for the board's mean (off by at most half a
point on boards of every shape tried, a heavy tail included: ``tests/unit/cache/
test_cache_drift.py``), and the quantiles still exact. Either way a reading costs a few
thousand members at most, whatever the number of players: the worker's cache feed reads it
once a minute for its metrics.

Failure: a Redis error is raised to the caller (the feed keeps its last figures). A board that
changes between the reads of one reading (a write, a season's start) gives None: read again
next time. Nothing is written.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from stream.cache.keys import KeyLayout
from stream.config.modes import Modes
from stream.offline.ratingdrift import QUANTILES, DriftPoint, Spread, spread

__all__ = [
    "EXACT_UP_TO",
    "GRID",
    "grid_ranks",
    "modes_held",
    "read_drift",
    "season_started",
    "spread_of",
]

EXACT_UP_TO = 2_000
GRID = 2_001
# At most this many modes are found by their clocks (a SCAN of the key space).
MODES_HELD = 1_000


def grid_ranks(n: int, k: int = GRID) -> list[float]:
    """``k`` positions over the ranks 0 .. ``n`` - 1, each the middle of an equal share of
    the board: their mean stands for the board's. The ends are left out on purpose: the
    board's extremes stand for one member each, not for a share (a heavy top tail moved a mean
    of end-to-end positions by 16 points where the middles' moved by 0.5)."""
    return [min(n - 1.0, max(0.0, (i + 0.5) * n / k - 0.5)) for i in range(k)]


def spread_of(n: int, at_rank: dict[int, float]) -> Spread:
    """The spread of a board of ``n`` members from the scores read at some ranks
    (``at_rank``): the whole board (exact), or :func:`grid_ranks`' ranks and each quantile's
    two (module docstring)."""
    if len(at_rank) == n:
        return spread([at_rank[i] for i in range(n)])

    def at(position: float) -> float:
        low = math.floor(position)
        high = min(low + 1, n - 1)
        return at_rank[low] + (at_rank[high] - at_rank[low]) * (position - low)

    grid = [at(p) for p in grid_ranks(n)]
    return Spread(math.fsum(grid) / len(grid), tuple(at(q * (n - 1)) for q in QUANTILES))


def _ranks_needed(n: int) -> list[int]:
    if n <= EXACT_UP_TO:
        return list(range(n))
    needed: set[int] = set()
    for position in [*grid_ranks(n), *(q * (n - 1) for q in QUANTILES)]:
        low = math.floor(position)
        needed.update((low, min(low + 1, n - 1)))
    return sorted(needed)


async def _board(redis: Any, key: str) -> Spread | None:
    """The spread of sorted set ``key`` (None: empty), in two round trips."""
    n = int(await redis.zcard(key))
    if n == 0:
        return None
    if n <= EXACT_UP_TO:
        scores = [float(s) for _, s in await redis.zrange(key, 0, -1, withscores=True)]
        # Emptied between the two reads (its last player removed): nothing to say now.
        return spread(scores) if scores else None
    ranks = _ranks_needed(n)
    async with redis.pipeline(transaction=False) as pipe:
        for rank in ranks:
            pipe.zrange(key, rank, rank, withscores=True)
        replies: Sequence[Any] = await pipe.execute()
    at_rank = {
        rank: float(reply[0][1]) for rank, reply in zip(ranks, replies, strict=True) if reply
    }
    if len(at_rank) != len(ranks):
        # The board changed size between the two round trips: read it again next time.
        return None
    return spread_of(n, at_rank)


async def read_drift(redis: Any, layout: KeyLayout, mode: str) -> DriftPoint | None:
    """``mode``'s active players now (its current boards; None: they are empty), at the
    cache's clock (the newest event time written in the mode) and season."""
    rating = await _board(redis, layout.by_rating(mode))
    points = await _board(redis, layout.by_rank_points(mode))
    if rating is None or points is None:
        return None
    clock = await redis.get(layout.clock(mode))
    season = await redis.get(layout.season(mode))
    active = int(await redis.zcard(layout.by_rating(mode)))
    return DriftPoint(
        mode,
        None if clock is None else int(clock) / 1000.0,
        active,
        rating,
        points,
        None if season is None else int(season),
    )


async def modes_held(redis: Any, layout: KeyLayout) -> set[str]:
    """The modes the cache holds (their clocks: a SCAN, at most :data:`MODES_HELD`)."""
    found: set[str] = set()
    async for key in redis.scan_iter(match=layout.clock_pattern(), count=10_000):
        mode = layout.clock_mode(key.decode() if isinstance(key, bytes) else key)
        if mode is not None:
            found.add(mode)
            if len(found) >= MODES_HELD:
                break
    return found


def season_started(modes: Modes, mode: str, season: int | None) -> float | None:
    """When ``season`` of ``mode`` started by the schedule of ``modes`` (None: the mode has no
    seasons there, ``modes`` rejects it, or the schedule has no such season: one shortened
    since the cache saw it)."""
    if season is None or not modes.accepts(mode):
        return None
    seasons = modes.get(mode).seasons
    if seasons is None:
        return None
    try:
        return seasons.start_of(season)
    except ValueError:
        return None
