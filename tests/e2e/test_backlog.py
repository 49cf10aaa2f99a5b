"""A backlog published while no worker ran, then drained: live against replay, match by match.

The situation of issue 15: the fleets kept publishing during an outage, and the worker reads
two topics and many partitions in whatever order the broker serves them. The promise is that
every rating-changed equals what `skillstream replay` computes for the same match, applied in
the order the matches were played (docs/event-time.md). Before watermarks, 429 of these 600
differed: a player's later match was joined (and its snapshot taken) before an earlier one
whose start sat on a partition read later, and finishes were read before their starts.
"""

from __future__ import annotations

import random
from typing import Any

import orjson
from builders import T0
from librdkafka_clients import Reader, fleet_producer
from pipeline_env import own_topics_env
from replay_1v1 import assert_as_played, timed_events

from stream.local.stack import LocalStack
from stream.local.workers import WorkerProcess

MATCH_SECONDS = 180.0  # each match lasts three minutes
EVERY_SECONDS = 20.0  # and a new one starts every 20 s
PLAYERS = 60
MATCHES = 300


def timeline(seed: int) -> list[tuple[str, float, float, list[list[str]], list[int]]]:
    """(match id, start, finish, teams, ranks) of 1v1 matches in which no player's matches
    overlap: a player's next match starts after their previous one finished."""
    rng = random.Random(seed)
    free_at = {f"p{i:02d}": 0.0 for i in range(PLAYERS)}
    matches = []
    for i in range(MATCHES):
        start = T0 + i * EVERY_SECONDS
        idle = sorted(pid for pid, at in free_at.items() if at < start)
        a, b = rng.sample(idle, 2)
        finish = start + MATCH_SECONDS
        free_at[a] = free_at[b] = finish
        ranks = rng.choice([[1, 2], [2, 1], [1, 1]])
        matches.append((f"m{i:04d}", start, finish, [[a], [b]], ranks))
    return matches


def settings(stack: LocalStack) -> dict[str, str]:
    return own_topics_env(stack, "b")


def publish(env: dict[str, str], matches: list[Any]) -> None:
    """The fleet's events in the order it published them: each at its own time."""
    producer = fleet_producer(env["KAFKA_BOOTSTRAP_SERVERS"])
    for _at, topic, key, event in timed_events(env, matches):
        producer.produce(topic, orjson.dumps(event), key.encode())
    assert producer.flush(30) == 0


def drained(env: dict[str, str], name: str, expected: int) -> list[Any]:
    """One worker started on the published backlog: the rating-changed records it wrote."""
    worker = WorkerProcess(env, name).start()
    reader = Reader(env["KAFKA_BOOTSTRAP_SERVERS"], env["SKILLSTREAM_TOPIC_RATING_CHANGED"], 4)
    try:
        return reader.until(expected, timeout=180.0)
    finally:
        reader.close()
        worker.cleanup()


def test_a_backlog_published_before_the_worker_started_is_rated_as_played(
    stack: LocalStack,
) -> None:
    env = settings(stack)
    matches = timeline(seed=15)
    publish(env, matches)
    assert_as_played(drained(env, "backlog", 2 * MATCHES), matches)


def test_a_backlog_drained_across_a_crash_and_rebalances_is_rated_as_played(
    stack: LocalStack,
) -> None:
    """Two workers start on the backlog (a rebalance as the second joins); one is SIGKILLed a
    third of the way through the drain and two more join (three workers, another rebalance,
    the dead one's tables recovered from their changelogs); they finish it."""
    env = settings(stack)
    matches = timeline(seed=16)
    publish(env, matches)
    workers = [WorkerProcess(env, "first"), WorkerProcess(env, "second")]
    for worker in workers:
        worker.launch()
    reader = Reader(env["KAFKA_BOOTSTRAP_SERVERS"], env["SKILLSTREAM_TOPIC_RATING_CHANGED"], 4)
    try:
        for worker in workers:
            worker.wait_ready(60.0)
        reader.until(2 * MATCHES // 3, timeout=120.0)
        workers[0].kill()
        joining = [WorkerProcess(env, "third"), WorkerProcess(env, "fourth")]
        workers += joining
        for worker in joining:
            worker.launch()
        for worker in joining:
            worker.wait_ready(60.0)
        records = reader.read_until(
            lambda got: len({r.value() for r in got}) >= 2 * MATCHES, timeout=180.0
        )
        # Redelivered duplicates may follow: give them a moment.
        records = reader.until(10 * MATCHES, timeout=3.0)
    finally:
        reader.close()
        for worker in workers:
            worker.cleanup()
    assert_as_played(records, matches)


def test_a_backlog_published_with_one_timestamp_for_all_is_rated_in_match_id_order(
    stack: LocalStack,
) -> None:
    """Issue 15's second case: every match of the backlog carries the same start and finish
    time, so each player is in many matches at once and the timeline gives no order. The
    documented rule, live and in replay: by start, then match id (every result is within the
    grace period, so nothing is abandoned)."""
    env = settings(stack)
    rng = random.Random(17)
    players = [f"p{i:02d}" for i in range(50)]
    same = [
        (f"m{i:04d}", T0, T0, [[a], [b]], rng.choice([[1, 2], [2, 1], [1, 1]]))
        for i, (a, b) in enumerate(rng.sample(players, 2) for _ in range(400))
    ]
    publish(env, same)
    assert_as_played(drained(env, "ties", 2 * len(same)), same)


def overlapping_timeline(seed: int) -> list[tuple[str, float, float, list[list[str]], list[int]]]:
    """Matches of 30 s to 5 min among 30 players, a new one every 15 s between two players
    picked at random, busy or not: a player's matches overlap, and many results come more than
    the grace period (60 s) after the player's next start."""
    rng = random.Random(seed)
    players = [f"p{i:02d}" for i in range(30)]
    matches = []
    for i in range(200):
        start = T0 + i * 15.0
        a, b = rng.sample(players, 2)
        finish = start + rng.choice([30.0, 90.0, 300.0])
        ranks = rng.choice([[1, 2], [2, 1], [1, 1]])
        matches.append((f"m{i:04d}", start, finish, [[a], [b]], ranks))
    return matches


def test_a_backlog_of_overlapping_matches_is_settled_as_replay_settles_it(
    stack: LocalStack,
) -> None:
    """Players in several matches at once: each match is settled for each player by the
    earliest in event time of its result and its abandonment (stream.ratings.settling), as `replay
    --in-play-order` settles a history with the starts, whatever order the worker reads the
    backlog in."""
    env = settings(stack)
    matches = overlapping_timeline(seed=18)
    publish(env, matches)
    records = drained(env, "overlaps", 2 * len(matches))
    outcomes = [orjson.loads(r.value())["outcome"] for r in records]
    assert outcomes.count("abandoned") >= 20, "the timeline exercises abandonment"
    assert_as_played(records, matches)
