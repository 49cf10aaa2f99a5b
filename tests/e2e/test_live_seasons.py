"""Seasons live: a worker rates 2v2 matches across hourly season boundaries (each player met
through snapshots taken at match start), is killed while the matches cross one and restarted,
and every player's last rating-changed equals `skillstream replay` of the same matches; the
events carry their season, the cache's current board holds exactly the players of the current
season, and no history lists a change twice."""

from __future__ import annotations

import time
from pathlib import Path

import orjson
from librdkafka_clients import Reader, fleet_producer
from live_replay import assert_live_equals_replay, by_player, latest
from pipeline_env import own_topics_env

from stream.cache.reader import SyncRatingCache
from stream.chaos.traffic import match_messages, waves
from stream.config.modes import load_modes
from stream.events import parse_time
from stream.local.stack import LocalStack
from stream.local.workers import WorkerProcess
from stream.simulation import SimulationConfig, simulate
from stream.simulation.config import DEFAULT_START

# Hourly seasons from the simulation's start; 240 matches at 0.02/s span about 3.3 hours.
MODES_FILE = """
[default.seasons]
starts = [2026-01-01T00:00:00Z]
period_days = 0.041666666666666664
deviation_reset = 0.5
rank_points_kept = 0.5
"""


def test_live_equals_replay_across_season_boundaries_and_a_crash_at_one(
    stack: LocalStack, tmp_path: Path
) -> None:
    modes_path = tmp_path / "modes.toml"
    modes_path.write_text(MODES_FILE)
    env = {**own_topics_env(stack, "s"), "SKILLSTREAM_MODES_FILE": str(modes_path)}
    schedule = load_modes(modes_path).default.seasons
    assert schedule is not None and schedule.start_of(1) == DEFAULT_START
    matches = list(simulate(SimulationConfig(seed=17, matches=240, players=60, team_size=2)))
    seasons = {schedule.season_of(m.at) for m in matches}
    assert len(seasons) >= 3, seasons
    # The crash: right after producing the wave that crosses the second season's start.
    boundary = schedule.start_of(2)
    topic = env["SKILLSTREAM_TOPIC_RATING_CHANGED"]
    producer = fleet_producer(env["KAFKA_BOOTSTRAP_SERVERS"])
    worker = WorkerProcess(env, "a").start()
    reader = Reader(env["KAFKA_BOOTSTRAP_SERVERS"], topic, int(env["SKILLSTREAM_PARTITIONS"]))
    crashed = False
    try:
        done = 0
        for wave in waves(matches):
            for message_topic, key, value in match_messages(
                wave,
                env["SKILLSTREAM_TOPIC_MATCH_STARTED"],
                env["SKILLSTREAM_TOPIC_MATCH_FINISHED"],
            ):
                producer.produce(message_topic, value, key)
            assert producer.flush(30) == 0
            done += len(wave)
            if not crashed and max(m.at for m in wave) >= boundary:
                # Killed with the boundary's matches in flight: nothing flushed or committed.
                worker.kill()
                worker = WorkerProcess(env, "b").start()
                crashed = True
            assert len(reader.until(4 * done)) >= 4 * done
        assert crashed
        records = reader.until(10 * len(matches), timeout=3.0)
    finally:
        reader.close()
        worker.cleanup()

    events = [orjson.loads(record.value()) for record in records]
    for event in events:
        assert event["season"] == schedule.season_of(parse_time(event["at"])), event
    assert len({(e["player_id"], e["match_id"]) for e in events}) == 4 * len(matches)
    last = latest(events, by_player)
    assert_live_equals_replay(last, matches, tmp_path, "--modes-file", str(modes_path))

    # The cache: the current board is the current season's players, and histories hold every
    # change once, newest first.
    mode = matches[0].mode
    current = max(e["season"] for e in last.values())
    expected = {p: e["rank_points"] for p, e in last.items() if e["season"] == current}
    cache = SyncRatingCache.from_url(
        env["REDIS_URL"], load_modes(modes_path), prefix=env["SKILLSTREAM_CACHE_PREFIX"]
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            board = {e.player_id: e.score for e in cache.top(mode, 1000)}
            if board == expected or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert board == expected
        assert cache.seasons(mode).current == current
        for player, event in last.items():
            versions = [h.version for h in cache.history(mode, player, 20)]
            assert versions == list(range(event["version"], max(event["version"] - 20, 0), -1))
    finally:
        cache.close()
