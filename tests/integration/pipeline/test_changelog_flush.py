"""stream/pipeline/changelogs.py on the local broker: a flush writes each held key's last value
to its changelog partition (a tombstone for a stored record deleted, nothing for a record created
and deleted in between), and only then to the store; a flush that cannot reach the broker keeps
every write readable and held, and the next one sends them."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import faust
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from stream.bench.rawloop import create_topics
from stream.local.stack import LocalStack
from stream.pipeline.batches import Message
from stream.pipeline.changelogs import BufferedTables


class Event:
    """Stands for the Faust event a batch ends with (the store's partition comes from it)."""


def message(partition: int) -> Message:
    return Message("in", partition, 0, None, None, None, Event())


async def table_on(servers: str, app_id: str, partitions: int) -> tuple[Any, str]:
    """A never-started Faust app's table and its changelog topic, created on the broker."""
    app = faust.App(app_id, broker=f"kafka://{servers}", autodiscover=False)
    table = app.Table("t", default=None, partitions=partitions)
    topic: str = table.changelog_topic.get_topic_name()
    await create_topics(servers, [topic], partitions)
    return table, topic


async def changelog(servers: str, topic: str, partitions: int) -> list[tuple[int, bytes, Any]]:
    consumer = AIOKafkaConsumer(bootstrap_servers=servers, auto_offset_reset="earliest")
    await consumer.start()
    try:
        tps = [TopicPartition(topic, p) for p in range(partitions)]
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        found: list[tuple[int, bytes, Any]] = []
        for _ in range(20):
            batches = await consumer.getmany(timeout_ms=200)
            found += [(r.partition, r.key, r.value) for rs in batches.values() for r in rs]
        return sorted(found)
    finally:
        await consumer.stop()


async def test_a_flush_writes_each_keys_last_value_then_the_store() -> None:
    with LocalStack() as stack:
        servers = stack.bootstrap_servers
        table, topic = await table_on(servers, "flush-test", 2)
        table.data[b"old"] = b"stored"
        producer = AIOKafkaProducer(bootstrap_servers=servers)
        await producer.start()
        port = SimpleNamespace(producer=SimpleNamespace(_ensure_producer=lambda: producer))
        tables = BufferedTables(port, {"t": table})
        try:
            await tables.write("t", 0, {b"k1": b"v1", b"brief": b"p"}, message(0))
            await tables.write("t", 0, {b"k1": b"v2", b"brief": None}, message(0))
            await tables.write("t", 1, {b"old": None, b"k2": b"w"}, message(1))
            assert tables.contents("t").get(b"k1") == b"v2"
            assert dict(table.data.items()) == {b"old": b"stored"}, "the store waits for Kafka"
            assert tables.held() == 3
            assert await tables.flush() is True
        finally:
            await producer.stop()
        assert await changelog(servers, topic, 2) == [
            (0, b"k1", b"v2"),
            (1, b"k2", b"w"),
            (1, b"old", None),
        ]
        assert dict(table.data.items()) == {b"k1": b"v2", b"k2": b"w"}
        assert tables.held() == 0


async def test_a_flush_that_fails_keeps_the_writes_for_the_next() -> None:
    with LocalStack() as stack:
        servers = stack.bootstrap_servers
        table, topic = await table_on(servers, "flush-fail-test", 1)
        stopped = AIOKafkaProducer(bootstrap_servers=servers)
        await stopped.start()
        await stopped.stop()
        port = SimpleNamespace(producer=SimpleNamespace(_ensure_producer=lambda: stopped))
        tables = BufferedTables(port, {"t": table})
        await tables.write("t", 0, {b"k": b"v1"}, message(0))
        assert await tables.flush() is False
        await tables.write("t", 0, {b"j": b"w"}, message(0))
        assert tables.contents("t").get(b"k") == b"v1"
        assert dict(table.data.items()) == {}
        producer = AIOKafkaProducer(bootstrap_servers=servers)
        await producer.start()
        port.producer = SimpleNamespace(_ensure_producer=lambda: producer)
        try:
            assert await asyncio.wait_for(tables.flush(), 30) is True
        finally:
            await producer.stop()
        assert await changelog(servers, topic, 1) == [(0, b"j", b"w"), (0, b"k", b"v1")]
        assert dict(table.data.items()) == {b"j": b"w", b"k": b"v1"}
