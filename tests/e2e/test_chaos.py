"""The fault harness end to end: real workers on a fresh local stack, three SIGKILLs, a frozen
broker and a frozen Redis; nothing lost, nothing applied twice, the cache caught up.

About two and a half minutes on two cores: most of it is the faults themselves (20 s broker
pause, 30 s Redis pause, three restarts) on top of a modest stream of matches. The early kills
(issue 15: a single worker killed in its first seconds) add under a minute.
"""

from __future__ import annotations

import os
from dataclasses import replace

import pytest

from stream.chaos import ChaosConfig, run_chaos
from stream.chaos.faults import FaultKind
from stream.chaos.report import ChaosReport

pytestmark = pytest.mark.slow

# No kill and no pause planned: a test adds the one fault it is about.
NO_FAULTS = ChaosConfig(kills=0, broker_pause=0.0, redis_pause=0.0)


def passed(config: ChaosConfig) -> tuple[ChaosReport, str]:
    """The harness run on ``config``, checked to have passed and to have rated both players of
    every match: its report, and its progress lines with the report's text (for a failure)."""
    lines: list[str] = []
    report = run_chaos(config, emit=lines.append)
    shown = "\n".join([*lines, report.text()])
    assert report.passed, shown
    assert report.ratings == 2 * config.matches, shown
    return report, shown


def test_ratings_survive_kills_a_frozen_broker_and_a_frozen_redis() -> None:
    config = ChaosConfig(
        matches=300, players=100, workers=3, kills=3, broker_pause=20.0, redis_pause=30.0, seed=3
    )
    report, shown = passed(config)
    assert {c.name for c in report.checks} == {
        "replay",
        "exactly-once",
        "cache",
        "crashes",
        "faults",
        "stream",
        "stores",
    }
    assert report.exits == [], shown

    # Every fault really happened, each while matches were in flight.
    kills = [f for f in report.faults if f.planned.kind is FaultKind.KILL]
    assert report.kills == len(kills) >= 3, shown
    for kill in kills:
        assert kill.restart_seconds is not None, shown
    (broker,) = [f for f in report.faults if f.planned.kind is FaultKind.BROKER_PAUSE]
    (redis,) = [f for f in report.faults if f.planned.kind is FaultKind.REDIS_PAUSE]
    for pause, seconds in ((broker, 20.0), (redis, 30.0)):
        assert pause.injected_at is not None and pause.ended_at is not None, shown
        assert pause.ended_at - pause.injected_at >= seconds, shown
        assert pause.in_flight > 0, shown
    # Ratings go on without Redis; nothing is rated while the broker is frozen.
    assert redis.ratings_during is not None and redis.ratings_during > 0, shown
    assert broker.ratings_during == 0, shown
    assert redis.cache_seconds is not None and redis.cache_seconds <= 5.0, shown

    # Every process the run started is gone.
    assert report.pids
    for pid in report.pids:
        assert not os.path.exists(f"/proc/{pid}") or _zombie(pid), pid


def test_ratings_survive_a_single_worker_killed_in_its_first_seconds() -> None:
    config = replace(NO_FAULTS, matches=60, players=40, workers=1, kill_early=1, seed=3)
    report, shown = passed(config)
    early = [f for f in report.faults if f.planned.kind is FaultKind.KILL_EARLY]
    assert report.kills == len(early) == 1, shown
    for kill in early:
        # In the first seconds of the victim's life: before Faust's first commit (2.8 s).
        assert kill.after_ready is not None and kill.after_ready < 3.5, shown
        assert kill.restart_seconds is not None, shown


def _zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


def test_a_backlog_built_while_every_worker_was_down_is_rated_as_played() -> None:
    """Issue 15: the whole group down while the fleet keeps publishing; then both workers
    restart, rebalance and drain the backlog, and every rating equals replay."""
    config = replace(NO_FAULTS, matches=300, players=40, workers=2, outage=4.0, seed=5)
    report, shown = passed(config)
    (outage,) = report.faults
    assert outage.planned.kind is FaultKind.OUTAGE, shown
    assert outage.backlog is not None and outage.backlog > 20, shown
    assert outage.drain_seconds is not None, shown
