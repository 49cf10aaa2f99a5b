"""A worker that takes partitions over commits soon after its first batch on them, not at its
next commit tick: killed before that tick, it would hand its successor everything its
predecessor left uncommitted as well as its own work (issue 28's chain of early kills).

The commit tick is set far beyond the test's wait, so only the early commit can advance the
group's offsets in time.
"""

from __future__ import annotations

import asyncio
import time

import orjson
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from stream.chaos.soakplan import SoakMatch
from stream.chaos.workerfleet import ChaosWorker, harness_env
from stream.config.settings import Settings
from stream.local.stack import LocalStack
from stream.pipeline.partitioning import partition_for
from stream.pipeline.topics import ensure_topics

TICK_SECONDS = 600
WAIT_SECONDS = 30.0


async def test_a_worker_commits_its_first_batch_after_an_assignment_without_waiting_for_the_tick(
    stack: LocalStack,
) -> None:
    env = {
        **harness_env(
            stack,
            "firstcommit",
            session_timeout=6.0,
            store="memory",
            partitions=None,
            cache_writer="worker",
        ),
        "SKILLSTREAM_COMMIT_INTERVAL_SECONDS": str(TICK_SECONDS),
    }
    settings = Settings.from_env(env)
    await ensure_topics(settings)
    worker = ChaosWorker(env, "first-commit")
    worker.launch()
    try:
        await worker.ready(60.0)
        home = partition_for("m-1", settings.partitions)
        finish = await _publish_match(stack.bootstrap_servers, settings, home)
        tp = TopicPartition(settings.topics.match_finished, home)
        committed = await _committed_within(
            stack.bootstrap_servers, settings.app_id, tp, finish + 1, WAIT_SECONDS
        )
        assert committed is not None and committed >= finish + 1, worker.tail(40)
    finally:
        worker.kill()


async def _publish_match(servers: str, settings: Settings, home: int) -> int:
    """A 1v1 match's start and finish on their home partition; the finish's offset."""
    now = time.time()
    start, finish = SoakMatch("m-1", (("alice",), ("bob",)), (0, 1), now - 60, now).events()
    producer = AIOKafkaProducer(bootstrap_servers=servers)
    await producer.start()
    try:
        await producer.send_and_wait(
            settings.topics.match_started, orjson.dumps(start), key=b"m-1", partition=home
        )
        sent = await producer.send_and_wait(
            settings.topics.match_finished, orjson.dumps(finish), key=b"m-1", partition=home
        )
    finally:
        await producer.stop()
    return int(sent.offset)


async def _committed_within(
    servers: str, group: str, tp: TopicPartition, wanted: int, seconds: float
) -> int | None:
    """The group's committed offset on ``tp`` once it reaches ``wanted``, or the last one seen
    after ``seconds``."""
    reader = AIOKafkaConsumer(bootstrap_servers=servers, group_id=group, enable_auto_commit=False)
    await reader.start()
    try:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        committed: int | None = None
        while loop.time() < deadline:
            committed = await reader.committed(tp)
            if committed is not None and committed >= wanted:
                return committed
            await asyncio.sleep(0.5)
        return committed
    finally:
        await reader.stop()
