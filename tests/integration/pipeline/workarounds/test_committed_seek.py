"""Seeking back to the committed offsets on a real broker, for a partition the group never
committed (stream/pipeline/workarounds/committed.py)."""

from __future__ import annotations

import asyncio

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from stream.local.stack import LocalStack
from stream.pipeline.workarounds.committed import seek_to_committed


async def read_to_end(consumer: AIOKafkaConsumer, tps: list[TopicPartition], end: int) -> None:
    for _ in range(100):
        if all([await consumer.position(tp) >= end for tp in tps]):
            return
        await consumer.getmany(timeout_ms=100)
    raise AssertionError("the records never came")


async def test_a_partition_never_committed_is_read_again_from_its_beginning(
    stack: LocalStack,
) -> None:
    never, committed, changelog = (
        TopicPartition("rewind", 0),
        TopicPartition("rewind", 1),
        TopicPartition("rewind-changelog", 0),
    )
    producer = AIOKafkaProducer(bootstrap_servers=stack.bootstrap_servers)
    await producer.start()
    try:
        for tp in (never, committed, changelog):
            for i in range(3):
                await producer.send_and_wait(tp.topic, b"%d" % i, partition=tp.partition)
    finally:
        await producer.stop()
    consumer = AIOKafkaConsumer(
        bootstrap_servers=stack.bootstrap_servers,
        group_id="rewinding",
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        fetch_max_wait_ms=20,
    )
    await consumer.start()
    try:
        consumer.assign([never, committed, changelog])
        await consumer.commit({committed: 2})
        await read_to_end(consumer, [never, committed, changelog], 3)

        # aiokafka alone leaves the never-committed partition past what it read.
        await consumer.seek_to_committed()
        assert [await consumer.position(tp) for tp in (never, committed)] == [3, 2], (
            "upstream fixed aiokafka#1003 (seek_to_committed of a partition never committed): "
            "remove workarounds/committed.py"
        )

        await read_to_end(consumer, [never, committed, changelog], 3)
        offsets = await seek_to_committed(consumer, lambda tp: tp.topic.endswith("-changelog"))
        # The log's start stands for the commit a partition never had.
        assert offsets == {never: 0, committed: 2, changelog: None}
        positions = [await consumer.position(tp) for tp in (never, committed, changelog)]
        assert positions == [0, 2, 3]
        again = await asyncio.wait_for(consumer.getmany(never, timeout_ms=2000), 10)
        assert [r.offset for r in again[never]] == [0, 1, 2]
    finally:
        await consumer.stop()
