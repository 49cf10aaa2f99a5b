"""How many records and produce batches each topic on a broker holds, read from the log itself.

Why raw Fetch requests: Tansu, the local broker, answers ListOffsets with the base offset of a
partition's last record batch plus one (docs/decisions.md, known problems), so end offsets
undercount whatever was produced in batches; and a consumer hands out records, never the record
batches they came in, which are what a producer's linger and packing change and what Tansu's
fetch cost grows with. So every partition is fetched from a given offset with aiokafka's
low-level client, and the record batches of each answer are walked one by one
(`MemoryRecords`): each gives its base offset, its records, and the offset after it, where the
next fetch starts. A partition is read to its end when a fetch from there returns no batch.

Control batches (transaction markers) are neither records nor produce batches and are skipped.

Failure: a broker error on a partition (or an unreachable broker) raises KafkaError; nothing is
retried, since a count with a partition missing would be wrong. Replay: it only reads; counting
twice gives the same figures, and counting from the ends an earlier count returned gives what was
written since.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from aiokafka import TopicPartition
from aiokafka.client import AIOKafkaClient
from aiokafka.errors import KafkaError, for_code
from aiokafka.protocol.fetch import FetchRequest
from aiokafka.record.memory_records import MemoryRecords

from stream.protocol import ProtocolError, decode_commands

# Bytes asked for per partition and per answer: a changelog of a 30,000-match run holds a few
# megabytes, so a partition takes a few round trips at most.
PARTITION_FETCH_BYTES = 8 * 1024 * 1024
FETCH_BYTES = 64 * 1024 * 1024
# Tansu reads the partitions of a fetch until its wait ends and answers the rest empty (with a
# wait of 0, with no partitions at all), so an empty answer does not mean the end: a partition
# is read to its end when the offset reaches the high watermark of the Fetch answer (which,
# unlike ListOffsets, is exact there). Fetches that bring nothing new, this many in a row, fail.
FETCH_WAIT_MS = 100
IDLE_ROUNDS = 20


@dataclass(frozen=True, slots=True)
class Log:
    """What a partition (or a topic) holds: records, produce batches, and (for a partition) the
    offset after its last batch, where a later count starts."""

    records: int = 0
    batches: int = 0
    end: int = 0
    # Commands per kind ("tick", "progress", ...), on the topics counted with ``kinds_of``.
    kinds: Mapping[str, int] = field(default_factory=dict)

    def __add__(self, other: Log) -> Log:
        kinds = Counter(self.kinds)
        kinds.update(other.kinds)
        return Log(self.records + other.records, self.batches + other.batches, kinds=dict(kinds))


async def count_logs(
    bootstrap_servers: str,
    since: Mapping[TopicPartition, Log] | None = None,
    *,
    topics: Collection[str] | None = None,
    kinds_of: Collection[str] = (),
) -> dict[TopicPartition, Log]:
    """Records and batches of every partition of ``topics`` (default: every topic the broker's
    metadata lists), from the ``end`` of that partition in ``since`` (or its start) to its end;
    on the topics in ``kinds_of`` (command topics), the commands per kind as well."""
    since = since or {}
    client = AIOKafkaClient(bootstrap_servers=bootstrap_servers)
    await client.bootstrap()
    try:
        cluster = await client.fetch_all_metadata()
        names = cluster.topics() if topics is None else set(topics)
        leaders: dict[TopicPartition, int] = {}
        for topic in sorted(names):
            for partition in sorted(cluster.partitions_for_topic(topic) or ()):
                tp = TopicPartition(topic, partition)
                leaders[tp] = cluster.leader_for_partition(tp)
        logs = {tp: Log(end=since[tp].end if tp in since else 0) for tp in leaders}
        todo = set(leaders)
        idle = 0
        while todo:
            progressed = False
            by_node: dict[int, list[TopicPartition]] = {}
            for tp in sorted(todo):
                by_node.setdefault(leaders[tp], []).append(tp)
            for node, tps in by_node.items():
                answer = await client.send(node, _fetch({tp: logs[tp].end for tp in tps}))
                answered = {tp: (high, data) for tp, high, data in _partition_data(answer)}
                for tp in tps:
                    if tp not in answered:
                        continue
                    high, data = answered[tp]
                    log = _walk(logs[tp], data, kinds=tp.topic in kinds_of)
                    progressed = progressed or log.end > logs[tp].end
                    logs[tp] = log
                    if log.end >= high:
                        todo.discard(tp)
            idle = 0 if progressed else idle + 1
            if idle > IDLE_ROUNDS:
                missing = ", ".join(f"{tp.topic}[{tp.partition}]" for tp in sorted(todo))
                raise KafkaError(
                    f"{missing}: {IDLE_ROUNDS} fetches in a row returned nothing below the"
                    " high watermark, so the records cannot be counted"
                )
        return logs
    finally:
        await client.close()


def per_topic(logs: Mapping[TopicPartition, Log]) -> dict[str, Log]:
    """The partitions' counts summed per topic (without an end: it is per partition)."""
    topics: dict[str, Log] = {}
    for tp, log in logs.items():
        topics[tp.topic] = topics.get(tp.topic, Log()) + log
    return topics


def _fetch(offsets: Mapping[TopicPartition, int]) -> FetchRequest:
    by_topic: dict[str, list[tuple[int, int, int]]] = {}
    for tp, offset in offsets.items():
        by_topic.setdefault(tp.topic, []).append((tp.partition, offset, PARTITION_FETCH_BYTES))
    # No minimum: a partition at its end answers empty rather than holding the answer.
    return FetchRequest(FETCH_WAIT_MS, 0, FETCH_BYTES, 0, list(by_topic.items()))


def _partition_data(answer: Any) -> Iterable[tuple[TopicPartition, int, bytes]]:
    for topic, partitions in answer.topics:
        for partition, error_code, highwater, *rest in partitions:
            tp = TopicPartition(topic, partition)
            error = for_code(error_code)
            if error_code != 0:
                raise error(f"fetching {tp.topic}[{tp.partition}] to count its records")
            # The record data comes last in every Fetch response version.
            yield tp, highwater, rest[-1]


def _walk(log: Log, data: bytes, *, kinds: bool = False) -> Log:
    """``log`` plus the whole batches in ``data`` at or after its end; with ``kinds``, their
    records read as packed commands and counted per kind."""
    records, batches, end = log.records, log.batches, log.end
    counted = Counter(log.kinds)
    memory = MemoryRecords(data)
    while memory.has_next():
        batch = memory.next_batch()
        if batch is None:  # a partial batch at the end of the answer: fetched again next time
            break
        # A broker may answer from the start of the batch holding the offset asked for.
        if batch.next_offset <= end:
            continue
        end = batch.next_offset
        if batch.is_control_batch:
            continue
        batches += 1
        for record in batch:
            records += 1
            if kinds:
                counted.update(command_kinds(record.value))
    return Log(records, batches, end, dict(counted))


def command_kinds(value: bytes | None) -> list[str]:
    """The kinds of the commands packed in one command record (a record that is not a packed
    command message counts as one of kind "?": the worker dead-letters it)."""
    try:
        commands = decode_commands(value)
    except ProtocolError:
        return ["?"]
    return [c[0] if isinstance(c, list) and c and isinstance(c[0], str) else "?" for c in commands]
