"""The naive Faust app: what a user might write instead of skillstream, as a yardstick.

Issue 16 compares the worker with "the obvious do-it-yourself app": one Faust agent reading
match-finished, a Table of Glicko-2 ratings keyed by player, and one ``await send`` of a
rating-changed record per player. This module is that app, run by `skillstream bench pipeline`
in its own process (``python -m stream.bench.naive_faust``) on one partition, fed by the same
load generator and timed the same way as the worker.

It has none of the worker's guarantees, which is why it is only a yardstick: it ignores
match-started (no snapshot at the start, so a player's concurrent matches are rated in arrival
order), has no pending or abandoned matches, no deduplication (a redelivered finish is rated
twice), no validation or dead letters (a bad event stops the agent), no cache, and cannot use
more than one partition (the table is keyed by player, the input by match). Faust's settings
are its defaults but the broker, an in-memory store and one partition: what a user starts from.

Environment: KAFKA_BOOTSTRAP_SERVERS (host:port). Failure: a broker error stops the process
(the bench reports it with the process's output). Replay: a restarted app reads from its
committed offsets and rates a redelivered finish again.
"""

from __future__ import annotations

import os
import sys

import faust
import orjson

from stream.ratings import glicko2
from stream.ratings.skill import Result, Skill

APP_ID = "naive-faust"
INPUT_TOPIC = "match-finished"
OUTPUT_TOPIC = "rating-changed"
# The topics the bench creates (one partition each) before it starts the app: the load
# generator also writes match-started, which the app does not read.
NAIVE_TOPICS = ("match-started", INPUT_TOPIC, OUTPUT_TOPIC)
# How the bench runs it: ``python -m stream.bench.naive_faust``.
NAIVE_COMMAND = ("-m", "stream.bench.naive_faust")
CONFIG = glicko2.Glicko2Config()


def rate_1v1(a: Skill, b: Skill, score_a: float) -> tuple[Skill, Skill]:
    """Both players' Glicko-2 updates for one game (one rating period, as the worker rates)."""
    new_a = glicko2.rate(CONFIG, a, [Result(b.rating, b.deviation, score_a)])
    new_b = glicko2.rate(CONFIG, b, [Result(a.rating, a.deviation, 1.0 - score_a)])
    return new_a, new_b


def make_app(bootstrap_servers: str) -> faust.App:
    app = faust.App(
        APP_ID,
        broker=f"kafka://{bootstrap_servers}",
        store="memory://",
        topic_partitions=1,
        value_serializer="raw",
    )
    finished = app.topic(INPUT_TOPIC, value_serializer="raw")
    changed = app.topic(OUTPUT_TOPIC, value_serializer="raw")
    ratings = app.Table("ratings", partitions=1)
    unrated = glicko2.initial(CONFIG)

    @app.agent(finished)
    async def rate(stream: faust.StreamT[bytes]) -> None:
        async for value in stream:
            event = orjson.loads(value)
            (a,), (b,) = event["teams"]
            rank_a, rank_b = event["ranks"]
            score_a = 1.0 if rank_a < rank_b else 0.0 if rank_a > rank_b else 0.5
            stored_a, stored_b = ratings.get(a), ratings.get(b)
            old_a = unrated if stored_a is None else Skill(*stored_a)
            old_b = unrated if stored_b is None else Skill(*stored_b)
            for player, before, after in zip(
                (a, b), (old_a, old_b), rate_1v1(old_a, old_b, score_a), strict=True
            ):
                ratings[player] = [after.rating, after.deviation, after.volatility]
                record = {
                    "player_id": player,
                    "match_id": event["match_id"],
                    "rating_before": before.rating,
                    "rating_after": after.rating,
                    "deviation_after": after.deviation,
                }
                await changed.send(key=player.encode(), value=orjson.dumps(record))

    return app


def main() -> None:
    servers = os.environ["KAFKA_BOOTSTRAP_SERVERS"]
    app = make_app(servers)
    # Info: the bench waits for Faust's "Worker ready" line.
    sys.argv = [sys.argv[0], "worker", "--loglevel", "info", "--without-web"]
    app.main()


if __name__ == "__main__":
    main()
