"""The corrected past, as the cache shows it after a re-rate's cut-over, on a real Valkey: a
corrected change takes the place of the one it replaces (each match once, where its time puts
it, with the rating it replaced), a voided match leaves the history and `ratings explain`
refuses it with one line, a correction is worded with who, why and what it replaced, and a
later generation that counts the match again undoes the mark (issue 45). No mocks."""

from __future__ import annotations

import asyncio
from typing import Any

import orjson
from cache_support import ValkeyServer, cache_command
from redis.asyncio import Redis as AsyncRedis

from stream.cache import CachedRating, CacheWriter, KeyLayout, RatingCache
from stream.cache.entry import Correction
from stream.cache.writer import Retraction
from stream.config.modes import parse_modes

LAYOUT = KeyLayout()
MODES = parse_modes({})
MODE = "ranked"
AT = 1_767_225_600_000  # ms
HOUR = 3_600_000


def change(
    match: str,
    hour: int,
    version: int,
    rating: float,
    *,
    generation: int | None = None,
    correction: dict[str, Any] | None = None,
) -> CachedRating:
    event: dict[str, Any] = {
        "player_id": "a",
        "mode": MODE,
        "match_id": match,
        "outcome": "win",
        "rating": rating,
        "deviation": 200.0,
        "volatility": 0.06,
        "rank_points": 10 * version,
        "games": version,
        "version": version,
        "at": AT + hour * HOUR,
    }
    if generation is not None:
        event["generation"] = generation
    if correction is not None:
        event["correction"] = correction
    return CachedRating.from_rating_changed(orjson.loads(orjson.dumps(event)))


def mark(generation: int, replaces: int) -> Correction:
    return Correction(generation, "void of m-1: a cheater's match", "ops", replaces)


def fix(generation: int, replaces: int) -> dict[str, Any]:
    return {"generation": generation, "reason": "new modes file", "by": "ops", "replaces": replaces}


async def test_a_re_rate_shows_each_match_once_corrected_and_no_voided_one(
    aredis: AsyncRedis,
) -> None:
    writer = CacheWriter(aredis, LAYOUT)
    cache = RatingCache(aredis, MODES)
    await writer.write([change(f"m-{i}", i, i, 1500.0 + i) for i in (1, 2, 3)])
    # Generation 2 (versions from 4): m-1 voided; m-2 re-rated lower; m-3 re-rated, last.
    await writer.write(
        [
            change("m-2", 2, 4, 1490.0, generation=2, correction=fix(2, 2)),
            change("m-3", 3, 5, 1495.0, generation=2, correction=fix(2, 3)),
        ]
    )
    await writer.retract([Retraction(MODE, "a", 4, ("m-1",), mark(2, 3))])
    history = await cache.history(MODE, "a", 10)
    assert [(e.match_id, e.rating) for e in history] == [("m-3", 1495.0), ("m-2", 1490.0)]
    m2 = history[1]
    assert m2.corrected == Correction(2, "new modes file", "ops", 2)
    assert m2.replaced_rating == 1502.0
    voided = await cache.explanation(MODE, "a", "m-1")
    assert voided is not None and voided.retracted == mark(2, 3)
    latest = await cache.explanation(MODE, "a")
    assert latest is not None and latest.match_id == "m-3"
    # Idempotent: the same retraction and the same changes again change nothing.
    before = await aredis.lrange(LAYOUT.history(MODE, "a"), 0, -1)
    await writer.retract([Retraction(MODE, "a", 4, ("m-1",), mark(2, 3))])
    await writer.write([change("m-2", 2, 4, 1490.0, generation=2, correction=fix(2, 2))])
    assert await aredis.lrange(LAYOUT.history(MODE, "a"), 0, -1) == before
    # Generation 3 counts m-1 again: its change replaces the mark, in its place.
    await writer.write([change("m-1", 1, 9, 1480.0, generation=3, correction=fix(3, 1))])
    history = await cache.history(MODE, "a", 10)
    assert [e.match_id for e in history] == ["m-3", "m-2", "m-1"]
    assert history[2].retracted is None and history[2].replaced_rating is None


async def test_a_correction_of_a_match_beyond_the_kept_history_is_not_listed(
    aredis: AsyncRedis,
) -> None:
    writer = CacheWriter(aredis, LAYOUT, history_length=2)
    await writer.write([change(f"m-{i}", i, i, 1500.0 + i) for i in (1, 2, 3)])
    await writer.write([change("m-1", 1, 4, 1400.0, generation=2, correction=fix(2, 1))])
    history = await RatingCache(aredis, MODES).history(MODE, "a", 10)
    assert [e.match_id for e in history] == ["m-3", "m-2"]


def test_the_commands_word_a_correction_and_refuse_a_voided_match(valkey: ValkeyServer) -> None:
    async def fill() -> None:
        client = AsyncRedis.from_url(valkey.url)
        try:
            await client.flushdb()
            writer = CacheWriter(client, LAYOUT)
            await writer.write([change(f"m-{i}", i, i, 1500.0 + i) for i in (1, 2)])
            await writer.write([change("m-2", 2, 3, 1490.0, generation=2, correction=fix(2, 2))])
            await writer.retract([Retraction(MODE, "a", 3, ("m-1",), mark(2, 2))])
        finally:
            await client.aclose()

    asyncio.run(fill())
    voided = cache_command(valkey.url, "ratings", "explain", MODE, "a", "m-1")
    assert (voided.returncode, voided.stdout) == (1, "")
    assert voided.stderr == (
        "skillstream ratings explain: nothing found: match 'm-1' no longer counts for 'a' in"
        " 'ranked': re-rate generation 2 by ops voided it (\"void of m-1: a cheater's match\"),"
        " so it changed no rating\n"
    )
    corrected = cache_command(valkey.url, "ratings", "explain", MODE, "a", "m-2")
    assert corrected.returncode == 0, corrected.stderr
    assert corrected.stdout.splitlines()[-1] == (
        'This change is a correction: re-rate generation 2 by ops ("new modes file") replaced'
        " the change first published for this match (version 2), which had left the rating at"
        " 1502."
    )
    history = cache_command(valkey.url, "ratings", "history", MODE, "a")
    assert [orjson.loads(line)["match_id"] for line in history.stdout.splitlines()] == ["m-2"]
