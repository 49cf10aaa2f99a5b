"""Un-reading fetched records on a real broker (stream/pipeline/workarounds/unread.py)."""

from __future__ import annotations

import asyncio

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from stream.local.stack import LocalStack
from stream.pipeline.workarounds.unread import after_fetch, unread


async def fetch_to(consumer: AIOKafkaConsumer, tp: TopicPartition, end: int) -> list[int]:
    offsets: list[int] = []
    for _ in range(100):
        if await consumer.position(tp) >= end:
            return offsets
        got = await consumer.getmany(tp, timeout_ms=100)
        offsets += [r.offset for r in got.get(tp, [])]
    raise AssertionError("the records never came")


async def test_records_not_handed_on_are_fetched_again_unless_a_seek_came_since(
    stack: LocalStack,
) -> None:
    tp, other = TopicPartition("unread", 0), TopicPartition("unread", 1)
    producer = AIOKafkaProducer(bootstrap_servers=stack.bootstrap_servers)
    await producer.start()
    try:
        for i in range(5):
            await producer.send_and_wait(tp.topic, b"%d" % i, partition=tp.partition)
    finally:
        await producer.stop()
    consumer = AIOKafkaConsumer(
        bootstrap_servers=stack.bootstrap_servers,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        fetch_max_wait_ms=20,
    )
    await consumer.start()
    try:
        consumer.assign([tp])
        assert await fetch_to(consumer, tp, 5) == [0, 1, 2, 3, 4]
        after = after_fetch(consumer, [tp, other])
        assert list(after) == [tp] and after[tp][1] == 5

        # Offsets 2-4 were fetched and not handed on: read again, in order, once.
        assert unread(consumer, {tp: 2, other: 0}, after) == [tp]
        assert await consumer.position(tp) == 2
        assert await asyncio.wait_for(fetch_to(consumer, tp, 5), 10) == [2, 3, 4]

        # A seek since the fetch (Faust's own after a rebalance) wins.
        after = after_fetch(consumer, [tp])
        consumer.seek(tp, 4)
        assert unread(consumer, {tp: 2}, after) == []
        assert await consumer.position(tp) == 4

        # So does a new assignment, even one that puts the position back where it was.
        assert await fetch_to(consumer, tp, 5) == [4]
        after = after_fetch(consumer, [tp])
        consumer.assign([tp])
        consumer.seek(tp, 5)
        assert unread(consumer, {tp: 2}, after) == []
        assert await consumer.position(tp) == 5
    finally:
        await consumer.stop()
