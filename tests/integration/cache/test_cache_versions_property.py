"""Property, against a real Valkey: whatever versions of a player are written, in any order,
in any batching, sequential or concurrent, the cache ends up holding the highest one, and the
player's history lists each accepted version once, newest first."""

from __future__ import annotations

import asyncio
import itertools

from cache_support import ValkeyServer
from hypothesis import given, settings
from hypothesis import strategies as st
from redis import Redis
from redis.asyncio import Redis as AsyncRedis

from stream.cache import CachedRating, CacheWriter, KeyLayout, SyncRatingCache
from stream.config.modes import Modes

LAYOUT = KeyLayout()
MODE = "ranked"


def version_entry(player_id: str, version: int, variant: int) -> CachedRating:
    # `variant` gives duplicates of one version different values, as a buggy or replayed
    # producer might; the first one written must then stay.
    return CachedRating(
        player_id=player_id,
        mode=MODE,
        rating=1000.0 + version * 7.25 + variant / 3.0,
        deviation=300.0 / version,
        volatility=0.06 if version % 2 else None,
        rank_points=version * 13 - variant,
        games=version,
        version=version,
        updated_at_ms=1_700_000_000_000 + version,
        match_id=f"m{version}-{variant}",
    )


@st.composite
def write_histories(draw: st.DrawFn) -> tuple[list[list[CachedRating]], bool]:
    """Batches of writes for two players: random versions (with repeats), any order."""
    writes = [
        version_entry(draw(st.sampled_from(["p", "q"])), draw(st.integers(1, 12)), variant)
        for variant in range(draw(st.integers(1, 25)))
    ]
    writes = draw(st.permutations(writes))
    cuts = sorted(draw(st.lists(st.integers(0, len(writes)), max_size=6)))
    bounds = [0, *cuts, len(writes)]
    batches = [writes[a:b] for a, b in itertools.pairwise(bounds)]
    return batches, draw(st.booleans())


@settings(max_examples=50, deadline=None)
@given(history=write_histories())
def test_cache_holds_the_highest_version_written(
    valkey: ValkeyServer, history: tuple[list[list[CachedRating]], bool]
) -> None:
    batches, concurrent = history

    async def write_all() -> None:
        client = AsyncRedis.from_url(valkey.url)
        try:
            await client.flushdb()
            writer = CacheWriter(client, LAYOUT)
            if concurrent:
                # Server-side order of the batches is then up to the event loop and the pool.
                await asyncio.gather(*(writer.write(batch) for batch in batches))
            else:
                for batch in batches:
                    await writer.write(batch)
        finally:
            await client.aclose()

    asyncio.run(write_all())

    written = [entry for batch in batches for entry in batch]
    with Redis.from_url(valkey.url) as client:
        found = SyncRatingCache(client, Modes()).get_many(MODE, ["p", "q"])
        for player_id in ("p", "q"):
            versions = [e for e in written if e.player_id == player_id]
            got = found[player_id]
            if not versions:
                assert got.unknown
                assert client.zscore(LAYOUT.by_rating(MODE), player_id) is None
                continue
            top = max(e.version for e in versions)
            candidates = [e for e in versions if e.version == top]
            if not concurrent:
                # Sequentially, the first written of the highest version stays.
                assert got == candidates[0]
            else:
                assert got in candidates
            assert client.zscore(LAYOUT.by_rating(MODE), player_id) == got.rating
            assert client.zscore(LAYOUT.by_rank_points(MODE), player_id) == got.rank_points
            conservative = client.zscore(LAYOUT.by_conservative(MODE), player_id)
            assert conservative == got.rating - 3.0 * got.deviation
            listed = [h.version for h in SyncRatingCache(client, Modes()).history(MODE, player_id)]
            # Never a version twice, never one that was not written, the newest at the head.
            assert listed == sorted(set(listed), reverse=True)
            assert listed[0] == top and set(listed) <= {e.version for e in versions}
            if not concurrent:
                assert listed == accepted_versions(batches, player_id)[::-1][:20]


def accepted_versions(batches: list[list[CachedRating]], player_id: str) -> list[int]:
    """The versions the writer takes, in the order it takes them: each batch's distinct
    versions of the player above the highest one taken before."""
    taken: list[int] = []
    for batch in batches:
        for version in sorted({e.version for e in batch if e.player_id == player_id}):
            if not taken or version > taken[-1]:
                taken.append(version)
    return taken
