"""stream/bench/naive_faust.py on the local stack: the yardstick app rates every match of the
bench's load generator, one rating-changed per player, carrying each player's rating forward."""

from __future__ import annotations

import asyncio

from topic_values import topic_values

from stream.bench.naive_faust import NAIVE_COMMAND, NAIVE_TOPICS, OUTPUT_TOPIC
from stream.bench.pipeline import run_load
from stream.bench.rawloop import create_topics
from stream.local.stack import LocalStack, environment
from stream.local.workers import WorkerProcess


def test_the_naive_app_rates_every_match_once_per_player() -> None:
    matches = 150
    with LocalStack() as stack:
        servers = stack.bootstrap_servers
        asyncio.run(create_topics(servers, list(NAIVE_TOPICS), 1))
        app = WorkerProcess(environment(stack), "naive-faust", NAIVE_COMMAND)
        try:
            app.start()
            # Few players: each plays several matches, so ratings carry over between them.
            run = asyncio.run(run_load(servers, matches, 0.0, seed=3, players=20, timeout=60))
            outputs = asyncio.run(topic_values(servers, OUTPUT_TOPIC, 2 * matches))
        finally:
            app.cleanup()

    assert run.ratings == 2 * matches
    assert len(outputs) == 2 * matches
    assert len({(o["player_id"], o["match_id"]) for o in outputs}) == 2 * matches
    last: dict[object, object] = {}
    for output in outputs:  # one partition: in the order the app rated them
        player = output["player_id"]
        if player in last:
            assert output["rating_before"] == last[player]
        last[player] = output["rating_after"]
    assert len(last) <= 20
