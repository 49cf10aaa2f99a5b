"""Delivery of a batch's outputs on the real broker (stream/delivery.py): a record
Kafka refuses takes nothing else with it, and a broker that stops answering is waited for with
one log line when it starts and one when it ends."""

from __future__ import annotations

import asyncio
import logging
import signal
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest
from aiokafka import AIOKafkaProducer
from librdkafka_clients import Reader
from pipeline_env import create_topics

from stream.deadletters import TRUNCATED, DeadLetter, Origin
from stream.delivery import Delivery, DeliveryStoppedError, OutRecord, letter_record
from stream.local.stack import LocalStack
from stream.pipeline.workarounds.clientlogs import quiet_kafka_client_repeats

LIMIT = 20_000  # the producer's record limit in these tests


@pytest.fixture
async def delivery(stack: LocalStack) -> AsyncIterator[tuple[Delivery, str, str]]:
    tag = uuid.uuid4().hex[:8]
    out, dlq = f"out-{tag}", f"dlq-{tag}"
    await create_topics(stack, out, dlq, partitions=1)
    producer = AIOKafkaProducer(
        bootstrap_servers=stack.bootstrap_servers,
        acks="all",
        max_request_size=LIMIT,
        request_timeout_ms=3000,
    )
    await producer.start()

    async def send(
        topic: str,
        key: bytes | None,
        value: bytes | None,
        partition: int | None,
        timestamp: float | None,
        headers: Any,
    ) -> Any:
        # Faust's producer.send, spelled for aiokafka.
        return await producer.send(topic, value, key=key, partition=partition, headers=headers)

    try:
        yield Delivery(send, dlq, LIMIT), out, dlq
    finally:
        await producer.stop()


async def test_a_refused_record_becomes_a_dead_letter_and_the_rest_is_sent(
    stack: LocalStack, delivery: tuple[Delivery, str, str]
) -> None:
    sender, out, dlq = delivery
    big = b"r" * 50_000
    letter = DeadLetter(b"k", b"x" * 80_000, Origin("match-finished", 0, 7), "too big")
    records = [
        OutRecord(out, b"a", b"1"),
        OutRecord(out, b"big", big),  # over the producer's limit
        OutRecord(out, b"b", b"2"),
        letter_record(dlq, letter, LIMIT),
        OutRecord(out, b"c", b"3"),
    ]
    made = await sender.deliver(records)
    (refusal,) = made
    assert refusal.reason.startswith("output refused: MessageSizeTooLargeError")
    outputs = Reader(stack.bootstrap_servers, out, 1)
    letters = Reader(stack.bootstrap_servers, dlq, 1)
    try:
        assert [(m.key(), m.value()) for m in outputs.until(3, 20)] == [
            (b"a", b"1"),
            (b"b", b"2"),
            (b"c", b"3"),
        ]
        dead = {m.key(): m for m in letters.until(2, 20)}
    finally:
        outputs.close()
        letters.close()
    refused = dict(dead[b"big"].headers() or [])
    assert refused["skillstream.source.topic"] == out.encode()
    assert refused[TRUNCATED] == b"true" and big.startswith(dead[b"big"].value())
    cut = dict(dead[b"k"].headers() or [])
    assert cut["skillstream.error.reason"] == b"too big" and cut[TRUNCATED] == b"true"
    assert sender.rejected == 1


async def test_a_stalled_broker_is_waited_for_with_one_line_at_each_end(
    stack: LocalStack, delivery: tuple[Delivery, str, str], caplog: pytest.LogCaptureFixture
) -> None:
    sender, out, _ = delivery
    quiet_kafka_client_repeats()
    await sender.deliver([OutRecord(out, b"before", b"0")])  # connected, metadata known
    tansu = next(s for s in stack.servers if s.name == "tansu").process
    with caplog.at_level(logging.WARNING):
        tansu.send_signal(signal.SIGSTOP)  # connections stay open, nothing answers
        try:
            task = asyncio.create_task(
                sender.deliver([OutRecord(out, str(i).encode(), b"during") for i in range(5)])
            )
            # Each attempt times out after 3 s: several attempts while the broker is stopped.
            await asyncio.sleep(10)
            assert not task.done()
        finally:
            tansu.send_signal(signal.SIGCONT)
        await asyncio.wait_for(task, 60)
    ours = [r.getMessage() for r in caplog.records if r.name == "skillstream.worker"]
    assert len(ours) == 2, ours
    assert "Kafka send failed" in ours[0] and "working again" in ours[1]
    assert not any(r.exc_info for r in caplog.records)
    outputs = Reader(stack.bootstrap_servers, out, 1)
    try:
        got = {m.key() for m in outputs.read_until(lambda r: len(r) >= 6, 20)}
    finally:
        outputs.close()
    # At least once: every record is there (a timed-out attempt may also have landed).
    assert got == {b"before", *(str(i).encode() for i in range(5))}


async def test_a_caller_that_stops_while_the_broker_is_gone_is_let_go(
    stack: LocalStack, delivery: tuple[Delivery, str, str]
) -> None:
    """The cache feed stops by an event, not by cancellation: set while a send is being
    retried, the delivery gives up (the feed's batch stays uncommitted) instead of waiting for
    the broker."""
    sender, out, _ = delivery
    await sender.deliver([OutRecord(out, b"before", b"0")])
    stop = asyncio.Event()
    tansu = next(s for s in stack.servers if s.name == "tansu").process
    tansu.send_signal(signal.SIGSTOP)
    try:
        task = asyncio.create_task(sender.deliver([OutRecord(out, b"k", b"during")], stop))
        await asyncio.sleep(4)  # the first attempt times out after 3 s: now it retries
        assert not task.done()
        stop.set()
        with pytest.raises(DeliveryStoppedError):
            await asyncio.wait_for(task, 10)
    finally:
        tansu.send_signal(signal.SIGCONT)
