"""stream/pipeline/workarounds/private.py, ``fetched_end``, on the local broker: the end a fetch
answer gave and when it was read, as a caught-up partition's event-time bound needs them (the
time is no earlier than the fetch that brought the end, and stays put while no answer comes)."""

from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from stream.local.stack import LocalStack
from stream.pipeline.workarounds.private import ANSWER_SLACK, fetched_end


async def test_the_end_and_the_time_of_the_last_fetch_answer() -> None:
    tp = TopicPartition("answers", 0)
    with LocalStack() as stack:
        servers = stack.bootstrap_servers
        producer = AIOKafkaProducer(bootstrap_servers=servers)
        await producer.start()
        consumer = AIOKafkaConsumer(bootstrap_servers=servers, fetch_max_wait_ms=50)
        await consumer.start()
        # Faust's consumer reaches aiokafka's through its thread; the same path, without Faust.
        faust_like = SimpleNamespace(_thread=SimpleNamespace(_ensure_consumer=lambda: consumer))
        try:
            for _ in range(3):
                await producer.send_and_wait(tp.topic, b"x", partition=0)
            consumer.assign([tp])
            await consumer.seek_to_beginning(tp)
            assert fetched_end(faust_like, tp) is None  # nothing answered yet
            before = time.time()
            read = 0
            while read < 3:
                batches = await consumer.getmany(tp, timeout_ms=1000)
                read += sum(len(records) for records in batches.values())
            found = fetched_end(faust_like, tp)
            assert found is not None
            end, at = found
            assert end == 3
            # Dated the slack before aiokafka handled the answer: made by then, at the latest.
            assert before - 0.001 - ANSWER_SLACK <= at <= time.time() - ANSWER_SLACK
            # Paused, nothing is fetched: the answer and its time stay what they were, while
            # the broker takes more (what a bound resting on them must allow for).
            consumer.pause(tp)
            await producer.send_and_wait(tp.topic, b"x", partition=0)
            await asyncio.sleep(0.3)
            assert fetched_end(faust_like, tp) == (3, at)
            consumer.resume(tp)
            while read < 4:
                batches = await consumer.getmany(tp, timeout_ms=1000)
                read += sum(len(records) for records in batches.values())
            found = fetched_end(faust_like, tp)
            assert found is not None and found[0] == 4 and found[1] > at
        finally:
            await consumer.stop()
            await producer.stop()
