"""The crash simulator over many schedules (stream/crashsim/explore.py): a few thousand seeds,
every one passing; and the same simulator, with the worker restarting at its commits whatever
its tables hold (as it did before checkpoints), finding both failures of issue 44 in a few
dozen seeds: matches that wait for good, and players whose ratings differ from the replay with
nothing lost or doubled. ``skillstream crashsim`` runs 10,000 (docs/simulator.md)."""

from __future__ import annotations

import os

from stream.crashsim.explore import explore

# Seeds run here on every `make test`; the command's default is 10,000.
SCHEDULES = 2_000


def test_a_few_thousand_schedules_lose_double_and_strand_nothing() -> None:
    found = explore(1, SCHEDULES, processes=min(2, os.cpu_count() or 1))
    failed = [f"seed {o.seed}: {o.problems}" for o in found.failed]
    assert failed == [], failed[:3]
    assert found.schedules == SCHEDULES
    # The schedules did what they are for: kills, tables found behind and read again.
    assert found.kills > SCHEDULES and found.behind > SCHEDULES


def test_without_checkpoints_the_simulator_finds_both_failures_of_the_issue() -> None:
    found = explore(1, 60, processes=1, short=1.0, use_checkpoints=False)
    problems = [p for o in found.failed for p in o.problems]
    assert any(p.startswith("stuck: ") and "waiting at the end" in p for p in problems)
    differ_alone = [
        o
        for o in found.failed
        if all("differ" in p for p in o.problems)  # live != replay, nothing lost or stuck
    ]
    assert differ_alone
