"""The audit topic: every correction, in the order it was made, kept for good.

One partition, so the log has one order; records keyed by their id; values are the records'
JSON (stream.corrections.records), the same lines a corrections file holds. ``skillstream
corrections ... --publish`` appends one (after the broker acknowledged it, the command prints
it); ``skillstream corrections log`` writes the whole log as a corrections file, which ``replay
--corrections`` applies: what was recorded is what replay applies.

On failure: an unreachable broker is UnreachableError (one line naming the setting); a record
on the topic that is not a correction stops the log with its offset (AuditLogError), since an
audit log with a hole would apply a different set of corrections than was recorded.
"""

from __future__ import annotations

from typing import Any

import orjson
from aiokafka import AIOKafkaProducer, TopicPartition

from stream.config.settings import Settings
from stream.corrections.records import Correction, correction_json, parse_correction
from stream.errors import UserError
from stream.reachability import (
    kafka_errors,
    kafka_within_timeout,
    log_reader,
    missing_topic,
    quiet_kafka_logs,
)

__all__ = ["AuditLogError", "publish", "read_log"]


class AuditLogError(UserError):
    """A record of the audit topic that is not a correction, or a topic that is missing."""


async def publish(settings: Settings, correction: Correction) -> dict[str, Any]:
    """Append ``correction`` to the audit topic; returns its JSON once the broker has it (all
    in-sync replicas). Sent again after a failure, it is a second record with the same id,
    which the log refuses (read_log): the caller makes a new id instead."""
    record = correction_json(correction)
    producer = AIOKafkaProducer(
        bootstrap_servers=settings.kafka.bootstrap_servers,
        acks="all",
        enable_idempotence=False,
        request_timeout_ms=round(settings.connect_timeout_seconds * 1000),
        **settings.kafka.security.aiokafka_options(),
    )
    with quiet_kafka_logs(), kafka_errors(settings):
        await kafka_within_timeout(settings, producer.start())
        try:
            await producer.send_and_wait(
                settings.topics.audit, orjson.dumps(record), key=correction.audit.id.encode()
            )
        finally:
            await producer.stop()
    return record


async def read_log(settings: Settings) -> list[tuple[int, Correction]]:
    """Every correction on the audit topic from its first offset to its end when called, each
    with its offset; AuditLogError for a missing topic, a record that is not a correction and
    an id used twice."""
    topic = settings.topics.audit
    consumer = log_reader(settings)
    found: list[tuple[int, Correction]] = []
    with quiet_kafka_logs(), kafka_errors(settings):
        await kafka_within_timeout(settings, consumer.start())
        try:
            if topic not in await consumer.topics():
                raise AuditLogError(
                    f"SKILLSTREAM_TOPIC_AUDIT: {missing_topic(topic)} (skillstream topics"
                    " create makes it)"
                )
            tps = [
                TopicPartition(topic, p) for p in sorted(consumer.partitions_for_topic(topic) or ())
            ]
            consumer.assign(tps)
            await consumer.seek_to_beginning(*tps)
            ends = await consumer.end_offsets(tps)
            remaining = {tp for tp in tps if ends[tp] > await consumer.position(tp)}
            ids: dict[str, int] = {}
            while remaining:
                batches = await consumer.getmany(*remaining, timeout_ms=500)
                for tp, batch in batches.items():
                    for record in batch:
                        correction = _correction(topic, record.offset, record.value)
                        earlier = ids.get(correction.audit.id)
                        if earlier is not None:
                            raise AuditLogError(
                                f"audit topic {topic!r} offset {record.offset}: correction id "
                                f"{correction.audit.id!r} is used at offset {earlier}"
                            )
                        ids[correction.audit.id] = record.offset
                        found.append((record.offset, correction))
                    if batch and batch[-1].offset + 1 >= ends[tp]:
                        remaining.discard(tp)
        finally:
            await consumer.stop()
    return found


def _correction(topic: str, offset: int, value: bytes | None) -> Correction:
    try:
        return parse_correction(orjson.loads(value or b""))
    except (orjson.JSONDecodeError, ValueError) as exc:
        raise AuditLogError(f"audit topic {topic!r} offset {offset}: {exc}") from None
