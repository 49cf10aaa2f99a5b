"""Where a stalled match got stuck: every record that mentions it, topic by topic, beside the
consumer group's committed offset of that partition.

A wave that never gets its ratings leaves one of three marks: a record the group committed
past without its effect showing up downstream (a message lost by the consumer), a record still
waiting beyond the committed offset (a partition nobody fetches), or no record at all where the
previous hop should have sent one (state that believes the work is done). The trace shows which,
so a stall seen once in CI can be explained from its report alone.

Failure: any Kafka error while tracing is caught and becomes the trace's last line; the trace
is a diagnosis and must never hide the stall it explains. Replay: it only reads; it joins no
group (a consumer that never subscribes reads the committed offsets).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Sequence

from aiokafka import AIOKafkaConsumer, TopicPartition

from stream.config.settings import Settings

__all__ = ["trace_matches"]

# Empty fetches in a row after which a partition counts as read to its end.
EMPTY_POLLS = 3


async def _read_all(
    servers: str, topics: Sequence[str], partitions: int
) -> dict[TopicPartition, list[tuple[int, bytes]]]:
    """Every record of ``topics`` as (offset, value), read to the log's end (not the broker's
    reported end, which Tansu gives too low)."""
    consumer = AIOKafkaConsumer(
        bootstrap_servers=servers, enable_auto_commit=False, fetch_max_wait_ms=20
    )
    await consumer.start()
    found: dict[TopicPartition, list[tuple[int, bytes]]] = {}
    try:
        tps = [TopicPartition(t, p) for t in topics for p in range(partitions)]
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        empty = 0
        while empty < EMPTY_POLLS:
            batches = await consumer.getmany(timeout_ms=200, max_records=10_000)
            empty = 0 if any(batches.values()) else empty + 1
            for tp, records in batches.items():
                found.setdefault(tp, []).extend((r.offset, r.value or b"") for r in records)
    finally:
        await consumer.stop()
    return found


async def _committed(
    servers: str, group: str, topics: Sequence[str], partitions: int
) -> dict[TopicPartition, int]:
    # A consumer that never subscribes only fetches the group's offsets: it does not join
    # (Tansu cannot answer the admin client's OffsetFetch).
    consumer = AIOKafkaConsumer(bootstrap_servers=servers, group_id=group, enable_auto_commit=False)
    await consumer.start()
    found: dict[TopicPartition, int] = {}
    try:
        for topic in topics:
            for p in range(partitions):
                tp = TopicPartition(topic, p)
                offset = await consumer.committed(tp)
                if offset is not None:
                    found[tp] = offset
    finally:
        await consumer.stop()
    return found


def _short(topic: str, app_id: str) -> str:
    return topic.removeprefix(f"{app_id}-")


async def trace_matches(settings: Settings, match_ids: Iterable[str]) -> list[str]:
    """One line per (match, record that mentions it), then each partition's position."""
    s = settings
    ids = sorted(set(match_ids))
    # What the rating group consumes (its commits say how far it got), then what it produces.
    consumed = [
        s.topics.match_started,
        s.topics.match_finished,
        s.match_commands_topic,
        s.player_commands_topic,
    ]
    topics = [*consumed, s.topics.rating_changed, s.topics.dead_letter]
    try:
        records, committed = await asyncio.wait_for(
            asyncio.gather(
                _read_all(s.kafka.bootstrap_servers, topics, s.partitions),
                _committed(s.kafka.bootstrap_servers, s.app_id, consumed, s.partitions),
            ),
            timeout=30.0,
        )
    except Exception as exc:  # a diagnosis must not replace the failure it explains
        return [f"trace failed: {exc!r}"]
    lines: list[str] = []
    touched: set[TopicPartition] = set()
    for match_id in ids:
        needle = match_id.encode()
        lines.append(f"{match_id}:")
        for topic in topics:
            for p in range(s.partitions):
                tp = TopicPartition(topic, p)
                for offset, value in records.get(tp, []):
                    if needle not in value:
                        continue
                    touched.add(tp)
                    position = committed.get(tp)
                    waiting = topic in consumed and (position is None or position <= offset)
                    state = "  (not yet committed)" if waiting else ""
                    text = value.decode("utf-8", "replace")
                    if len(text) > 160:
                        text = text[:157] + "..."
                    lines.append(f"  {_short(topic, s.app_id)}[{p}]@{offset}{state}: {text}")
    lines.append("partitions (committed / records):")
    for tp in sorted(touched, key=lambda t: (t.topic, t.partition)):
        held = records.get(tp, [])
        end = held[-1][0] + 1 if held else 0
        lines.append(
            f"  {_short(tp.topic, s.app_id)}[{tp.partition}]: committed "
            f"{committed.get(tp, '-')}, log end {end}"
        )
    return lines
