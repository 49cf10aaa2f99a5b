"""stream/bench/faust_floor.py on the local stack: the floor app reads both events of every
match the bench's load generator publishes, over the worker's partitions, and reports them."""

from __future__ import annotations

import asyncio
import time

from stream.bench.faust_floor import EVENTS_VARIABLE, FLOOR_COMMAND, await_report
from stream.bench.pipeline import publish_flat_out
from stream.bench.rawloop import create_topics
from stream.config.settings import Settings
from stream.local.stack import LocalStack, environment
from stream.local.workers import WorkerProcess


def test_the_floor_app_reports_once_it_has_read_both_events_of_every_match() -> None:
    matches = 150
    with LocalStack() as stack:
        env = environment(stack)
        env["SKILLSTREAM_SESSION_TIMEOUT_SECONDS"] = "6"
        env[EVENTS_VARIABLE] = str(2 * matches)
        s = Settings.from_env(env)
        servers = stack.bootstrap_servers
        asyncio.run(
            create_topics(servers, [s.topics.match_started, s.topics.match_finished], s.partitions)
        )
        published = asyncio.run(publish_flat_out(servers, matches, seed=3, players=20))
        app = WorkerProcess(env, "faust-floor", FLOOR_COMMAND)
        try:
            started = time.time()
            app.start()
            run = await_report(app, timeout=60)
            output = app.output()
        finally:
            app.cleanup()

    assert published.matches == matches
    assert published.messages == 2 * matches
    assert run.events == 2 * matches
    # Read after the app started, the last no earlier than the first.
    assert started < run.first_at <= run.last_at <= time.time()
    assert output.count("faust floor:") == 1
