"""End offsets read from the log itself, for brokers whose ListOffsets answer is too low.

Faust recovers a table partition by reading its changelog up to the end offset the broker
reports, then stops. Tansu (the local broker) reports the base offset of a partition's last
record batch plus one (docs/decisions.md, known problems), so the records after the first one
of that last batch were left out of recovery: a restarted worker lost the newest changes of its
tables, and matches in flight stalled. Every worker reads each changelog partition from one
before the reported end to its real end and recovers up to there, whatever the broker: a
setting that turned it off (it was one, off by default) lost state silently on the brokers that
need it, and it costs one fetch per changelog partition per recovery (docs/decisions.md,
"The changelog's end is read, not trusted"). Apache Kafka reports end offsets exactly, and
the scan then only confirms them. A changelog shorter than written for any other reason is
found by the tables' checkpoints (stream/pipeline/checkpoints.py).

Upstream: none found in Tansu's tracker (searched 2026-11-25); the broker's answer is the bug,
and Faust and aiokafka trust ListOffsets, as they should.

Written for faust-streaming 0.15.3, aiokafka 0.14.0, mode-streaming 0.7.1, and Tansu 0.6.0.
tests/integration/pipeline/workarounds/test_end_offsets.py holds a strict expected failure that
passes once the broker reports end offsets exactly (then remove this), and checks the scan;
tests/unit/pipeline/workarounds/test_end_offsets_patch.py checks that recovery uses it.

Failure: a fetch error propagates and fails the recovery, which Faust retries as it does for
its own errors; a broker that does not answer keeps the scan waiting until Faust's own timeout
for the step (``broker_request_timeout``) fails the recovery, as a silent broker does to
Faust's own reads. Replay: nothing is written; the scan only reads.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, cast

from aiokafka import AIOKafkaConsumer, TopicPartition
from faust.tables.recovery import Recovery
from faust.types import TP


async def scan_end_offsets(
    bootstrap_servers: str, reported: Mapping[TP, int | None], options: Mapping[str, Any]
) -> dict[TP, int | None]:
    """The real end offset (last offset + 1) of every partition in ``reported``.

    Each partition is read from one before its reported end until a fetch answer for it has
    come back: that answer's high watermark (exact on Tansu, unlike ListOffsets) and its
    records, whole batches, show where the log really ends. Partitions reported empty or
    unknown keep their reported value. Until 2026-12-05 a partition's scan ended after two
    empty polls, which a broker slow to answer its first fetch (just after a pause) also
    gives: the reported, too low, end was kept, a standby's store then held more than that end
    and Faust's recovery stopped with a ConsistencyError (found by `skillstream chaos --seed 21`
    with standby copies kept).
    """
    ends: dict[TP, int | None] = dict(reported)
    todo = {tp: end for tp, end in reported.items() if end}
    if not todo:
        return ends
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap_servers,
        enable_auto_commit=False,
        fetch_max_wait_ms=20,
        **options,
    )
    await consumer.start()
    try:
        partitions = {TopicPartition(tp.topic, tp.partition): tp for tp in todo}
        consumer.assign(list(partitions))
        for kafka_tp, tp in partitions.items():
            consumer.seek(kafka_tp, todo[tp] - 1)
        waiting = set(partitions)
        while waiting:
            batches = await consumer.getmany(timeout_ms=100)
            for kafka_tp in list(waiting):
                tp = partitions[kafka_tp]
                records = batches.get(kafka_tp)
                if records:
                    ends[tp] = max(ends[tp] or 0, records[-1].offset + 1)
                highwater = consumer.highwater(kafka_tp)
                if highwater is not None:
                    ends[tp] = max(ends[tp] or 0, highwater)
                    waiting.discard(kafka_tp)
    finally:
        await consumer.stop()
    return ends


def verify_end_offsets(bootstrap_servers: str, options: Mapping[str, Any]) -> None:
    """Make Faust's recovery use :func:`scan_end_offsets` (patched once per process; a later
    call changes the brokers the scans read from)."""
    # The brokers live on the patched class: the patched method reads them when it runs.
    Recovery.skillstream_end_scan = (bootstrap_servers, dict(options))  # type: ignore[attr-defined]
    if hasattr(Recovery._build_highwaters, "__wrapped__"):
        return
    original = Recovery._build_highwaters

    @functools.wraps(original)
    async def build_highwaters(
        self: Recovery, consumer: Any, tps: Any, destination: Any, title: str
    ) -> None:
        class Scanning:
            """The consumer, with its end offsets checked against the log."""

            async def highwaters(self, *partitions: TP) -> dict[TP, int | None]:
                reported = await consumer.highwaters(*partitions)
                servers, options = Recovery.skillstream_end_scan  # type: ignore[attr-defined]
                return await scan_end_offsets(servers, reported, options)

        await original(self, cast(Any, Scanning()), tps, destination, title)

    Recovery._build_highwaters = build_highwaters  # type: ignore[method-assign]
