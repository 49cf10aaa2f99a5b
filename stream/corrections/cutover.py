"""`skillstream corrections cutover`: a re-rated generation takes over rating-changed.

The steps (docs/operations.md#correcting-the-past-live), each with a progress line on stderr:

1. read rating-changed from its first offset to its end: what the generations before published
   (stream.corrections.handover);
2. wait until the re-rating deployment's group (``--group``, its app id) has committed every
   input record up to the inputs' end offsets as of now: the old deployment is stopped, so
   nothing it rated is missing from the shadow once it has;
3. record the re-rate on the audit topic (kind ``rerate``: the generation, the deployment, the
   shadow, who and why; once: a run again finds it there);
4. copy the shadow (``--shadow``, the re-rating deployment's SKILLSTREAM_TOPIC_RATING_CHANGED)
   from its first offset to its end, as the handover decides, then the retractions and the
   latest changes left out;
5. go on copying what the shadow receives, until SIGTERM or SIGINT (the live service now rates
   through the re-rating deployment; this process is its last step).

On failure or a crash at any point, run it again with the same arguments: it reads what
rating-changed holds, this generation's events included, and publishes only what is not there
(the same shadow gives the same bytes). Records are sent with ``acks=all`` and in order per
player (keyed by player id, as the workers key them). An unreachable broker is UnreachableError;
a missing topic a UserError naming it; an input partition that no longer starts at offset 0
(retention) NotRetainedError naming it, before anything is published.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

import orjson
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from stream.config.settings import Settings
from stream.corrections.handover import Handover
from stream.corrections.records import Audit, Rerate
from stream.errors import UserError
from stream.history.retained import NotRetainedError, retention_problem
from stream.reachability import (
    kafka_errors,
    kafka_within_timeout,
    log_reader,
    missing_topic,
    quiet_kafka_logs,
)

__all__ = ["ROUNDS", "cut_over"]

ROUNDS = 4

Say = Callable[[str], None]


def _stderr(line: str) -> None:
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


async def cut_over(
    settings: Settings,
    *,
    shadow: str,
    group: str,
    generation: int,
    reason: str,
    stop: asyncio.Event,
    say: Say = _stderr,
    follow: bool = True,
    by: str = "skillstream",
) -> int:
    """Run the cut-over (module docstring); returns how many records it published. ``by``:
    who runs it, for the audit record."""
    if shadow == settings.topics.rating_changed:
        raise UserError(f"--shadow: {shadow!r} is rating-changed itself; name the shadow topic")
    handover = Handover(generation, reason, by)
    reader = log_reader(settings)
    producer = AIOKafkaProducer(
        bootstrap_servers=settings.kafka.bootstrap_servers,
        acks="all",
        enable_idempotence=False,
        linger_ms=5,
        request_timeout_ms=max(round(settings.connect_timeout_seconds * 1000), 5000),
        **settings.kafka.security.aiokafka_options(),
    )
    published = 0
    with quiet_kafka_logs(), kafka_errors(settings):
        await kafka_within_timeout(settings, reader.start())
        await kafka_within_timeout(settings, producer.start())
        try:
            output = await _partitions(reader, settings.topics.rating_changed)
            shadow_tps = await _partitions(reader, shadow)
            watched = await _re_rated(settings, reader, group)
            ends = await _ends(settings, reader, output)
            count = await _read_to(reader, output, ends, handover.read)
            say(f"cutover: read {count:,} events of {settings.topics.rating_changed!r}")
            # A match goes start -> snapshot request -> snapshot -> result -> rate: each round
            # waits for every record there was when it began, so after four every input read
            # in the first has gone all the way to the shadow.
            for _ in range(ROUNDS):
                await _caught_up(
                    settings, group, watched, await _ends(settings, reader, watched), say, stop
                )
            if stop.is_set():
                return published
            await _record(settings, generation, group, shadow, reason, by, say)

            async def send(record: dict[str, Any]) -> None:
                nonlocal published
                data = handover.handed(record)
                if data is not None:
                    await _send(producer, settings.topics.rating_changed, record, data)
                    published += 1

            shadow_ends = await _ends(settings, reader, shadow_tps)
            copied = await _copy_to(reader, shadow_tps, shadow_ends, send)
            for data in handover.closing():
                record = orjson.loads(data)
                await _send(producer, settings.topics.rating_changed, record, data)
                published += 1
            await producer.flush()
            say(
                f"cutover: generation {generation} took over: {copied:,} shadow events read, "
                f"{published:,} published (changes, corrections and retractions); following "
                f"{shadow!r}"
            )
            while follow and not stop.is_set():
                batches = await reader.getmany(*shadow_tps, timeout_ms=200)
                for records in batches.values():
                    for message in records:
                        await send(orjson.loads(message.value or b"{}"))
                await producer.flush()
        finally:
            await producer.stop()
            await reader.stop()
    return published


async def _re_rated(
    settings: Settings, reader: AIOKafkaConsumer, group: str
) -> list[TopicPartition]:
    """The partitions the re-rating deployment ``group`` reads and writes: the inputs, then its
    command topics. NotRetainedError when the inputs lost records to retention: a re-rate of
    them is not the history the ratings were made from, refused before anything is
    published."""
    inputs = [
        *await _partitions(reader, settings.topics.match_started),
        *await _partitions(reader, settings.topics.match_finished),
    ]
    first = await reader.beginning_offsets(inputs)
    problem = retention_problem({(tp.topic, tp.partition): o for tp, o in first.items()})
    if problem is not None:
        raise NotRetainedError(f"cutover refused: {problem}")
    return [
        *inputs,
        *await _partitions(reader, f"{group}-match-commands"),
        *await _partitions(reader, f"{group}-player-commands"),
    ]


async def _record(
    settings: Settings, generation: int, group: str, shadow: str, reason: str, by: str, say: Say
) -> None:
    """The re-rate's audit record, unless the audit topic has this generation's already."""
    from stream.corrections.audit import publish, read_log

    for _, correction in await read_log(settings):
        if isinstance(correction, Rerate) and correction.generation == generation:
            say(f"cutover: the audit topic has generation {generation}'s record already")
            return
    audit = Audit(f"rerate-{generation}", by, time.time(), reason)
    await publish(settings, Rerate(audit, generation, group, shadow))
    say(f"cutover: recorded generation {generation} on {settings.topics.audit!r}")


async def _ends(
    settings: Settings, reader: AIOKafkaConsumer, tps: list[TopicPartition]
) -> dict[TopicPartition, int]:
    """Each partition's end offset as of now, checked against the log whatever the broker
    reports (Tansu reports the start of the last record batch plus one,
    stream/pipeline/workarounds/endoffsets.py): one fetch from just before the reported end
    returns that whole batch and so where the log ended. One fetch, not a scan to the end:
    these topics are live, a scan would never see them end."""
    reported: dict[TopicPartition, int] = await reader.end_offsets(tps)
    ends = dict(reported)
    for tp, end in reported.items():
        if end <= 0:
            continue
        reader.assign([tp])
        reader.seek(tp, end - 1)
        batches = await reader.getmany(tp, timeout_ms=1000)
        records = batches.get(tp)
        if records:
            ends[tp] = max(end, records[-1].offset + 1)
    return ends


async def _partitions(reader: AIOKafkaConsumer, topic: str) -> list[TopicPartition]:
    if topic not in await reader.topics():
        raise UserError(missing_topic(topic))
    return [TopicPartition(topic, p) for p in sorted(reader.partitions_for_topic(topic) or ())]


async def _records_to(
    reader: AIOKafkaConsumer, tps: list[TopicPartition], ends: dict[TopicPartition, int]
) -> AsyncIterator[Any]:
    """Every record of ``tps`` from the first offset up to ``ends``; the reader is left at
    ``ends`` (to follow from there)."""
    reader.assign(tps)
    await reader.seek_to_beginning(*tps)
    remaining = {tp for tp in tps if ends[tp] > await reader.position(tp)}
    while remaining:
        batches = await reader.getmany(*remaining, timeout_ms=500)
        for tp, records in batches.items():
            for message in records:
                if message.offset >= ends[tp]:
                    reader.seek(tp, ends[tp])
                    break
                yield message
            if records and records[-1].offset + 1 >= ends[tp]:
                remaining.discard(tp)


async def _read_to(
    reader: AIOKafkaConsumer,
    tps: list[TopicPartition],
    ends: dict[TopicPartition, int],
    each: Callable[[dict[str, Any]], None],
) -> int:
    """Every record of ``tps`` up to ``ends``, decoded, to ``each``; the rest are skipped (the
    cache feed dead-letters what is not an event)."""
    count = 0
    async for message in _records_to(reader, tps, ends):
        try:
            event = orjson.loads(message.value or b"")
            if isinstance(event, dict):
                each(event)
                count += 1
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            continue
    return count


async def _copy_to(
    reader: AIOKafkaConsumer,
    tps: list[TopicPartition],
    ends: dict[TopicPartition, int],
    send: Callable[[dict[str, Any]], Any],
) -> int:
    """The shadow up to ``ends`` through ``send``; the reader stays at ``ends`` to follow."""
    count = 0
    async for message in _records_to(reader, tps, ends):
        await send(orjson.loads(message.value or b"{}"))
        count += 1
    return count


async def _send(
    producer: AIOKafkaProducer, topic: str, record: dict[str, Any], data: bytes
) -> None:
    await producer.send(topic, data, key=str(record["player_id"]).encode())


async def _caught_up(
    settings: Settings,
    group: str,
    watched: list[TopicPartition],
    ends: dict[TopicPartition, int],
    say: Say,
    stop: asyncio.Event,
) -> None:
    """Wait until ``group`` has committed ``ends`` on every partition of ``watched``."""
    consumer = AIOKafkaConsumer(
        bootstrap_servers=settings.kafka.bootstrap_servers,
        group_id=group,
        enable_auto_commit=False,
        **settings.kafka.security.aiokafka_options(),
    )
    await kafka_within_timeout(settings, consumer.start())
    try:
        said = 0.0
        while not stop.is_set():
            behind = 0
            for tp in watched:
                committed = await consumer.committed(tp)
                behind += max(0, ends[tp] - (committed or 0))
            if behind == 0:
                return
            now = time.monotonic()
            if now - said >= 5.0:
                say(f"cutover: waiting for {group!r} to catch up: {behind:,} records behind")
                said = now
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), 1.0)
    finally:
        await consumer.stop()
