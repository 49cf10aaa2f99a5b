"""The cache feed on the real local stack: rating-changed on Tansu, written to Valkey, through
a Redis stall in the middle of the stream, with bad records dead-lettered."""

from __future__ import annotations

import math
import signal
import subprocess
import sys
import time
import uuid
from typing import Any

import orjson
from builders import T0
from cache_support import Stall, eventually, feed_running
from librdkafka_clients import Reader, fleet_producer
from pipeline_env import create_topics

from stream.cache.feed import CacheFeed, redis_client
from stream.cache.keys import KeyLayout
from stream.cache.reader import RatingCache, SyncRatingCache
from stream.cache.writer import CacheWriter
from stream.config.modes import Modes
from stream.events import format_time
from stream.local.stack import LocalStack, environment

MODE = "1v1"
PLAYERS = [f"p{i}" for i in range(30)]


def rating_changed(player_id: str, version: int) -> dict[str, Any]:
    # Values that differ per (player, version), so a stale write would show.
    rating = 1500.0 + hash((player_id, version)) % 400 - 200 + version / 7
    return {
        "player_id": player_id,
        "mode": MODE,
        "match_id": f"m{version}-{player_id}",
        "outcome": "win",
        "rating": rating,
        "deviation": 300.0 / version,
        "volatility": 0.06,
        "rank_points": 100 * version,
        "games": version,
        "version": version,
        "previous": {"rating": 1500.0, "deviation": 350.0, "volatility": 0.06, "rank_points": 0},
        "expected_score": 0.5,
        "algorithm": "glicko2",
        "at": format_time(T0 + version),
    }


async def test_the_feed_writes_the_newest_state_through_a_redis_stall(stack: LocalStack) -> None:
    tag = uuid.uuid4().hex[:8]
    topic, dlq = f"rating-{tag}", f"dlq-{tag}"
    await create_topics(stack, topic, partitions=4)
    await create_topics(stack, dlq, partitions=1)
    producer = fleet_producer(stack.bootstrap_servers)

    def publish(events: list[dict[str, Any]], raw: tuple[bytes, ...] = ()) -> None:
        for event in events:
            producer.produce(topic, orjson.dumps(event), event["player_id"].encode())
        for value in raw:
            producer.produce(topic, value, b"bad")
        assert producer.flush(30) == 0

    layout = KeyLayout(f"t{tag}")
    feed = CacheFeed(
        CacheWriter(redis_client(stack.redis_url), layout),
        stack.bootstrap_servers,
        topic,
        f"cache-{tag}",
        dlq,
    )
    cache = RatingCache.from_url(stack.redis_url, Modes(), prefix=layout.prefix)
    valkey = next(s for s in stack.servers if s.name == "valkey").process.pid

    async def cache_holds(versions: dict[str, int]) -> bool:
        found = await cache.get_many(MODE, list(versions))
        return all(
            found[p].version == v and found[p].rating == rating_changed(p, v)["rating"]
            for p, v in versions.items()
        )

    async with feed_running(feed):
        try:
            publish([rating_changed(p, v) for v in (1, 2) for p in PLAYERS])
            await eventually(lambda: cache_holds(dict.fromkeys(PLAYERS, 2)), 30, "versions 1-2")

            with Stall(valkey):  # Redis hangs: connections open, no answers
                newer = [rating_changed(p, v) for v in (3, 4, 5) for p in PLAYERS]
                # Late and duplicated deliveries of older versions, and two unusable records.
                late = [rating_changed(p, 2) for p in PLAYERS[:10]] + [rating_changed("p0", 5)]
                unusable = (b"{not json", orjson.dumps({"player_id": "x", "mode": MODE}))
                publish(newer + late, unusable)

                async def lag_is_visible() -> bool:
                    return feed.stats.errors > 0 and feed.stats.lag_records > 0

                await eventually(lag_is_visible, 30, "the feed to notice the stall")
                assert feed.stats.outage_since is not None
                # Measured from publication, not from the events' times (months before now).
                assert 0 < feed.stats.lag_seconds() < 60
            await eventually(lambda: cache_holds(dict.fromkeys(PLAYERS, 5)), 40, "convergence")

            async def caught_up() -> bool:
                return feed.stats.lag_records == 0 and feed.stats.outage_since is None

            await eventually(caught_up, 10, "the lag to return to 0")
            # Every usable record scored once, also those retried through the stall; the two
            # unusable ones not at all.
            quality = feed.stats.quality.summaries()[MODE]
            assert quality.observations == len(PLAYERS) * 5 + len(late)
            assert math.isclose(quality.log_loss, math.log(2))  # every expected score was 0.5
            assert feed.stats.dead_letter_reasons == {"not_json": 1, "missing_field": 1}
            # A mode new to the feed has its drift figures read at the next step, from the
            # boards (stream/cache/drift.py): every player is on them.
            drift = feed.stats.drift[MODE]
            assert drift.mode == MODE and drift.active == len(PLAYERS)
            low = min(rating_changed(p, v)["rating"] for p in PLAYERS for v in (1, 2, 3, 4, 5))
            high = max(rating_changed(p, v)["rating"] for p in PLAYERS for v in (1, 2, 3, 4, 5))
            assert low <= drift.rating.quantiles[0] <= drift.rating.mean <= high
        finally:
            await cache.aclose()

    # Newest state everywhere, also in the sorted sets.
    cache = RatingCache.from_url(stack.redis_url, Modes(), prefix=layout.prefix)
    try:
        top = await cache.top(MODE, len(PLAYERS), board="rating")
        found = await cache.get_many(MODE, PLAYERS)
    finally:
        await cache.aclose()
    assert {e.player_id: e.score for e in top} == {
        p: rating_changed(p, 5)["rating"] for p in PLAYERS
    }
    assert {p: e.rank_points for p, e in found.items()} == dict.fromkeys(PLAYERS, 500)

    letters = Reader(stack.bootstrap_servers, dlq, 1)
    try:
        records = letters.until(2, timeout=20)
    finally:
        letters.close()
    assert sorted(r.value() for r in records) == sorted(
        [b"{not json", orjson.dumps({"player_id": "x", "mode": MODE})]
    )
    for record in records:
        headers = dict(record.headers())
        assert headers["skillstream.source.topic"].decode() == topic
        assert headers["skillstream.error.reason"].startswith(b"cache: ")


def test_the_cache_writer_command_runs_the_feed_alone_and_stops_on_sigterm(
    stack: LocalStack,
) -> None:
    tag = uuid.uuid4().hex[:8]
    env = {
        **environment(stack),
        "SKILLSTREAM_APP_ID": f"w{tag}",
        "SKILLSTREAM_TOPIC_RATING_CHANGED": f"rating-{tag}",
        "SKILLSTREAM_TOPIC_DLQ": f"dlq-{tag}",
        "SKILLSTREAM_CACHE_PREFIX": f"w{tag}",
    }
    producer = fleet_producer(stack.bootstrap_servers)
    for p in PLAYERS:
        producer.produce(
            env["SKILLSTREAM_TOPIC_RATING_CHANGED"], orjson.dumps(rating_changed(p, 1))
        )
    assert producer.flush(30) == 0
    writer = subprocess.Popen(
        [sys.executable, "-m", "stream", "cache", "writer"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    cache = SyncRatingCache.from_url(
        stack.redis_url, Modes(), prefix=env["SKILLSTREAM_CACHE_PREFIX"]
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if all(e.version == 1 for e in cache.get_many(MODE, PLAYERS).values()):
                break
            time.sleep(0.2)
        assert all(e.version == 1 for e in cache.get_many(MODE, PLAYERS).values())
    finally:
        cache.close()
        writer.send_signal(signal.SIGTERM)
        output, _ = writer.communicate(timeout=30)
    assert writer.returncode == 0, output.decode()
