"""Where a match's and a player's state lives: the partition Kafka's default partitioner picks.

Using the Java client's murmur2 (also aiokafka's default) means match events keyed by match id
from ordinary producers land straight on their match's home partition; events from producers
with another partitioner (librdkafka's default is CRC32) are forwarded there, one extra hop.
"""

from __future__ import annotations

from functools import lru_cache

from aiokafka.partitioner import murmur2


@lru_cache(maxsize=65536)
def partition_for(key: str, partitions: int) -> int:
    """The partition of ``key`` among ``partitions``, as Kafka's default partitioner computes it."""
    hashed: int = murmur2(key.encode())
    return (hashed & 0x7FFFFFFF) % partitions
