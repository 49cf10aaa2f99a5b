"""The simulated fleet's producer (aiokafka) partitions as the producers it stands for, checked
against librdkafka (confluent-kafka) on the local broker: CRC32 as librdkafka's default, murmur2
as librdkafka's ``murmur2_random`` (the README's setting) and the worker's home partition, and
keyless events with no key at all."""

from __future__ import annotations

import random
from collections.abc import Callable

from confluent_kafka import KafkaError, Message, Producer
from librdkafka_clients import Reader, default_producer, fleet_producer
from pipeline_env import create_topics, fleet_to_own_topics

from stream.local.stack import LocalStack
from stream.pipeline.partitioning import partition_for
from stream.simulation import SimulationConfig, simulate
from stream.simulation.gamefleet import FleetConfig
from stream.simulation.partitioners import CRC32, KEYLESS, crc32_partitioner

PARTITIONS = 7  # not a power of two: a wrong modulo shows


def match_ids(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    return [f"m-{rng.getrandbits(48):012x}" for _ in range(count)] + ["partie-é", "1"]


def delivered(producer: Producer, topic: str, keys: list[str]) -> dict[str, int]:
    """The partition librdkafka gave each key, from its delivery reports."""
    got: dict[str, int] = {}

    def report(key: str) -> Callable[[KafkaError | None, Message], None]:
        def on_delivery(error: KafkaError | None, message: Message) -> None:
            assert error is None, error
            partition = message.partition()
            assert partition is not None
            got[key] = partition

        return on_delivery

    for key in keys:
        producer.produce(topic, b"{}", key.encode(), on_delivery=report(key))
    assert producer.flush(30) == 0
    return got


async def test_librdkafka_partitions_keys_as_the_fleet_and_the_worker_compute(
    stack: LocalStack,
) -> None:
    await create_topics(stack, "by-default", "by-murmur2", partitions=PARTITIONS)
    keys = match_ids(seed=1, count=300)
    every = list(range(PARTITIONS))
    servers = stack.bootstrap_servers

    by_default = delivered(default_producer(servers), "by-default", keys)
    assert by_default == {k: crc32_partitioner(k.encode(), every, every) for k in keys}
    by_murmur2 = delivered(fleet_producer(servers), "by-murmur2", keys)
    assert by_murmur2 == {k: partition_for(k, PARTITIONS) for k in keys}
    assert sum(by_default[k] != by_murmur2[k] for k in keys) > len(keys) // 2


async def test_the_fleet_sends_crc32_keyed_or_keyless_events_where_librdkafka_would(
    stack: LocalStack,
) -> None:
    matches = list(simulate(SimulationConfig(seed=3, matches=100, players=40)))
    every = list(range(PARTITIONS))
    for partitioning in (CRC32, KEYLESS):
        started, finished = f"started-{partitioning.name}", f"finished-{partitioning.name}"
        config = FleetConfig(rate=0.0, realtime=False, partitioning=partitioning)
        report = await fleet_to_own_topics(stack, matches, (started, finished), PARTITIONS, config)
        assert report.messages == 2 * len(matches)
        reader = Reader(stack.bootstrap_servers, started, PARTITIONS)
        try:
            records = reader.until(len(matches), timeout=20.0)
        finally:
            reader.close()
        assert len(records) == len(matches)
        if partitioning.keyed:
            assert all(r.partition() == crc32_partitioner(r.key(), every, every) for r in records)
        else:
            assert all(r.key() is None for r in records)
            assert len({r.partition() for r in records}) == PARTITIONS
