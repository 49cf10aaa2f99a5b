"""Cache benchmarks on a real Redis-compatible server: writer throughput, matchmaker lookups."""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import redis
import redis.asyncio as aioredis

from stream.cache.entry import CachedRating
from stream.cache.keys import KeyLayout
from stream.cache.reader import SyncRatingCache
from stream.cache.writer import CacheWriter
from stream.config.modes import Modes

MODE = "1v1"


@dataclass(frozen=True)
class WriteTiming:
    entries: int
    batch: int
    seconds: float
    memory_bytes: int = 0  # Redis used_memory added by the writes (all keys of the prefix)

    @property
    def per_second(self) -> float:
        return self.entries / self.seconds


@dataclass(frozen=True)
class LookupTiming:
    players: int
    calls: int
    latencies_ms: list[float]

    def percentile(self, q: float) -> float:
        ordered = sorted(self.latencies_ms)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    @property
    def median_ms(self) -> float:
        return statistics.median(self.latencies_ms)


def _entries(players: int, versions: int, seed: int) -> list[CachedRating]:
    rng = random.Random(seed)
    out = []
    for version in range(1, versions + 1):
        for i in range(players):
            out.append(
                CachedRating(
                    player_id=f"p{i}",
                    mode=MODE,
                    rating=rng.gauss(1500, 300),
                    deviation=rng.uniform(40, 350),
                    volatility=0.06,
                    rank_points=rng.randrange(10000),
                    games=version,
                    version=version,
                    updated_at_ms=1_780_000_000_000 + version,
                    match_id=f"m{version}",
                )
            )
    return out


async def time_writes(
    url: str,
    prefix: str,
    players: int = 50_000,
    versions: int = 2,
    batch: int = 2000,
    progress: Callable[[int], None] | None = None,
) -> WriteTiming:
    """Rating changes/s through CacheWriter (the feed's batch size), every entry applied."""
    client = aioredis.Redis.from_url(url)
    writer = CacheWriter(client, KeyLayout(prefix))
    entries = _entries(players, versions, seed=1)
    try:
        before = (await client.info("memory"))["used_memory"]
        started = time.perf_counter()
        for i in range(0, len(entries), batch):
            await writer.write(entries[i : i + batch])
            if progress is not None:
                progress(min(len(entries), i + batch))
        seconds = time.perf_counter() - started
        after = (await client.info("memory"))["used_memory"]
    finally:
        await client.aclose()
    return WriteTiming(len(entries), batch, seconds, int(after) - int(before))


def time_lookups(
    url: str, prefix: str, players: int = 50_000, size: int = 100, calls: int = 2000
) -> LookupTiming:
    """Latency of one ``get_many`` of ``size`` players (the sync client, as a matchmaker)."""
    rng = random.Random(2)
    cache = SyncRatingCache(redis.Redis.from_url(url), Modes(), KeyLayout(prefix))
    latencies: list[float] = []
    try:
        for _ in range(calls):
            ids = [f"p{rng.randrange(players)}" for _ in range(size)]
            t0 = time.perf_counter()
            found = cache.get_many(MODE, ids)
            latencies.append((time.perf_counter() - t0) * 1000)
            assert len(found) == len(set(ids))
    finally:
        cache.close()
    return LookupTiming(size, calls, latencies)


async def time_feed(
    bootstrap_servers: str,
    url: str,
    prefix: str,
    players: int = 20_000,
    versions: int = 5,
    progress: Callable[[int], None] | None = None,
) -> WriteTiming:
    """Rating changes/s through the whole cache writer: rating-changed already in Kafka, read by
    the feed (its consumer group, batches, commits) and written to Redis."""
    import asyncio

    import orjson
    from aiokafka import AIOKafkaProducer
    from aiokafka.admin import AIOKafkaAdminClient, NewTopic

    from stream.cache.feed import CacheFeed, redis_client
    from stream.events import format_time

    topic = f"{prefix}-rating-changed"
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap_servers)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(topic, 4, 1), NewTopic(f"{topic}-dlq", 1, 1)])
    finally:
        await admin.close()
    entries = _entries(players, versions, seed=3)
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap_servers, linger_ms=5)
    await producer.start()
    try:
        for e in entries:
            event: dict[str, object] = {
                "player_id": e.player_id,
                "mode": e.mode,
                "match_id": e.match_id,
                "outcome": "win",
                "rating": e.rating,
                "deviation": e.deviation,
                "volatility": e.volatility,
                "rank_points": e.rank_points,
                "games": e.games,
                "version": e.version,
                "previous": {},
                "expected_score": 0.5,
                "algorithm": "glicko2",
                "at": format_time(e.updated_at_ms / 1000),
            }
            await producer.send(topic, orjson.dumps(event), key=e.player_id.encode())
        await producer.flush()
    finally:
        await producer.stop()
    client = redis_client(url)
    feed = CacheFeed(
        CacheWriter(client, KeyLayout(prefix)),
        bootstrap_servers,
        topic,
        f"{prefix}-cache",
        f"{topic}-dlq",
    )
    task = asyncio.create_task(feed.run())
    try:
        started = time.perf_counter()
        while True:
            done = feed.stats.written + feed.stats.stale
            if progress is not None:
                progress(done)
            if done >= len(entries) or task.done():
                break
            await asyncio.sleep(0.05)
        seconds = time.perf_counter() - started
    finally:
        feed.stop()
        await task
        await client.aclose()
    return WriteTiming(len(entries), feed.batch_size, seconds)
