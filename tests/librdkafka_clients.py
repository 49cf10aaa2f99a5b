"""The fleet's and the analytics team's side of the end-to-end tests: librdkafka
(confluent-kafka), a client independent of the aiokafka inside the worker."""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

from confluent_kafka import Consumer, Producer, TopicPartition


def fleet_producer(servers: str) -> Producer:
    """A producer that partitions keys as Java clients and Kafka's default partitioner do, so
    keyed events land on their match's home partition."""
    return Producer({"bootstrap.servers": servers, "partitioner": "murmur2_random"})


def default_producer(servers: str) -> Producer:
    """A producer left at librdkafka's defaults, as most fleets run one (C/C++, Go, .NET,
    Node, Python): a keyed event goes to CRC32 of its key modulo the partition count
    (``consistent_random``), usually not its match's home partition; a keyless one to a random
    partition, kept for ``sticky.partitioning.linger.ms`` (10 ms)."""
    return Producer({"bootstrap.servers": servers})


class Reader:
    """One topic read from the start of every partition, kept open across calls (manual
    assignment: no consumer-group join to wait for)."""

    def __init__(self, servers: str, topic: str, partitions: int) -> None:
        self.consumer = Consumer(
            {
                "bootstrap.servers": servers,
                "group.id": f"reader-{uuid.uuid4().hex[:6]}",
                "enable.auto.commit": False,
            }
        )
        self.consumer.assign([TopicPartition(topic, p, 0) for p in range(partitions)])
        self.records: list[Any] = []

    def read_until(self, done: Callable[[list[Any]], bool], timeout: float = 60.0) -> list[Any]:
        """Every record read so far, once ``done(records)`` holds or ``timeout`` passes."""
        deadline = time.monotonic() + timeout
        while not done(self.records) and time.monotonic() < deadline:
            message = self.consumer.poll(0.05)
            if message is not None and message.error() is None:
                self.records.append(message)
        return self.records

    def until(self, count: int, timeout: float = 90.0) -> list[Any]:
        return self.read_until(lambda records: len(records) >= count, timeout)

    def close(self) -> None:
        self.consumer.close()
