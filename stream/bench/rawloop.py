"""The raw-loop ceiling: the fastest a plain aiokafka consume-update-produce loop goes on a broker.

Issue 16's yardstick for the worker. The loop reads events from one topic, keeps a dict (a
count per key), and produces one record per event to another topic: per fetched lot, it
updates the dict and sends every record, then waits for the broker to acknowledge them before
taking the next lot, as a loop that commits its offsets would have to. It has no framework and
none of the worker's guarantees: no consumer group (the partitions are assigned, so no join wait
and no offset commits), no state changelog, no snapshots, no deduplication, no validation or dead
letters, no recovery after a crash. Its events/s is the most any pipeline can do per event on
the same broker and machine; a 1v1 match is two input events plus everything the worker writes.

The events are produced before the loop starts and are not timed; the clock runs from the loop's
first fetch to the acknowledgement of its last record.

Failure: a broker error propagates (KafkaError); a loop that has not processed every event within
``timeout`` raises TimeoutError. Replay: each call uses its own pair of topics (``prefix``); a
second call with the same prefix would read the first one's events too, so callers pick a new one.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from typing import Any

import orjson
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

# Distinct keys among the events (a player base): the dict stays small and hot, as a rating
# table's working set would in a short run.
KEYS = 20_000


@dataclass(frozen=True, slots=True)
class RawLoopRun:
    events: int
    # Records the loop produced and the broker acknowledged: one per event.
    outputs: int
    seconds: float
    # Distinct keys in the loop's dict at the end.
    keys: int

    @property
    def events_per_second(self) -> float:
        return self.events / max(self.seconds, 1e-9)


async def create_topics(bootstrap_servers: str, names: list[str], partitions: int) -> None:
    admin = AIOKafkaAdminClient(bootstrap_servers=bootstrap_servers)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(name, partitions, 1) for name in names])
    finally:
        await admin.close()


async def produce_events(bootstrap_servers: str, topic: str, events: int) -> None:
    """``events`` JSON events of about 100 bytes, keyed by one of :data:`KEYS` players."""
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap_servers, linger_ms=5, acks="all")
    await producer.start()
    try:
        pending: list[asyncio.Future[Any]] = []
        for n in range(events):
            player = f"player-{n % KEYS:06d}"
            value = orjson.dumps({"player_id": player, "match_id": f"m-{n:09d}", "score": 1.0})
            pending.append(await producer.send(topic, value, key=player.encode()))
        await asyncio.gather(*pending)
    finally:
        await producer.stop()


async def run_raw_loop(
    bootstrap_servers: str,
    events: int,
    *,
    partitions: int,
    prefix: str = "raw-loop",
    timeout: float = 300.0,
) -> RawLoopRun:
    """Produce ``events`` to ``{prefix}-in``, then time the loop over them into ``{prefix}-out``."""
    source, sink = f"{prefix}-in", f"{prefix}-out"
    await create_topics(bootstrap_servers, [source, sink], partitions)
    await produce_events(bootstrap_servers, source, events)
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap_servers,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        fetch_max_wait_ms=20,
    )
    producer = AIOKafkaProducer(bootstrap_servers=bootstrap_servers, linger_ms=5, acks="all")
    await consumer.start()
    await producer.start()
    counts: dict[bytes, int] = {}
    outputs = 0
    try:
        consumer.assign([TopicPartition(source, p) for p in range(partitions)])
        started = time.monotonic()
        deadline = started + timeout
        while outputs < events:
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"the raw loop processed {outputs:,} of {events:,} events in {timeout:g} s"
                )
            lots = await consumer.getmany(timeout_ms=200, max_records=10_000)
            sent: list[asyncio.Future[Any]] = []
            for records in lots.values():
                for record in records:
                    key = record.key or b""
                    count = counts.get(key, 0) + 1
                    counts[key] = count
                    value = orjson.dumps({"key": key.decode(), "count": count})
                    sent.append(await producer.send(sink, value, key=key))
            await asyncio.gather(*sent)
            outputs += len(sent)
        seconds = time.monotonic() - started
    finally:
        await producer.stop()
        await consumer.stop()
    return RawLoopRun(events=events, outputs=outputs, seconds=seconds, keys=len(counts))
