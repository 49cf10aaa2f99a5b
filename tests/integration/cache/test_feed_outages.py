"""The cache feed through outages on the real local stack: the lag keeps counting what is
published while Redis is stalled, and a Kafka that is not there is waited for with one log
line, not a traceback per attempt."""

from __future__ import annotations

import asyncio
import logging
import uuid

import orjson
import pytest
from cache_support import Stall, eventually, feed_for, feed_running, rating_change
from confluent_kafka import Producer
from pipeline_env import create_topics

from stream.cache.feed import CacheFeed, redis_client
from stream.cache.keys import KeyLayout
from stream.cache.writer import CacheWriter
from stream.local.stack import LocalStack, free_port
from stream.pipeline.workarounds.clientlogs import quiet_kafka_client_repeats


async def test_the_lag_keeps_moving_while_redis_is_stalled(stack: LocalStack) -> None:
    tag = uuid.uuid4().hex[:8]
    topic, dlq = f"rating-{tag}", f"dlq-{tag}"
    await create_topics(stack, topic, dlq)
    producer = Producer({"bootstrap.servers": stack.bootstrap_servers})

    def publish(versions: range) -> None:
        for v in versions:
            for p in range(10):
                producer.produce(topic, orjson.dumps(rating_change(f"p{p}", v)), f"p{p}".encode())
            # One produce request per version: several batches per partition.
            assert producer.flush(30) == 0

    layout = KeyLayout(f"t{tag}")
    feed = feed_for(stack, topic, dlq, layout)
    valkey = next(s for s in stack.servers if s.name == "valkey").process.pid
    async with feed_running(feed):
        publish(range(1, 2))

        async def written() -> bool:
            return feed.stats.written >= 10 and feed.stats.lag_records == 0

        await eventually(written, 30, "the first versions")
        with Stall(valkey):
            publish(range(2, 3))

            async def stuck() -> bool:
                return feed.stats.errors > 0 and feed.stats.lag_records > 0

            await eventually(stuck, 30, "the feed to notice the stall")
            before = feed.stats.lag_records
            publish(range(3, 8))

            async def grown() -> bool:
                return feed.stats.lag_records >= before + 40

            # The feed fetches nothing meanwhile: only the broker's end offsets can show this.
            await eventually(grown, 30, "the lag to count what was published during the stall")
            assert feed.stats.outage_since is not None

        async def caught_up() -> bool:
            return feed.stats.lag_records == 0 and feed.stats.outage_since is None

        await eventually(caught_up, 40, "the lag to return to 0")


async def test_a_kafka_that_is_not_there_is_waited_for_with_one_line(
    stack: LocalStack, caplog: pytest.LogCaptureFixture
) -> None:
    # Nothing listens on this port: every connection attempt is refused at once.
    nowhere = f"127.0.0.1:{free_port()}"
    feed = CacheFeed(
        CacheWriter(redis_client(stack.redis_url), KeyLayout("nowhere")),
        nowhere,
        "rating-changed",
        "cache-nowhere",
        "dlq",
    )
    quiet_kafka_client_repeats()  # as `skillstream cache writer` and the worker do
    with caplog.at_level(logging.WARNING):
        async with feed_running(feed):
            await asyncio.sleep(4)  # several attempts: 0.1, 0.2, 0.4, 0.8, 1.6 s apart
    ours = [r for r in caplog.records if r.name == "skillstream.cache"]
    assert len(ours) == 1, [r.getMessage() for r in ours]
    assert "cannot connect" in ours[0].getMessage()
    assert feed._kafka.failures >= 4
    # The client's own per-attempt errors: each kind once, none with a traceback.
    theirs = [(r.name, r.msg) for r in caplog.records if r.name.startswith("aiokafka")]
    assert len(theirs) == len(set(theirs)) > 0
    assert not any(r.exc_info for r in caplog.records)
