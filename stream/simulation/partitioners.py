"""How the simulated fleet's producer picks partitions: as the producers real fleets run do.

A worker keeps a match on the partition murmur2 gives its id (stream/pipeline/partitioning.py);
an event that lands on another partition costs a forward through the match-command topic. These
are aiokafka ``partitioner`` callables, ``partitioner(key, all_partitions, available)``.
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Callable
from dataclasses import dataclass

from aiokafka.partitioner import DefaultPartitioner

Partitioner = Callable[[bytes | None, list[int], list[int]], int]


def crc32_partitioner(key: bytes | None, all_partitions: list[int], available: list[int]) -> int:
    """librdkafka's default partitioner, ``consistent_random``: CRC-32 of the key modulo the
    partition count, a random partition for a missing or empty key.

    librdkafka's src/rdkafka_msg.c: ``rd_kafka_msg_partitioner_consistent`` returns
    ``rd_crc32(key, keylen) % partition_cnt`` (an unsigned 32-bit CRC, the same CRC-32 as
    zlib's), and ``rd_kafka_msg_partitioner_consistent_random`` calls the random partitioner
    when ``keylen == 0``. (librdkafka keeps a keyless event's random pick for
    ``sticky.partitioning.linger.ms``; a random pick per event spreads the same.)
    """
    if not key:
        return random.choice(available or all_partitions)
    return all_partitions[zlib.crc32(key) % len(all_partitions)]


@dataclass(frozen=True)
class Partitioning:
    """A producer's way of partitioning: its name, its partitioner, whether events carry the
    match id as key, and one line for a printout."""

    name: str
    partitioner: Partitioner
    keyed: bool
    description: str


MURMUR2 = Partitioning(
    "murmur2",
    DefaultPartitioner(),
    True,
    "keyed by match id, murmur2 as Java clients and aiokafka: every event on its home partition",
)
CRC32 = Partitioning(
    "crc32",
    crc32_partitioner,
    True,
    "keyed by match id, CRC32 as librdkafka's default: most events forwarded home, one more hop",
)
KEYLESS = Partitioning(
    "keyless",
    DefaultPartitioner(),
    False,
    "no key, a random partition: most events forwarded home, one more hop",
)
PARTITIONINGS = {p.name: p for p in (MURMUR2, CRC32, KEYLESS)}
