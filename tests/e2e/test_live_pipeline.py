"""The live pipeline end to end: real Tansu broker, real worker processes, and librdkafka
(confluent-kafka) as the fleet's and the analytics team's independent client."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import orjson
import pytest
from confluent_kafka import Consumer
from librdkafka_clients import Reader, fleet_producer
from live_replay import assert_live_equals_replay, by_player, latest
from pipeline_env import own_topics_env
from redis import Redis

from stream.bench.topics import Log, count_logs
from stream.cache.entry import CachedRating
from stream.cache.reader import SyncRatingCache
from stream.chaos.traffic import waves
from stream.chaos.verify import cached_fields, event_fields
from stream.config.modes import Modes
from stream.local.stack import LocalStack
from stream.local.workers import WorkerProcess
from stream.simulation import SimulationConfig, simulate
from stream.simulation.gamefleet import match_events


@pytest.fixture
def env(stack: LocalStack) -> dict[str, str]:
    """Settings for one test's own app id and topics on the shared broker."""
    return own_topics_env(stack, "t")


def produce(env: dict[str, str], messages: list[tuple[str, bytes | None, bytes]]) -> None:
    producer = fleet_producer(env["KAFKA_BOOTSTRAP_SERVERS"])
    for topic, key, value in messages:
        producer.produce(topic, value, key)
    assert producer.flush(30) == 0


def consume(env: dict[str, str], topic: str, until: int, timeout: float = 90.0) -> list[Any]:
    consumer = Consumer(
        {
            "bootstrap.servers": env["KAFKA_BOOTSTRAP_SERVERS"],
            "group.id": f"reader-{uuid.uuid4().hex[:6]}",
            "auto.offset.reset": "earliest",
        }
    )
    consumer.subscribe([topic])
    records: list[Any] = []
    deadline = time.monotonic() + timeout
    try:
        while len(records) < until and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                records.append(message)
    finally:
        consumer.close()
    return records


def history_messages(
    env: dict[str, str], matches: list[Any]
) -> list[tuple[str, bytes | None, bytes]]:
    out: list[tuple[str, bytes | None, bytes]] = []
    for m in matches:
        start, finish = match_events(m, None, omit_teams=False)
        key = m.match_id.encode()
        out.append((env["SKILLSTREAM_TOPIC_MATCH_STARTED"], key, orjson.dumps(start)))
        out.append((env["SKILLSTREAM_TOPIC_MATCH_FINISHED"], key, orjson.dumps(finish)))
    return out


def test_live_ratings_equal_replay_across_a_worker_crash(
    env: dict[str, str], tmp_path: Path
) -> None:
    matches = list(simulate(SimulationConfig(seed=11, matches=240, players=60, team_size=2)))
    half = len(matches) // 2
    topic = env["SKILLSTREAM_TOPIC_RATING_CHANGED"]
    worker = WorkerProcess(env, "a").start()
    reader = Reader(env["KAFKA_BOOTSTRAP_SERVERS"], topic, int(env["SKILLSTREAM_PARTITIONS"]))
    try:
        done = 0
        for wave in waves(matches[:half]):
            produce(env, history_messages(env, wave))
            done += len(wave)
            assert len(reader.until(4 * done)) >= 4 * done
        # A crash: nothing flushed, nothing committed. The restarted worker recovers the
        # tables from their changelogs and may see the last batches again.
        worker.kill()
        # The cache loses everything (say, Redis was replaced) and is rebuilt from the ratings
        # changelog while the second half streams in and the restarted worker writes it live.
        cache = Redis.from_url(env["REDIS_URL"])
        keys = list(cache.scan_iter(match=f"{env['SKILLSTREAM_CACHE_PREFIX']}:*"))
        assert keys
        cache.delete(*keys)
        cache.close()
        worker = WorkerProcess(env, "b").start()
        rebuild = subprocess.Popen(
            [sys.executable, "-m", "stream", "cache", "rebuild"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        for wave in waves(matches[half:]):
            produce(env, history_messages(env, wave))
            done += len(wave)
            reader.until(4 * done)
        output, _ = rebuild.communicate(timeout=60)
        assert rebuild.returncode == 0, output.decode()
        assert b"changelog records" in output
        # Redelivered duplicates (byte-identical) may follow; give them a moment.
        records = reader.until(10 * len(matches), timeout=3.0)
        # The cache converges on every player's last rating-changed event (checked below).
        converged = wait_for_cache(env, records)
        cache_log = [line for line in worker.output().splitlines() if "cache" in line]
    finally:
        reader.close()
        worker.cleanup()
    assert_exactly_once(records, 4 * len(matches))
    assert converged, "\n".join(cache_log[-20:])
    assert_equals_replay(records, matches, tmp_path)


def test_sigterm_hands_the_work_over_with_nothing_lost_or_applied_twice(
    env: dict[str, str], tmp_path: Path
) -> None:
    matches = list(simulate(SimulationConfig(seed=12, matches=200, players=50)))
    groups = list(waves(matches))
    topic = env["SKILLSTREAM_TOPIC_RATING_CHANGED"]
    first = WorkerProcess(env, "first").start()
    second = WorkerProcess(env, "second").start()  # joins the group: the partitions are shared
    reader = Reader(env["KAFKA_BOOTSTRAP_SERVERS"], topic, int(env["SKILLSTREAM_PARTITIONS"]))
    try:
        done = 0
        for index, wave in enumerate(groups):
            produce(env, history_messages(env, wave))
            done += len(wave)
            if index == len(groups) // 2:
                # SIGTERM while this wave is in flight: the worker finishes its batch, flushes,
                # commits and leaves; the other takes its partitions over.
                assert first.stop(timeout=60) == 0, first.output()[-3000:]
            assert len(reader.until(2 * done)) >= 2 * done
        records = reader.until(10 * len(matches), timeout=3.0)
    finally:
        reader.close()
        first.cleanup()
        second.cleanup()
    assert_exactly_once(records, 2 * len(matches))
    assert_equals_replay(records, matches, tmp_path)


def assert_exactly_once(records: list[Any], expected: int) -> None:
    """Every (player, match) has exactly one distinct rating-changed (a redelivery may repeat
    it byte for byte), and there is one for each of the ``expected`` player results."""
    distinct: dict[tuple[str, str], bytes] = {}
    for r in records:
        e = orjson.loads(r.value())
        key = (e["player_id"], e["match_id"])
        assert distinct.setdefault(key, r.value()) == r.value()
        assert e["outcome"] in ("win", "loss", "draw"), e
    assert len(distinct) == expected


def assert_equals_replay(records: list[Any], matches: list[Any], tmp_path: Path) -> None:
    """Each player's last rating-changed equals `skillstream replay` of the same matches, and
    its version counts the player's games."""
    last = latest((orjson.loads(r.value()) for r in records), by_player)
    assert_live_equals_replay(last, matches, tmp_path)
    assert all(e["version"] == e["games"] for e in last.values())


def wait_for_cache(env: dict[str, str], records: list[Any], timeout: float = 20.0) -> bool:
    """Whether every player's cached entry comes to equal their last rating-changed event."""
    events = (orjson.loads(record.value()) for record in records)
    last = latest(events, key=lambda e: (e["mode"], e["player_id"]))
    expected = {key: _event_fields(e) for key, e in last.items()}
    reader = SyncRatingCache.from_url(
        env["REDIS_URL"], Modes(), prefix=env["SKILLSTREAM_CACHE_PREFIX"]
    )

    def cached() -> dict[tuple[str, str], tuple[Any, ...]]:
        found: dict[tuple[str, str], tuple[Any, ...]] = {}
        for mode in {m for m, _ in expected}:
            players = [p for m, p in expected if m == mode]
            for pid, entry in reader.get_many(mode, players).items():
                found[(mode, pid)] = _cache_fields(entry)
        return found

    try:
        deadline = time.monotonic() + timeout
        while cached() != expected:
            if time.monotonic() > deadline:
                return False
            time.sleep(0.2)
        return True
    finally:
        reader.close()


def _cache_fields(entry: CachedRating) -> tuple[Any, ...]:
    return (*cached_fields(entry), entry.unknown)


def _event_fields(event: dict[str, Any]) -> tuple[Any, ...]:
    return (*event_fields(event), False)


def test_bad_input_reaches_the_dead_letter_topic_and_good_input_is_rated(
    env: dict[str, str],
) -> None:
    worker = WorkerProcess(env, "dlq").start()
    started, finished = (
        env["SKILLSTREAM_TOPIC_MATCH_STARTED"],
        env["SKILLSTREAM_TOPIC_MATCH_FINISHED"],
    )
    bad = [
        (finished, b"k1", b"{broken"),
        (started, b"k2", b'{"match_id": "m2", "mode": "1v1", "teams": [["a"], ["b"]]}'),
        (
            started,
            None,
            b'{"match_id": "m3", "mode": "1v1", "started_at": 1780000000000, "teams": [["a"], []]}',
        ),
    ]
    good = [
        (
            started,
            b"g1",
            b'{"match_id": "g1", "mode": "1v1", "started_at": 1780000000000, '
            b'"teams": [["x"], ["y"]]}',
        ),
        (
            finished,
            b"g1",
            b'{"match_id": "g1", "mode": "1v1", "finished_at": 1780000060000, "ranks": [1, 1]}',
        ),
    ]
    try:
        produce(env, [bad[0], good[0], bad[1], bad[2], good[1]])
        letters = consume(env, env["SKILLSTREAM_TOPIC_DLQ"], 3)
        ratings = consume(env, env["SKILLSTREAM_TOPIC_RATING_CHANGED"], 2)
    finally:
        worker.cleanup()
    assert sorted(m.value() for m in letters) == sorted(value for _, _, value in bad)
    for m in letters:
        headers = dict(m.headers())
        assert headers["skillstream.source.topic"].decode() in (started, finished)
        assert int(headers["skillstream.source.offset"]) >= 0
        assert headers["skillstream.error.reason"]
    assert sorted(orjson.loads(m.value())["outcome"] for m in ratings) == ["draw", "draw"]


def test_a_worker_with_nothing_pending_writes_no_control_records(env: dict[str, str]) -> None:
    # Issue 48: the event-time protocol falls silent once nothing is pending anywhere (no
    # tick, no report, no view), and wakes for the next match.
    worker = WorkerProcess(env, "quiet").start()
    commands = f"{env['SKILLSTREAM_APP_ID']}-match-commands"
    servers = env["KAFKA_BOOTSTRAP_SERVERS"]

    def match(n: int) -> list[tuple[str, bytes | None, bytes]]:
        at = 1_780_000_000_000 + n * 120_000
        key = f"q{n}".encode()
        start = {"match_id": f"q{n}", "mode": "1v1", "started_at": at, "teams": [["x"], ["y"]]}
        finish = {"match_id": f"q{n}", "mode": "1v1", "finished_at": at + 60_000, "ranks": [1, 2]}
        return [
            (env["SKILLSTREAM_TOPIC_MATCH_STARTED"], key, orjson.dumps(start)),
            (env["SKILLSTREAM_TOPIC_MATCH_FINISHED"], key, orjson.dumps(finish)),
        ]

    def written_within(seconds: float, since: dict[Any, Log]) -> tuple[int, dict[Any, Log]]:
        time.sleep(seconds)
        logs = asyncio.run(count_logs(servers, since, topics=[commands]))
        return sum(log.records for log in logs.values()), logs

    try:
        produce(env, match(1))
        assert len(consume(env, env["SKILLSTREAM_TOPIC_RATING_CHANGED"], 2)) == 2
        _, logs = written_within(0, {})
        quiet = []
        for _ in range(8):
            written, logs = written_within(2.0, logs)
            quiet.append(written)
            if written == 0:
                break
        produce(env, match(2))
        assert len(consume(env, env["SKILLSTREAM_TOPIC_RATING_CHANGED"], 4)) == 4
    finally:
        worker.cleanup()
    # Settling takes a few rounds; then two seconds without a single command record (ticks
    # alone were ten a second before).
    assert quiet[-1] == 0, f"command records per 2 s after the match: {quiet}"
