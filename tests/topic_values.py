"""Reading a topic's JSON values from its start, for the tests that check what a run published
(importable from every test module: pyproject.toml puts tests/ on the path)."""

from __future__ import annotations

from typing import Any

import orjson
from aiokafka import AIOKafkaConsumer


async def topic_values(servers: str, topic: str, expected: int) -> list[Any]:
    """Up to ``expected`` decoded values of ``topic`` from its start (fewer if none comes for
    5 s), in each partition's order."""
    consumer = AIOKafkaConsumer(topic, bootstrap_servers=servers, auto_offset_reset="earliest")
    await consumer.start()
    try:
        values: list[Any] = []
        while len(values) < expected:
            batch = await consumer.getmany(timeout_ms=5_000)
            if not batch:
                break
            values.extend(orjson.loads(r.value) for rs in batch.values() for r in rs)
        return values
    finally:
        await consumer.stop()
