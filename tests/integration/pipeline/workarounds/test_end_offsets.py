"""stream/pipeline/workarounds/endoffsets.py on the local broker: Tansu still reports end offsets
too low (a strict expected failure: it passes, and so fails, once the broker is fixed), and the
scan finds the real end."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from faust.types import TP

from stream.local.stack import LocalStack
from stream.pipeline.workarounds.endoffsets import scan_end_offsets


async def produce_in_lots(servers: str, topic: str, lots: dict[int, tuple[int, ...]]) -> None:
    """To each partition of ``topic``, its ``lots`` of records, each lot one record batch."""
    producer = AIOKafkaProducer(bootstrap_servers=servers, linger_ms=5)
    await producer.start()
    try:
        for partition, sizes in lots.items():
            for size in sizes:
                sent = [await producer.send(topic, b"x", partition=partition) for _ in range(size)]
                await asyncio.gather(*sent)
    finally:
        await producer.stop()


async def reported_end_offsets(
    servers: str, tps: list[TopicPartition]
) -> dict[TopicPartition, int]:
    """The end offsets the broker reports for ``tps`` (ListOffsets, latest)."""
    consumer = AIOKafkaConsumer(bootstrap_servers=servers)
    await consumer.start()
    try:
        ends: dict[TopicPartition, int] = await consumer.end_offsets(tps)
        return ends
    finally:
        await consumer.stop()


@pytest.mark.xfail(
    strict=True,
    raises=AssertionError,
    reason="Tansu 0.6.0 answers ListOffsets(latest) with the last batch's base offset + 1;"
    " docs/decisions.md, known problems. Strict: this fails once the broker is fixed.",
)
async def test_the_end_offset_follows_the_last_record_of_a_batched_produce() -> None:
    tp = TopicPartition("offsets", 0)
    with LocalStack() as stack:
        await produce_in_lots(stack.bootstrap_servers, "offsets", {0: (3, 4)})
        ends = await reported_end_offsets(stack.bootstrap_servers, [tp])
    assert ends[tp] == 7


async def test_the_worker_reads_the_real_end_of_a_changelog_from_the_log() -> None:
    # The workaround for the expected failure above: what recovery uses as the end offset.
    tps = [TopicPartition("log", p) for p in range(3)]
    with LocalStack() as stack:
        await produce_in_lots(stack.bootstrap_servers, "log", {0: (3, 4), 1: (1,), 2: (2, 5, 1)})
        reported = await reported_end_offsets(stack.bootstrap_servers, tps)
        ends = await scan_end_offsets(
            stack.bootstrap_servers,
            {TP(tp.topic, tp.partition): reported[tp] for tp in tps},
            {},
        )
    assert [ends[TP("log", p)] for p in range(3)] == [7, 1, 8]


async def test_the_scan_waits_for_a_broker_slow_to_answer_its_first_fetch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The broker stops (SIGSTOP) the moment the scan has chosen its partitions and resumes
    # 0.6 s later: six of the scan's polls come back empty before any answer. Until 2026-12-05
    # two empty polls ended the scan with the broker's too-low end (a standby's store then held
    # more than that end: Faust's ConsistencyError in `skillstream chaos --seed 21`).
    tps = [TopicPartition("slow", p) for p in range(2)]
    with LocalStack() as stack:
        await produce_in_lots(stack.bootstrap_servers, "slow", {0: (3, 4), 1: (2, 5)})
        reported = await reported_end_offsets(stack.bootstrap_servers, tps)
        assert reported == {tps[0]: 4, tps[1]: 3}  # too low: the real ends are 7 and 7
        broker = next(s.process for s in stack.servers if s.name == "tansu")
        assign = AIOKafkaConsumer.assign

        def assign_then_pause(consumer: AIOKafkaConsumer, partitions: list[TopicPartition]) -> None:
            assign(consumer, partitions)
            os.kill(broker.pid, signal.SIGSTOP)
            asyncio.get_running_loop().call_later(0.6, os.kill, broker.pid, signal.SIGCONT)

        monkeypatch.setattr(AIOKafkaConsumer, "assign", assign_then_pause)
        try:
            ends = await scan_end_offsets(
                stack.bootstrap_servers,
                {TP(tp.topic, tp.partition): reported[tp] for tp in tps},
                {},
            )
        finally:
            os.kill(broker.pid, signal.SIGCONT)
    assert [ends[TP("slow", p)] for p in range(2)] == [7, 7]
