"""Memory a worker's ratings table needs per player (memory store): the bytes it holds."""

from __future__ import annotations

import gc
import random
from pathlib import Path

from stream.pipeline.view import StateView
from stream.protocol import RATINGS, RECENT_MATCHES, RatingRecord, rating_key
from stream.ratings.skill import PlayerState


def _rss() -> int:
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return pages * 4096


def table_bytes_per_player(
    players: int = 200_000,
    seed: int = 1,
    *,
    learning: bool = False,
    keep: list[object] | None = None,
) -> float:
    """RSS growth per player of a ratings table filled through StateView, as the worker fills
    it: a full record (state, version, the last RECENT_MATCHES match ids) per player; with
    ``learning`` the state of a mode that learns its population (the built-in default), which
    carries its two drift slopes. ``keep``: the table is appended to it, so that a second
    measurement in the same process does not reuse its memory."""
    rng = random.Random(seed)
    gc.collect()
    before = _rss()
    table: dict[bytes, bytes] = {}
    for i in range(players):
        view = StateView(table, RATINGS)
        record = RatingRecord(
            PlayerState(
                1500 + rng.random() * 300,
                50 + rng.random() * 100,
                0.06,
                4000,
                100,
                1.78e9,
                (rng.random() - 0.5) * 40 if learning else 0.0,
                rng.random() * 4000 if learning else 0.0,
            ),
            version=100,
            recent=[f"match-{rng.randrange(10**9):012d}" for _ in range(RECENT_MATCHES)],
        )
        view.put(rating_key(f"player-{i:08d}", "ranked-1v1"), record)
        for key, value in view.changes().items():
            if value is not None:
                table[key] = value
    gc.collect()
    if keep is not None:
        keep.append(table)
    return (_rss() - before) / players
