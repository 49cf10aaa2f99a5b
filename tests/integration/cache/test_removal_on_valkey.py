"""A re-rate's removal of a player left without a rating (stream/corrections/handover.py), on
a real Valkey: the player's hash, history and places on the current boards go, unless the cache
already holds a change at or above the removal's version; others stay; removing twice is
removing once."""

from __future__ import annotations

from cache_support import rating_change
from redis.asyncio import Redis as AsyncRedis

from stream.cache import CachedRating, CacheWriter, KeyLayout

LAYOUT = KeyLayout()


def entry(player: str, version: int) -> CachedRating:
    return CachedRating.from_rating_changed(rating_change(player, version))


async def test_a_removal_takes_the_player_off_and_leaves_the_others(aredis: AsyncRedis) -> None:
    writer = CacheWriter(aredis, LAYOUT)
    await writer.write([entry("gone", 1), entry("gone", 2), entry("kept", 1)])
    mode = entry("gone", 1).mode
    boards = LAYOUT.mode_keys(mode)[:4]
    assert await aredis.zscore(boards[0], "gone") is not None
    assert await writer.remove([(mode, "gone", 3)]) == 1
    hash_key, history = LAYOUT.player_keys(mode, "gone")
    assert not await aredis.exists(hash_key, history)
    for board in boards:
        assert await aredis.zscore(board, "gone") is None
    assert await aredis.zscore(boards[0], "kept") is not None
    assert await writer.remove([(mode, "gone", 3)]) == 1  # nothing left: the same end state
    assert not await aredis.exists(hash_key, history)


async def test_a_removal_below_the_cached_version_changes_nothing(aredis: AsyncRedis) -> None:
    writer = CacheWriter(aredis, LAYOUT)
    await writer.write([entry("back", 5)])
    mode = entry("back", 5).mode
    assert await writer.remove([(mode, "back", 4)]) == 0
    assert await writer.remove([(mode, "back", 5)]) == 0
    assert await aredis.exists(LAYOUT.player_keys(mode, "back")[0])


async def test_a_removal_takes_the_player_off_past_seasons_standings(aredis: AsyncRedis) -> None:
    writer = CacheWriter(aredis, LAYOUT)
    await writer.write([entry("gone", 1), entry("kept", 1)])
    mode = entry("gone", 1).mode
    seasons = LAYOUT.mode_keys(mode)[5]
    past = f"{LAYOUT.mode_base(mode)}:season:3:by-rating"
    # An archived season, as the writer's script leaves one at a season's end.
    await aredis.zadd(seasons, {"3": 3})
    await aredis.zadd(past, {"gone": 1500.0, "kept": 1400.0})
    assert await writer.remove([(mode, "gone", 2)]) == 1
    assert await aredis.zscore(past, "gone") is None
    assert await aredis.zscore(past, "kept") == 1400.0


def test_a_removal_with_an_id_the_cache_refuses_is_refused_before_any_write() -> None:
    """The feed dead-letters it (a ValueError there) instead of failing in the Redis write."""
    import pytest

    from stream.cache.feed import _removal

    event = {"mode": "1v1", "player_id": "x" * 5000, "version": 3, "retracted": [], "removed": True}
    with pytest.raises(ValueError, match="player_id"):
        _removal(event)
    assert _removal({**event, "player_id": "p1"}) == ("1v1", "p1", 3)
