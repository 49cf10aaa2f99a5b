"""Issue 28's schedule on the real broker: waves of 30 players in 15 1v1 matches (every start,
then every finish, then half of them again), one worker SIGKILLed 0-0.5 s after a wave went
out, in its first seconds (before its first commit), and again soon after its replacement was
ready; then kills at the crash points around the changelog flush and in a rebalance. Every
match rated once, equal to an offline replay, none waiting past the liveness bound, and what
a kill makes the successor send again stays within one commit interval.

About a minute and a half per store on two cores, most of it the restarts.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from stream.chaos.soak import SoakConfig, run_seed

pytestmark = pytest.mark.slow

COMMIT_INTERVAL = 2.8
# The plan kills a worker at most 5 s after it is ready plus at most 0.5 s after a wave went
# out; publishing the wave first has taken 1.5 s more on a loaded machine (5.76 s seen with
# another process busy on one of the two cores). "Young" is the plan's ages with that slack,
# not the plan's ages to the millisecond.
YOUNG_SECONDS = 8.0


@pytest.mark.parametrize("store", ["memory", "rocksdb"])
def test_a_worker_killed_in_its_first_seconds_leaves_its_successor_rating(store: str) -> None:
    config = SoakConfig(
        seeds=1,
        kills=3,
        store=store,
        phases=("early", "soon-after", "early"),
        matches=15,
        team_size=1,
        order="duplicated",
        environment="local",  # the ages below are the local stack's (a 4 s session)
    )
    report = run_seed(11, config)
    shown = "\n".join([report.line(), *report.warnings, *report.trace])
    assert report.passed, shown
    assert report.expected >= 30 * 7 and report.lost == report.doubled == report.stuck == 0
    for kill in report.kills:
        assert kill.landed and kill.after_ready is not None, shown
        assert kill.after_ready < YOUNG_SECONDS, shown
        assert kill.restart_seconds is not None, shown
        # Sent again: at most what one commit interval rated, plus the batch in flight.
        assert kill.redo_seconds is not None and kill.redo_seconds <= COMMIT_INTERVAL + 1.0, shown


def test_kills_around_the_flush_and_in_a_rebalance_lose_and_double_nothing() -> None:
    config = SoakConfig(
        seeds=1, kills=3, phases=("flushing", "flushed", "rebalance"), environment="operator"
    )
    logs = Path(tempfile.gettempdir())
    before = set(logs.glob("skillstream-soak-*.log"))
    report = run_seed(12, config)
    shown = "\n".join([report.line(), *report.warnings, *report.trace])
    assert report.passed, shown
    assert all(kill.landed for kill in report.kills), shown
    # Every worker's log is removed, the slots' placeholders too (they leaked one per slot).
    assert set(logs.glob("skillstream-soak-*.log")) <= before
