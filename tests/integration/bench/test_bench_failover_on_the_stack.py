"""stream/bench/failover.py on the local stack: with a few thousand players in the ratings
changelog, two workers share the partitions, one is lost with its data directory
mid-run, and the other rates every match published, the lost worker's partitions included."""

from __future__ import annotations

import asyncio
import math

from stream.bench.failover import run_failover
from stream.bench.recovery import fill_ratings_changelog
from stream.config.settings import Settings
from stream.local.stack import LocalStack, environment


def test_the_survivor_rates_every_match_after_the_other_worker_is_lost() -> None:
    players = 3000
    with LocalStack() as stack:
        env = {**environment(stack), "SKILLSTREAM_APP_ID": "failover-test"}
        asyncio.run(fill_ratings_changelog(Settings.from_env(env), players))
        run = run_failover(env, players, rate=40.0, seconds=30.0, kill_after=6.0)
    assert run.matches == round(40.0 * 30.0), run
    assert run.rated == run.matches, run  # both ratings of every match, after the loss too
    assert run.standbys == 1  # each worker stood by for the other's partitions
    assert run.lost_combiner is True  # one of the two ran it, and that one was lost
    assert math.isfinite(run.rated_again_seconds) and run.rated_again_seconds > 0
    assert math.isfinite(run.after_p99_ms)  # matches were published and rated after the take-over
    # The survivor's log dates each phase: the group noticed, the rebalance, the tables.
    p = run.phases
    assert p.noticed is not None and p.assigned is not None and p.ready is not None, p
    assert 0 < p.noticed <= p.assigned <= p.ready <= run.rated_again_seconds, p
