"""stream/bench/topics.py on the local broker: the records and produce batches it counts are
exactly those written, where Tansu's end offsets undercount them."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from aiokafka import AIOKafkaProducer, TopicPartition

from stream.bench.rawloop import create_topics
from stream.bench.topics import Log, count_logs, per_topic
from stream.local.stack import LocalStack


@pytest.fixture
def stack() -> Iterator[LocalStack]:
    with LocalStack() as running:
        yield running


async def write_lots(servers: str, lots: dict[TopicPartition, list[int]]) -> None:
    """Each lot goes out as one produce batch of that many records."""
    producer = AIOKafkaProducer(bootstrap_servers=servers, linger_ms=5)
    await producer.start()
    try:
        for tp, sizes in lots.items():
            for size in sizes:
                batch = producer.create_batch()
                for n in range(size):
                    batch.append(key=b"k%d" % n, value=b"v" * (n + 1), timestamp=None)
                await (await producer.send_batch(batch, tp.topic, partition=tp.partition))
    finally:
        await producer.stop()


async def test_counts_every_record_and_batch_written_and_then_only_the_new_ones(
    stack: LocalStack,
) -> None:
    servers = stack.bootstrap_servers
    await create_topics(servers, ["alpha", "beta"], 3)
    a0, a2, b1 = TopicPartition("alpha", 0), TopicPartition("alpha", 2), TopicPartition("beta", 1)
    await write_lots(servers, {a0: [3, 4, 1], a2: [7], b1: [2, 2, 2, 5]})

    first = await count_logs(servers)

    assert per_topic(first) == {"alpha": Log(15, 4), "beta": Log(11, 4)}
    assert first[a0] == Log(8, 3, 8)
    assert first[a2] == Log(7, 1, 7)
    assert first[b1] == Log(11, 4, 11)
    assert first[TopicPartition("alpha", 1)] == Log(0, 0, 0)

    await write_lots(servers, {a0: [6], b1: [1, 9]})
    since = await count_logs(servers, first)

    assert per_topic(since) == {"alpha": Log(6, 1), "beta": Log(10, 2)}
    assert since[a0] == Log(6, 1, 14)
    assert since[b1] == Log(10, 2, 21)


async def test_counts_only_the_topics_asked_for(stack: LocalStack) -> None:
    servers = stack.bootstrap_servers
    await create_topics(servers, ["wanted", "unwanted"], 2)
    await write_lots(
        servers, {TopicPartition("wanted", 1): [5, 5], TopicPartition("unwanted", 0): [3]}
    )

    logs = await count_logs(servers, topics=["wanted"])

    assert per_topic(logs) == {"wanted": Log(10, 2)}


async def test_counts_the_commands_per_kind_on_the_topics_asked_for(stack: LocalStack) -> None:
    servers = stack.bootstrap_servers
    await create_topics(servers, ["commands", "other"], 2)
    producer = AIOKafkaProducer(bootstrap_servers=servers)
    await producer.start()
    try:
        for topic in ("commands", "other"):
            for partition, value in enumerate(
                [b'[["tick",1.5],["progress",0,1.0,null,null,null]]', b'[["wm",1,2.0]]']
            ):
                await producer.send_and_wait(topic, value, partition=partition)
            await producer.send_and_wait(topic, b"not json", partition=0)
    finally:
        await producer.stop()

    counted = per_topic(await count_logs(servers, kinds_of=["commands"]))

    assert counted["commands"] == Log(3, 3, kinds={"tick": 1, "progress": 1, "wm": 1, "?": 1})
    assert counted["other"] == Log(3, 3)
