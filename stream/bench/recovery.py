"""How long a (re)started worker takes to recover its tables, for a given number of players.

The ratings changelog is filled directly with one full record per player (what the player agent
writes: state, version, the last 16 match ids), on the partition the player's rating lives on,
so the figure is about recovery, not about rating 50,000 matches first. Then a worker starts and
the time to Faust's "Worker ready" (partitions assigned, every table recovered) is measured:
against an empty deployment (the fixed cost of starting), with the players (memory store: the
whole changelog is read), and with RocksDB twice (a fresh volume reads everything; a restart on
the same volume reads only the tail). Last, what reading every changelog partition's real end
costs, which every worker does before it recovers (stream/pipeline/workarounds/endoffsets.py).
"""

from __future__ import annotations

import asyncio
import random
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from aiokafka import AIOKafkaProducer

from stream.bench.failover import Failover, run_failover
from stream.config.settings import TABLES, Settings
from stream.local.workers import WorkerProcess
from stream.pipeline.partitioning import partition_for
from stream.pipeline.topics import ensure_topics
from stream.pipeline.view import StateView
from stream.protocol import RATINGS, RECENT_MATCHES, RatingRecord, rating_key
from stream.ratings.skill import PlayerState


@dataclass(frozen=True)
class RecoveryTiming:
    label: str
    players: int
    seconds: float


async def fill_ratings_changelog(
    settings: Settings, players: int, progress: Callable[[int], None] | None = None
) -> None:
    """One rating record per player in the ratings changelog, as the worker would write it."""
    await ensure_topics(settings)
    rng = random.Random(5)
    producer = AIOKafkaProducer(
        bootstrap_servers=settings.kafka.bootstrap_servers, linger_ms=20, max_batch_size=512 * 1024
    )
    await producer.start()
    try:
        topic = settings.ratings_changelog_topic
        for i in range(players):
            player = f"player-{i:08d}"
            view = StateView({}, RATINGS)
            record = RatingRecord(
                PlayerState(1500 + rng.gauss(0, 200), 60.0, 0.06, rng.randrange(10000), 40, 1.78e9),
                version=40,
                recent=[f"match-{rng.randrange(10**9):012d}" for _ in range(RECENT_MATCHES)],
            )
            view.put(rating_key(player, "ranked-1v1"), record)
            ((key, value),) = view.changes().items()
            partition = partition_for(player, settings.partitions)
            await producer.send(topic, value, key=key, partition=partition)
            if progress is not None and i % 5000 == 0:
                progress(i)
        await producer.flush()
        if progress is not None:
            progress(players)
    finally:
        await producer.stop()


def time_start(env: Mapping[str, str], label: str, players: int) -> RecoveryTiming:
    """Seconds from starting ``skillstream worker`` to its "Worker ready"."""
    worker = WorkerProcess(env, label)
    started = time.monotonic()
    try:
        worker.start(timeout=600)
        seconds = time.monotonic() - started
    finally:
        worker.cleanup()
    return RecoveryTiming(label, players, seconds)


async def _end_scan(settings: Settings, rounds: int = 5) -> float:
    """The median seconds of reading the real end of every changelog partition (every table,
    every partition) from one before the broker's reported end, as a recovery does."""
    from aiokafka import AIOKafkaConsumer, TopicPartition
    from faust.types import TP

    from stream.pipeline.workarounds.endoffsets import scan_end_offsets

    consumer = AIOKafkaConsumer(bootstrap_servers=settings.kafka.bootstrap_servers)
    await consumer.start()
    try:
        tps = [
            TopicPartition(settings.changelog_topic(table), p)
            for table in TABLES
            for p in range(settings.partitions)
        ]
        reported = await consumer.end_offsets(tps)
    finally:
        await consumer.stop()
    ends: dict[TP, int | None] = {TP(tp.topic, tp.partition): o for tp, o in reported.items()}
    seconds = []
    for _ in range(rounds):
        started = time.monotonic()
        await scan_end_offsets(settings.kafka.bootstrap_servers, ends, {})
        seconds.append(time.monotonic() - started)
    return sorted(seconds)[rounds // 2]


def run_recovery(
    env: Mapping[str, str], players: int, progress: Callable[[int], None] | None = None
) -> list[RecoveryTiming]:
    # The lost worker's run below joins the same group: Tansu keeps the session of a group's
    # first member, so these runs use the session it would (the stack's).
    empty = {**env, "SKILLSTREAM_APP_ID": "recovery-empty"}
    full = {**env, "SKILLSTREAM_APP_ID": "recovery-full"}
    timings = [time_start(empty, "empty deployment, memory store", 0)]
    asyncio.run(fill_ratings_changelog(Settings.from_env(full), players, progress))
    timings.append(time_start(full, "memory store", players))
    with tempfile.TemporaryDirectory() as data:
        rocks = {**full, "SKILLSTREAM_STORE": "rocksdb", "SKILLSTREAM_DATA_DIR": data}
        timings.append(time_start(rocks, "RocksDB, fresh volume", players))
        timings.append(time_start(rocks, "RocksDB, restart on its volume", players))
    settings = Settings.from_env(full)
    changelogs = len(TABLES) * settings.partitions
    label = f"of which reading {changelogs} changelogs' ends"
    timings.append(RecoveryTiming(label, players, asyncio.run(_end_scan(settings))))
    return timings


def run_lost_worker(env: Mapping[str, str], players: int) -> Failover:
    """The same players; two workers, one lost with its disk mid-run (stream/bench/failover.py),
    with the session timeout ``env`` gives (the local stack's, stream.local.stack)."""
    return run_failover({**env, "SKILLSTREAM_APP_ID": "recovery-full"}, players)
