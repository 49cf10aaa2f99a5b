"""The cache feed as the worker runs it, a service beside the rating app: on the real local
stack, it writes what it consumes while it runs and stops when the service stops."""

from __future__ import annotations

import uuid

import orjson
from cache_support import eventually
from librdkafka_clients import fleet_producer
from pipeline_env import create_topics
from test_feed_on_the_stack import MODE, rating_changed

from stream.cache.reader import RatingCache
from stream.cache.service import CacheFeedService
from stream.config.modes import Modes
from stream.config.settings import CacheSettings, KafkaSettings, RedisSettings, Settings, TopicNames
from stream.local.stack import LocalStack


async def test_the_service_runs_the_feed_from_start_to_stop(stack: LocalStack) -> None:
    tag = uuid.uuid4().hex[:8]
    settings = Settings(
        app_id=f"service-{tag}",
        kafka=KafkaSettings(stack.bootstrap_servers, session_timeout_seconds=3.0),
        topics=TopicNames(rating_changed=f"rating-{tag}", dead_letter=f"dlq-{tag}"),
        redis=RedisSettings(stack.redis_url),
        cache=CacheSettings(prefix=f"t{tag}"),
    )
    await create_topics(stack, settings.topics.rating_changed, settings.topics.dead_letter)
    producer = fleet_producer(stack.bootstrap_servers)
    for version in (1, 2):
        producer.produce(
            settings.topics.rating_changed, orjson.dumps(rating_changed("p1", version))
        )
    assert producer.flush(30) == 0

    service = CacheFeedService(settings)
    assert service.stats is None  # the metrics read zeros before it starts
    await service.start()
    try:

        async def written() -> bool:
            return service.stats is not None and service.stats.written + service.stats.stale == 2

        await eventually(written, 60, "both rating changes in Redis")
        cache = RatingCache.from_url(stack.redis_url, Modes(), settings.cache.prefix)
        try:
            assert (await cache.get_many(MODE, ["p1"]))["p1"].version == 2
        finally:
            await cache.aclose()
    finally:
        await service.stop()
    feed = service.feed
    assert feed is not None and feed.stats.written >= 1
