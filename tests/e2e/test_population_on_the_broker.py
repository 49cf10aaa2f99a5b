"""A mode that learns its population, on the real broker: two workers drain a backlog that
spans a dozen learning windows, one of them SIGKILLed on the way; every rating equals replay
with the same modes file, the population the events carry moves from window to window, and the
cache holds the latest for the matchmakers (docs/decisions.md, "The learned population live")."""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
import redis
from builders import T0
from librdkafka_clients import Reader, fleet_producer
from pipeline_env import own_topics_env
from replay_1v1 import Match, as_history, replayed_history, timed_events

from stream.cache.keys import KeyLayout
from stream.chaos.verify import event_fields
from stream.config.modes import load_modes
from stream.local.stack import LocalStack
from stream.local.workers import WorkerProcess

# Five-minute windows over an hour of matches: twelve windows, each folded live.
MODES_TOML = """
[default.population]
window_days = 0.003472222222222222
"""
MATCHES = 500
PLAYERS = 240


def timeline(seed: int) -> list[Match]:
    """1v1 matches among many newcomers, a new one every 7 s, each 2 minutes long, no player in
    two at once."""
    rng = random.Random(seed)
    free_at = {f"p{i:03d}": 0.0 for i in range(PLAYERS)}
    matches: list[Match] = []
    for i in range(MATCHES):
        start = T0 + i * 7.0
        idle = sorted(pid for pid, at in free_at.items() if at < start)
        a, b = rng.sample(idle, 2)
        finish = start + 120.0
        free_at[a] = free_at[b] = finish
        matches.append((f"m{i:04d}", start, finish, [[a], [b]], rng.choice([[0, 1], [1, 0]])))
    return matches


# Killed after these many ratings were read: before every window was closed, and (0.1) while
# the first commit's changelog flush of a backlog read in one go may still be under way.
@pytest.mark.parametrize("killed_after", [0.1, 0.25, 0.5])
def test_a_learning_mode_drained_across_a_kill_is_rated_as_replay_and_cached(
    stack: LocalStack, tmp_path: Path, killed_after: float
) -> None:
    modes_file = tmp_path / "modes.toml"
    modes_file.write_text(MODES_TOML, encoding="utf-8")
    env = {**own_topics_env(stack, "l"), "SKILLSTREAM_MODES_FILE": str(modes_file)}
    matches = timeline(seed=27)
    producer = fleet_producer(env["KAFKA_BOOTSTRAP_SERVERS"])
    for _at, topic, match_id, event in timed_events(env, matches):
        producer.produce(topic, orjson.dumps(event), match_id.encode())
    assert producer.flush(30) == 0
    reader = Reader(env["KAFKA_BOOTSTRAP_SERVERS"], env["SKILLSTREAM_TOPIC_RATING_CHANGED"], 4)
    first = WorkerProcess(env, "learn-a").start()
    second: WorkerProcess | None = None

    def rated(records: list[Any]) -> int:
        return len({(r.key(), orjson.loads(r.value())["match_id"]) for r in records})

    try:
        reader.until(round(2 * MATCHES * killed_after), timeout=180.0)
        first.kill()
        second = WorkerProcess(env, "learn-b").start()
        reader.read_until(lambda records: rated(records) >= 2 * MATCHES, timeout=240.0)
        # What a redelivery after the kill adds is read too (each must repeat its bytes).
        records = reader.read_until(lambda records: False, timeout=3.0)
        latest = max((orjson.loads(r.value()) for r in records), key=lambda e: e["at"])
        cached = cached_population(env, latest["population"])
    finally:
        reader.close()
        # Stopped, not cleaned up: a failed run keeps both workers' logs to be read (a passing
        # one removes them at its end, tests/conftest.py).
        first.stop()
        if second is not None:
            second.stop()
    live: dict[tuple[str, str], tuple[Any, ...]] = {}
    seen: dict[tuple[str, str], bytes] = {}
    populations = set()
    for record in records:
        event = orjson.loads(record.value())
        key = (event["player_id"], event["match_id"])
        assert seen.setdefault(key, record.value()) == record.value(), f"{key} rated twice"
        live[key] = event_fields(event)[:5]
        populations.add(tuple(event["population"].values()))
    want = replayed_history(as_history(matches), load_modes(modes_file))
    assert live.keys() == want.keys()
    differ = sorted(key for key in want if live[key] != want[key])
    assert not differ, f"{len(differ)} of {len(want)} differ from replay: {differ[:5]}"
    assert len(populations) >= 5  # the population moved, window after window
    # The cache writer keeps the mode's latest population for the matchmakers.
    assert cached == {k: v for k, v in latest["population"].items() if v is not None}


def cached_population(env: dict[str, str], want: dict[str, Any]) -> dict[str, float]:
    """The mode's population in the cache, once it is ``want`` (or after 30 s)."""
    client = redis.Redis.from_url(env["REDIS_URL"], decode_responses=True)
    key = KeyLayout(env["SKILLSTREAM_CACHE_PREFIX"]).population("1v1")
    wanted = {k: v for k, v in want.items() if v is not None}
    deadline = time.monotonic() + 30.0
    found: dict[str, float] = {}
    while time.monotonic() < deadline:
        stored: dict[str, str] = client.hgetall(key)  # type: ignore[assignment]
        found = {k: float(v) for k, v in stored.items() if k != "at" and v != ""}
        if found == wanted:
            break
        time.sleep(0.5)
    return found
