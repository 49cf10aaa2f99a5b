"""Seasons, fresh boards and recent history in the cache, on a real Valkey: seasons crossed, a
past season's standings unchanged by a late event, bounded histories without duplicates on
redelivery, inactive players leaving the boards and coming back. No mocks."""

from __future__ import annotations

import asyncio
import dataclasses
import random
import subprocess
from pathlib import Path

import orjson
import pytest
from cache_support import ValkeyServer, cache_command
from redis import Redis
from redis.asyncio import Redis as AsyncRedis

from stream.cache import (
    CachedRating,
    CacheWriter,
    KeyLayout,
    RatingCache,
    SyncRatingCache,
    WriteResult,
)
from stream.cache.drift import _board, modes_held, read_drift
from stream.cache.queries import LeaderboardEntry, Seasons
from stream.config.modes import Modes, parse_modes
from stream.offline.ratingdrift import spread

LAYOUT = KeyLayout()
MODES = parse_modes({})
MODE = "ranked"
DAY_MS = 86_400_000
T0_MS = 1_767_225_600_000


def change(
    player_id: str,
    version: int,
    points: int,
    *,
    season: int | None = None,
    day: float = 0.0,
    outcome: str = "win",
) -> CachedRating:
    return CachedRating(
        player_id=player_id,
        mode=MODE,
        rating=1500.0 + points,
        deviation=100.0,
        volatility=0.06,
        rank_points=points,
        games=version,
        version=version,
        updated_at_ms=T0_MS + round(day * DAY_MS),
        match_id=f"{player_id}-m{version}",
        season=season,
        outcome=outcome,
    )


def board(entries: list[LeaderboardEntry]) -> list[tuple[str, float]]:
    return [(e.player_id, e.score) for e in entries]


async def test_a_new_season_archives_the_boards_and_starts_them_empty(aredis: AsyncRedis) -> None:
    writer = CacheWriter(aredis, LAYOUT)
    cache = RatingCache(aredis, MODES)
    await writer.write([change("a", 1, 300, season=1), change("b", 1, 200, season=1)])
    assert board(await cache.top(MODE, 10)) == [("a", 300.0), ("b", 200.0)]
    assert await cache.seasons(MODE) == Seasons(1, [])
    # The first event of season 2: season 1's boards become its final standings.
    await writer.write([change("b", 2, 50, season=2, day=40)])
    assert board(await cache.top(MODE, 10)) == [("b", 50.0)]
    assert board(await cache.top(MODE, 10, season=2)) == [("b", 50.0)]
    assert board(await cache.top(MODE, 10, season=1)) == [("a", 300.0), ("b", 200.0)]
    assert board(await cache.top(MODE, 10, board="rating", season=1)) == [
        ("a", 1800.0),
        ("b", 1700.0),
    ]
    assert await cache.seasons(MODE) == Seasons(2, [1])
    # Everyone's hash keeps their latest state, whatever board they are on.
    found = await cache.get_many(MODE, ["a", "b"])
    assert (found["a"].rank_points, found["b"].rank_points) == (300, 50)


async def test_a_late_event_of_a_past_season_leaves_its_standings_alone(
    aredis: AsyncRedis,
) -> None:
    writer = CacheWriter(aredis, LAYOUT)
    cache = RatingCache(aredis, MODES)
    await writer.write([change("a", 1, 300, season=1), change("c", 1, 100, season=1)])
    await writer.write([change("a", 2, 20, season=2, day=40)])
    final = board(await cache.top(MODE, 10, season=1))
    current = board(await cache.top(MODE, 10))
    # c's match of season 1 is rated late (after season 2 began): a newer version, season 1.
    await writer.write([change("c", 2, 900, season=1, day=29)])
    assert board(await cache.top(MODE, 10, season=1)) == final == [("a", 300.0), ("c", 100.0)]
    assert board(await cache.top(MODE, 10)) == current == [("a", 20.0)]
    assert (await cache.get_many(MODE, ["c"]))["c"].rank_points == 900
    assert [e.version for e in await cache.history(MODE, "c")] == [2, 1]


async def test_only_the_configured_number_of_past_seasons_is_kept(aredis: AsyncRedis) -> None:
    writer = CacheWriter(aredis, LAYOUT, seasons_kept=2)
    cache = RatingCache(aredis, MODES)
    for season in range(1, 6):
        await writer.write([change("a", season, 10 * season, season=season, day=30 * season)])
    assert await cache.seasons(MODE) == Seasons(5, [3, 4])
    assert await cache.top(MODE, 10, season=2) == []
    assert board(await cache.top(MODE, 10, season=3)) == [("a", 30.0)]
    keys = {k.decode() async for k in aredis.scan_iter(f"{LAYOUT.mode_base(MODE)}:season:*")}
    assert keys == {
        LAYOUT.past_board(MODE, s, b)
        for s in (3, 4)
        for b in ("rank_points", "rating", "conservative")
    }


async def test_the_history_is_bounded_newest_first_and_never_duplicated(
    aredis: AsyncRedis,
) -> None:
    writer = CacheWriter(aredis, LAYOUT, history_length=3)
    cache = RatingCache(aredis, MODES)
    # Two versions in one batch both reach the history, in order, though only the newest is
    # the hash's.
    await writer.write([change("a", 2, 20, outcome="loss"), change("a", 1, 10)])
    await writer.write([change("a", 3, 30)])
    # Redelivered: the same versions again, alone and in a batch with a new one.
    await writer.write([change("a", 3, 30)])
    await writer.write([change("a", 2, 20), change("a", 3, 30), change("a", 4, 40)])
    history = await cache.history(MODE, "a", 10)
    assert [(e.version, e.rank_points, e.match_id) for e in history] == [
        (4, 40, "a-m4"),
        (3, 30, "a-m3"),
        (2, 20, "a-m2"),
    ]
    assert history[2].outcome == "loss" and history[0].at_ms == T0_MS
    assert [e.version for e in await cache.history(MODE, "a", 2)] == [4, 3]
    assert await cache.history(MODE, "nobody") == []


async def test_an_inactive_player_leaves_the_boards_keeps_the_rating_and_comes_back(
    aredis: AsyncRedis,
) -> None:
    writer = CacheWriter(aredis, LAYOUT, inactive_seconds=30 * 86_400.0)
    cache = RatingCache(aredis, MODES)
    await writer.write([change("a", 1, 300, day=0), change("b", 1, 200, day=10)])
    # 35 days after a's match in event time (the mode's newest event): a leaves, b stays.
    await writer.write([change("c", 1, 100, day=35)])
    assert board(await cache.top(MODE, 10)) == [("b", 200.0), ("c", 100.0)]
    assert (await cache.get_many(MODE, ["a"]))["a"].rank_points == 300
    assert await cache.around(MODE, "a", 2) == []
    # a's next match brings a back.
    await writer.write([change("a", 2, 310, day=36)])
    assert board(await cache.top(MODE, 10)) == [("a", 310.0), ("b", 200.0), ("c", 100.0)]
    # A late event never turns the clock back.
    await writer.write([change("d", 1, 50, day=1)])
    assert "d" not in {e.player_id for e in await cache.top(MODE, 10)}


def test_the_sync_client_reads_seasons_and_history_as_the_async_one(
    sredis: Redis, valkey: ValkeyServer
) -> None:
    async def fill() -> None:
        client = AsyncRedis.from_url(valkey.url)
        try:
            writer = CacheWriter(client, LAYOUT)
            await writer.write([change("a", 1, 5, season=1), change("a", 2, 7, season=2)])
        finally:
            await client.aclose()

    asyncio.run(fill())
    cache = SyncRatingCache(sredis, MODES)
    assert cache.seasons(MODE) == Seasons(2, [1])
    assert [e.version for e in cache.history(MODE, "a")] == [2, 1]
    assert board(cache.top(MODE, 5, season=1)) == [("a", 5.0)]
    assert board(cache.around(MODE, "a", 1, season=2)) == [("a", 7.0)]


async def two_seasons(url: str) -> None:
    """a and b in season 1, then a alone in season 2, forty days later."""
    client = AsyncRedis.from_url(url)
    try:
        await CacheWriter(client, LAYOUT).write(
            [change("a", 1, 5, season=1), change("b", 1, 9, season=1)]
        )
        await CacheWriter(client, LAYOUT).write([change("a", 2, 7, season=2, day=40)])
    finally:
        await client.aclose()


def test_the_commands_show_a_past_season_and_a_history(
    sredis: Redis, valkey: ValkeyServer, tmp_path: Path
) -> None:
    asyncio.run(two_seasons(valkey.url))

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return cache_command(valkey.url, *args)

    past = run("leaderboard", MODE, "--season", "1", "--json")
    assert past.returncode == 0, past.stderr
    assert past.stdout.splitlines() == [
        '{"rank":1,"player_id":"b","score":9.0}',
        '{"rank":2,"player_id":"a","score":5.0}',
    ]
    history = run("ratings", "history", MODE, "a", "--last", "1")
    assert history.returncode == 0, history.stderr
    assert history.stdout.startswith('{"player_id":"a","mode":"ranked","version":2,')
    assert len(history.stdout.splitlines()) == 1
    bad = run("leaderboard", MODE, "--season", "-1")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1


# Season 1 from T0, season 2 thirty days later, and so on: the grace counts from those starts.
MONTHLY = parse_modes({"default": {"seasons": {"starts": ["2026-01-01"], "period_days": 30}}})
MINUTE_DAYS = 60 / 86_400


async def crossed_into_season_2(
    client: AsyncRedis, modes: Modes | None = MONTHLY, grace: float = 600.0
) -> tuple[CacheWriter, RatingCache]:
    """A writer with this schedule and grace (a reader beside it) has put a and c on season 1's
    boards, then a's first match of season 2, 5 minutes past its start."""
    writer = CacheWriter(client, LAYOUT, modes=modes, season_grace_seconds=grace)
    await writer.write([change("a", 1, 300, season=1, day=1), change("c", 1, 100, season=1, day=2)])
    await writer.write([change("a", 2, 20, season=2, day=30 + 5 * MINUTE_DAYS)])
    return writer, RatingCache(client, MODES)


async def test_a_late_event_within_the_grace_reaches_the_final_standings(
    aredis: AsyncRedis,
) -> None:
    writer, cache = await crossed_into_season_2(aredis)
    # c's last match of season 1, a second before the boundary, arrives 5 minutes (event time)
    # into season 2: within the 10 minutes' grace, so season 1's standings take it.
    late = change("c", 2, 900, season=1, day=30 - 1 / 86_400)
    assert await writer.write([late]) == WriteResult(applied=1, stale=0)
    assert board(await cache.top(MODE, 10, season=1)) == [("c", 900.0), ("a", 300.0)]
    assert board(await cache.top(MODE, 10, board="rating", season=1)) == [
        ("c", 2400.0),
        ("a", 1800.0),
    ]
    conservative = board(await cache.top(MODE, 10, board="conservative", season=1))
    assert conservative == [("c", 2100.0), ("a", 1500.0)]
    # Never on the current boards, and the player's state is the late event's.
    assert board(await cache.top(MODE, 10)) == [("a", 20.0)]
    assert await cache.seasons(MODE) == Seasons(2, [1])
    assert (await cache.get_many(MODE, ["c"]))["c"].rank_points == 900
    assert [e.version for e in await cache.history(MODE, "c")] == [2, 1]
    # Redelivered (alone, or with an older version of c), within the grace and after it:
    # nothing changes.
    for minutes in (6, 20):
        await writer.write([change("b", minutes, 40, season=2, day=30 + minutes * MINUTE_DAYS)])
        before = await everything(aredis)
        assert LAYOUT.past_board(MODE, 1, "rank_points").encode() in before
        again = await writer.write([late, change("c", 1, 100, season=1, day=2)])
        assert again == WriteResult(applied=0, stale=2)
        assert await everything(aredis) == before
    assert board(await cache.top(MODE, 10, season=1)) == [("c", 900.0), ("a", 300.0)]


async def test_a_late_event_after_the_grace_leaves_the_final_standings_alone(
    aredis: AsyncRedis,
) -> None:
    writer, cache = await crossed_into_season_2(aredis)
    # The mode's newest event is now 10 minutes past season 2's start: the grace is over.
    await writer.write([change("b", 1, 40, season=2, day=30 + 10 * MINUTE_DAYS)])
    await writer.write([change("c", 2, 900, season=1, day=30 - 1 / 86_400)])
    assert board(await cache.top(MODE, 10, season=1)) == [("a", 300.0), ("c", 100.0)]
    assert board(await cache.top(MODE, 10)) == [("b", 40.0), ("a", 20.0)]
    assert (await cache.get_many(MODE, ["c"]))["c"].rank_points == 900


async def test_no_grace_keeps_the_standings_final_at_the_next_seasons_first_event(
    aredis: AsyncRedis,
) -> None:
    # A grace of 0, and a writer with no schedule to count one from.
    for modes, grace in ((MONTHLY, 0.0), (None, 600.0)):
        await aredis.flushdb()
        writer, cache = await crossed_into_season_2(aredis, modes, grace)
        await writer.write([change("c", 2, 900, season=1, day=30 - 1 / 86_400)])
        assert board(await cache.top(MODE, 10, season=1)) == [("a", 300.0), ("c", 100.0)]


async def test_only_the_season_just_ended_has_a_grace(aredis: AsyncRedis) -> None:
    # Seasons of a minute each: season 3 starts while season 2's grace still runs.
    minutely = parse_modes(
        {"default": {"seasons": {"starts": ["2026-01-01"], "period_days": MINUTE_DAYS}}}
    )
    writer = CacheWriter(aredis, LAYOUT, modes=minutely, season_grace_seconds=600.0)
    cache = RatingCache(aredis, MODES)
    await writer.write([change("a", 1, 300, season=1, day=0)])
    await writer.write([change("b", 1, 200, season=2, day=1.5 * MINUTE_DAYS)])
    await writer.write([change("a", 2, 20, season=3, day=2.5 * MINUTE_DAYS)])
    # Season 1 is two seasons back: late as ever, though the clock is within start(2) + grace.
    await writer.write([change("c", 1, 100, season=1, day=0.5 * MINUTE_DAYS)])
    assert board(await cache.top(MODE, 10, season=1)) == [("a", 300.0)]
    # Season 2, the one just ended, takes its late event.
    await writer.write([change("d", 1, 50, season=2, day=1.9 * MINUTE_DAYS)])
    assert board(await cache.top(MODE, 10, season=2)) == [("b", 200.0), ("d", 50.0)]


async def everything(client: AsyncRedis) -> dict[bytes, object]:
    """Every key in the database with its content, to compare before and after a write."""
    found: dict[bytes, object] = {}
    async for key in client.scan_iter():
        kind = await client.type(key)
        if kind == b"zset":
            found[key] = await client.zrange(key, 0, -1, withscores=True)
        elif kind == b"hash":
            found[key] = await client.hgetall(key)
        elif kind == b"list":
            found[key] = await client.lrange(key, 0, -1)
        else:
            found[key] = await client.get(key)
    return found


class Renamed(KeyLayout):
    """Another key layout, defined here only: boards and past seasons named otherwise."""

    def by_rating(self, mode: str) -> str:
        return f"{self.mode_base(mode)}:skill"

    def by_rank_points(self, mode: str) -> str:
        return f"{self.mode_base(mode)}:points"

    def by_conservative(self, mode: str) -> str:
        return f"{self.mode_base(mode)}:safe"

    def past_boards(self, mode: str) -> tuple[str, tuple[str, str, str]]:
        return f"{self.mode_base(mode)}:s", (":skill", ":points", ":safe")


async def test_the_key_layout_is_written_in_one_place(aredis: AsyncRedis) -> None:
    # docs/architecture.md, "What a change touches": the writer's scripts and the readers take
    # every key name from the layout, past seasons' standings too.
    layout = Renamed("other")
    writer = CacheWriter(aredis, layout, seasons_kept=1)
    cache = RatingCache(aredis, MODES, layout)
    await writer.write([change("a", 1, 300, season=1), change("b", 1, 200, season=1)])
    await writer.write([change("b", 2, 50, season=2, day=40)])
    await writer.write([change("a", 2, 60, season=3, day=80)])
    assert board(await cache.top(MODE, 10)) == [("a", 60.0)]
    assert board(await cache.top(MODE, 10, season=2)) == [("b", 50.0)]
    assert await cache.top(MODE, 10, season=1) == []  # one past season kept
    await writer.remove([(MODE, "b", 3)])
    assert await cache.top(MODE, 10, season=2) == []
    base = layout.mode_base(MODE)
    keys = {k.decode() async for k in aredis.scan_iter("other:*")}
    assert keys == {
        f"{base}:{name}" for name in ("skill", "points", "safe", "by-last-played", "season")
    } | {f"{base}:seasons", f"{base}:clock", f"{base}:player:a", f"{base}:history:a"}


def test_ratings_drift_reads_each_kept_season_and_the_current_one(
    sredis: Redis, valkey: ValkeyServer, tmp_path: Path
) -> None:
    asyncio.run(two_seasons(valkey.url))
    drift = cache_command(valkey.url, "ratings", "drift", MODE)
    assert drift.returncode == 0, drift.stderr
    first, now = (orjson.loads(line) for line in drift.stdout.splitlines())
    # Season 1's final standings (a and b), then season 2's board (a alone), at the clock.
    assert (first["season"], first["active"], now["season"], now["active"]) == (1, 2, 2, 1)
    assert first["rating"]["mean"] == 1507.0 and first["rank_points"]["p50"] == 7.0
    assert now["rating"] == spread([1507.0]).to_json()
    assert now["at"] == "2026-02-10T00:00:00.000Z" and first["at"] is None
    plot = tmp_path / "drift.png"
    drawn = cache_command(valkey.url, "ratings", "drift", MODE, "--plot", str(plot))
    assert drawn.returncode == 0 and plot.read_bytes().startswith(b"\x89PNG"), drawn.stderr
    # A mode the cache holds nothing of, a replay's option: one line each, exit 2.
    typo = cache_command(valkey.url, "ratings", "drift", "rankd")
    assert typo.returncode == 2 and "did you mean 'ranked'?" in typo.stderr
    assert typo.stderr.count("\n") == 1
    days = cache_command(valkey.url, "ratings", "drift", MODE, "--every-days", "3")
    assert days.returncode == 2 and "--every-days is for a replayed history" in days.stderr


async def test_the_feeds_drift_figures_are_the_boards_read_at_ranks(aredis: AsyncRedis) -> None:
    # 12,000 players in season 1 (more than a board read whole), 300 of them on in season 2.
    rng = random.Random(3)
    writer = CacheWriter(aredis, LAYOUT)
    first = [change(f"p{i}", 1, rng.randrange(0, 5000), season=1) for i in range(12_000)]
    first = [dataclasses.replace(c, rating=rng.gauss(1500, 300)) for c in first]
    await writer.write(first)
    await writer.write([change(f"p{i}", 2, 100 + i, season=2, day=40) for i in range(300)])
    # Season 1's final standings, read at ranks as the current boards are when as large.
    past = (LAYOUT.past_board(MODE, 1, "rating"), LAYOUT.past_board(MODE, 1, "rank_points"))
    standings = await _board(aredis, past[0])
    exact = spread([c.rating for c in first])
    assert standings is not None
    assert standings.quantiles == pytest.approx(exact.quantiles, abs=1e-9)
    assert abs(standings.mean - exact.mean) < 0.5
    assert await modes_held(aredis, LAYOUT) == {MODE}
    now = await read_drift(aredis, LAYOUT, MODE)
    assert now is not None and (now.active, now.season) == (300, 2)
    assert now.at == (T0_MS + 40 * DAY_MS) / 1000
    # Read whole: exactly the offline figures.
    assert now.rating == spread([1500.0 + 100 + i for i in range(300)])
    assert now.rank_points == spread([100.0 + i for i in range(300)])
    assert await read_drift(aredis, LAYOUT, "empty") is None
