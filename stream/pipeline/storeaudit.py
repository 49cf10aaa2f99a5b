"""Each table partition a worker keeps, compared with its changelog: a check for fault runs.

What: with ``SKILLSTREAM_AUDIT_STORES`` on (off by default; ``skillstream chaos`` turns it on
for its workers), each time a recovery ends the worker copies what its stores hold of every
partition they keep (memory: active or standby; RocksDB: every partition open on its volume),
with the changelog offset each says it holds
(:func:`snapshot`), then reads each of those changelogs from its start up to that offset in the
background (:func:`differences`). A partition whose contents are not its changelog applied up
to there is logged as an ERROR starting ``store audit:``, naming the table, the partition, the
offset and a key; otherwise one INFO line counts the partitions checked.

Why: a copy kept across a rebalance (a standby's, stream/pipeline/workarounds/standbys.py) is
used as the table at a fail-over, and recovery then reads only the changelog after the offset it
reports: a copy that differs from its changelog is a table that differs for good. It shows in a
rating only when that copy is taken over and a differing key is read, rarely in a short run, so
the fault harness checks the copies themselves and fails on any such line.

Failure: a copy whose changelog ends before the offset it claims is an ERROR, like a
difference; a changelog the broker does not serve within ``READ_SECONDS`` is given up with a
WARNING; any other failure is an ERROR (``store audit: failed``); the worker goes on either
way, and the audit never changes a store. Limit: a changelog compacted below the offset a copy
holds can differ from the copy where both are right (compaction keeps only a key's newest
record); the fault harness's short runs never compact. Replay: reads only. Cost: a copy of the
stores per recovery, and a read of each kept changelog from its start: for fault runs.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from aiokafka import AIOKafkaConsumer, TopicPartition
from aiokafka.errors import KafkaError

from stream.pipeline.workarounds.standbys import GuardedRocksDBStore, StandbyMemoryStore

__all__ = ["Copy", "audit", "differences", "fold", "schedule", "snapshot"]

log = logging.getLogger("skillstream.worker")

# A changelog record: offset, key, value (None: deleted).
Record = tuple[int, bytes | None, bytes | None]

# How long one changelog's read may wait for the broker (longer than the fault harness's
# broker pause): past it the audit of that copy is given up with a warning, not an error.
READ_SECONDS = 120.0


@dataclass(frozen=True)
class Copy:
    """What a store held of one changelog partition when a recovery ended."""

    table: str
    topic: str
    partition: int
    offset: int
    contents: Mapping[bytes, bytes]


def snapshot(stores: Mapping[str, Any]) -> list[Copy]:
    """The copies ``stores`` (table name to store) hold now: skillstream's memory and RocksDB
    stores (stream/pipeline/workarounds/standbys.py); any other store is skipped."""
    copies = []
    for name, store in stores.items():
        if not isinstance(store, StandbyMemoryStore | GuardedRocksDBStore):
            continue
        topic = store.table.changelog_topic.get_topic_name()
        for partition, offset in store.held_offsets().items():
            contents = store.partition_contents(partition)
            copies.append(Copy(name, topic, partition, offset, contents))
    return copies


def fold(
    records: Iterable[tuple[int, bytes | None, bytes | None]], upto: int
) -> dict[bytes, bytes]:
    """A changelog's records (offset, key, value) applied in order up to offset ``upto``:
    last write wins, a value of None deletes."""
    table: dict[bytes, bytes] = {}
    for offset, key, value in records:
        if offset > upto:
            break
        if key is None:
            continue
        if value is None:
            table.pop(key, None)
        else:
            table[key] = value
    return table


def differences(copy: Copy, log_table: Mapping[bytes, bytes]) -> list[bytes]:
    """The keys whose value differs between ``copy`` and its changelog folded (sorted)."""
    held = copy.contents
    return sorted(k for k in set(held) | set(log_table) if held.get(k) != log_table.get(k))


async def _read(consumer: AIOKafkaConsumer, copy: Copy) -> list[Record] | None:
    """The changelog's records up to ``copy.offset``; None when the changelog ends before it.
    Waits for a broker that does not answer (the caller bounds the wait)."""
    tp = TopicPartition(copy.topic, copy.partition)
    consumer.assign([tp])
    await consumer.seek_to_beginning(tp)
    records: list[Record] = []
    while True:
        batches = await consumer.getmany(tp, timeout_ms=200)
        got = batches.get(tp, [])
        records.extend((r.offset, r.key, r.value) for r in got)
        if records and records[-1][0] >= copy.offset:
            return records
        end = consumer.highwater(tp)
        read_to = records[-1][0] + 1 if records else 0
        if not got and end is not None and read_to >= end:
            return None  # the changelog ends before the offset the store says it holds


async def audit(bootstrap_servers: str, options: Mapping[str, Any], copies: list[Copy]) -> int:
    """Compare every copy with its changelog, logging each that differs; returns how many do
    (a copy whose changelog ends before its offset counts). A copy whose changelog the broker
    does not serve in time is given up with a warning; any other failure is logged as an
    error. The last line counts the copies compared, those that differ and those given up."""
    bad = compared = given_up = 0
    try:
        consumer = AIOKafkaConsumer(
            bootstrap_servers=bootstrap_servers, enable_auto_commit=False, **options
        )
        await asyncio.wait_for(consumer.start(), READ_SECONDS)
    except (KafkaError, TimeoutError) as exc:
        log.warning("store audit: gave up, the broker did not answer (%s)", exc)
        return 0
    except Exception as exc:
        log.error("store audit: failed (%s: %s)", type(exc).__name__, exc)
        return 0
    try:
        for copy in copies:
            where = f"{copy.table}[{copy.partition}] at changelog offset {copy.offset}"
            try:
                records = await asyncio.wait_for(_read(consumer, copy), READ_SECONDS)
            except (KafkaError, TimeoutError) as exc:
                given_up += 1
                log.warning("store audit: gave up reading the changelog of %s (%s)", where, exc)
                continue
            compared += 1
            if records is None:
                bad += 1
                log.error("store audit: the changelog of %s ends before that offset", where)
                continue
            keys = differences(copy, fold(records, copy.offset))
            if keys:
                bad += 1
                log.error(
                    "store audit: %s differs from its changelog in %d key(s), e.g. %r",
                    where,
                    len(keys),
                    keys[0],
                )
    except Exception as exc:
        log.error("store audit: failed (%s: %s)", type(exc).__name__, exc)
        return bad
    finally:
        await consumer.stop()
    log.info(
        "store audit: %d kept partition(s) compared, %d differ, %d given up",
        compared,
        bad,
        given_up,
    )
    return bad


# The audits running, kept so that none is collected before it is done.
RUNNING: set[asyncio.Task[int]] = set()


def schedule(
    stores: Mapping[str, Any], bootstrap_servers: str, options: Mapping[str, Any]
) -> asyncio.Task[int] | None:
    """Copy ``stores`` now and audit the copies in the background (None when the copy itself
    failed: logged as an error, and the recovery goes on)."""
    try:
        copies = snapshot(stores)
    except Exception as exc:
        log.error("store audit: could not copy the stores (%s: %s)", type(exc).__name__, exc)
        return None
    task = asyncio.ensure_future(audit(bootstrap_servers, options, copies))
    RUNNING.add(task)
    task.add_done_callback(_done)
    return task


def _done(task: asyncio.Task[int]) -> None:
    RUNNING.discard(task)
    if not task.cancelled() and task.exception() is not None:
        exc = task.exception()
        log.error("store audit: failed (%s: %s)", type(exc).__name__, exc)
