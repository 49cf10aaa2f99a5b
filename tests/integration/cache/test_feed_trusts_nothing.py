"""The cache feed on the real local stack trusts nothing it reads: rating-changed records no
engine could produce are dead-lettered with a reason (cut to fit when needed) and never reach
Redis."""

from __future__ import annotations

import uuid
from typing import Any

import orjson
from cache_support import REJECTING, eventually, feed_for, feed_running, rating_change
from confluent_kafka import Producer
from librdkafka_clients import Reader
from pipeline_env import create_topics
from redis.asyncio import Redis as AsyncRedis

from stream.cache.keys import KeyLayout
from stream.cache.reader import RatingCache
from stream.config.settings import Settings
from stream.deadletters import SOURCE_SIZE, TRUNCATED
from stream.local.stack import LocalStack

LIMIT = Settings().kafka.max_request_bytes  # the feed's record limit by default


def raw(event: dict[str, Any], field: str, literal: bytes) -> bytes:
    """``event`` with ``field``'s value replaced by a JSON literal orjson would not write."""
    marker = orjson.dumps({**event, field: "@@"})
    return marker.replace(b'"@@"', literal)


# (value, words of the reason)
FORGED: list[tuple[bytes, str]] = [
    (
        orjson.dumps(rating_change("f1", 1, version=2**63 + 5)),
        "'version': 9223372036854775813 is outside",
    ),
    (orjson.dumps(rating_change("f2", 1, rating=1e308)), "'rating': 1e+308 is outside"),
    (raw(rating_change("f3", 1), "rating", b"1e999"), "not valid JSON"),
    (raw(rating_change("f4", 1), "deviation", b"-1e999"), "not valid JSON"),
    (raw(rating_change("f5", 1), "volatility", b"NaN"), "not valid JSON"),
    (orjson.dumps(rating_change("f6", 1, games=10**12)), "'games': 1000000000000 is outside"),
    (orjson.dumps(rating_change("f7", 1, rank_points=-(10**15))), "'rank_points'"),
    (orjson.dumps(rating_change("f8", 1, mode="no-such-mode")), "rejects unlisted modes"),
    (orjson.dumps(rating_change("p" * 5000, 1)), "'player_id'"),
    (orjson.dumps(rating_change("f10", 1, at="1971-01-01T00:00:00Z")), "before March 1973"),
    (b"\xff\xfe\x00", "not valid JSON"),
    # Close to a real broker's limit: its dead letter with headers must be cut to fit.
    (orjson.dumps(rating_change("q" * 200, 1, pad="x" * (LIMIT - 450))), "'player_id'"),
]


async def test_forged_rating_changes_are_dead_lettered_and_never_cached(
    stack: LocalStack,
) -> None:
    tag = uuid.uuid4().hex[:8]
    topic, dlq = f"rating-{tag}", f"dlq-{tag}"
    await create_topics(stack, topic, dlq)
    forged = FORGED
    producer = Producer(
        {"bootstrap.servers": stack.bootstrap_servers, "message.max.bytes": 4_000_000}
    )
    valid = [rating_change(f"v{i}", 1) for i in range(5)]
    for i, (value, _) in enumerate(forged):
        producer.produce(topic, orjson.dumps(valid[i % 5]), f"v{i % 5}".encode(), partition=0)
        producer.produce(topic, value, f"f{i}".encode(), partition=0)
    assert producer.flush(30) == 0

    layout = KeyLayout(f"t{tag}")
    feed = feed_for(stack, topic, dlq, layout)
    cache = RatingCache.from_url(stack.redis_url, REJECTING, prefix=layout.prefix)
    async with feed_running(feed):

        async def done() -> bool:
            return feed.stats.dead_lettered >= len(forged) and feed.stats.lag_records == 0

        await eventually(done, 60, "every forged record dead-lettered")
    try:
        found = await cache.get_many("1v1", [f"v{i}" for i in range(5)])
    finally:
        await cache.aclose()
    assert {p: e.version for p, e in found.items()} == {f"v{i}": 1 for i in range(5)}

    # Nothing forged reached Redis: only the valid players' keys exist.
    client = AsyncRedis.from_url(stack.redis_url)
    try:
        keys = {k.decode() async for k in client.scan_iter(f"{layout.prefix}*")}
    finally:
        await client.aclose()
    written = {k for i in range(5) for k in layout.write_keys("1v1", f"v{i}")}
    # No seasons in this mode: the season keys are never created.
    assert keys == written - {layout.season("1v1"), layout.seasons("1v1")}

    letters = Reader(stack.bootstrap_servers, dlq, 2)
    try:
        records = letters.until(len(forged), timeout=30)
    finally:
        letters.close()
    assert len(records) == len(forged)
    by_key = {r.key(): r for r in records}
    for i, (value, words) in enumerate(forged):
        letter = by_key[f"f{i}".encode()]
        headers = dict(letter.headers() or [])
        reason = headers["skillstream.error.reason"].decode()
        assert reason.startswith("cache: ") and words in reason, (i, reason)
        if i == len(forged) - 1:
            assert headers[TRUNCATED] == b"true"
            assert int(headers[SOURCE_SIZE]) == len(value)
            assert value.startswith(letter.value())
        else:
            assert TRUNCATED not in headers and letter.value() == value
