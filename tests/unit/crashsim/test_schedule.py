"""The schedules (stream/crashsim/schedule.py): one seed, one schedule; over a few hundred
seeds every kind of kill, restore and workload the simulator promises is drawn."""

from __future__ import annotations

import itertools
import random

from stream.crashsim.schedule import POINTS, draw_schedule
from stream.crashsim.workload import STYLES, draw_workload


def test_a_seed_draws_one_schedule() -> None:
    assert draw_schedule(42) == draw_schedule(42)
    assert draw_schedule(42) != draw_schedule(43)
    fixed = draw_schedule(42, kills=3, short=1.0)
    assert len(fixed.kills) == 3 and all(k.short == 1.0 for k in fixed.kills)


def test_a_few_hundred_seeds_draw_every_kind_of_fault_and_workload() -> None:
    schedules = [draw_schedule(seed) for seed in range(400)]
    assert {k.point for s in schedules for k in s.kills} == set(POINTS)
    assert {s.partitions for s in schedules} == {1, 2, 3, 4}
    assert {s.workers for s in schedules} == {1, 2}
    assert any(s.rebalances for s in schedules)
    assert any(k.short == 1.0 for s in schedules for k in s.kills)
    assert any(s.lose for s in schedules) and any(s.reseek for s in schedules)
    assert any(s.misrouted for s in schedules) and any(s.duplicates for s in schedules)
    assert {s.stale for s in schedules} == {0.0, 0.03, 0.1}
    assert {s.topic_lag for s in schedules} == {0.0, 0.01, 0.3}
    assert not any(s.stale and s.topic_lag for s in schedules)
    styles: set[str] = set()
    shapes: set[tuple[int, int]] = set()
    gaps: set[float] = set()
    for seed in range(60):
        workload = draw_workload(
            random.Random(seed),
            partitions=3,
            started_topic="s",
            finished_topic="f",
            players=12,
            waves=6,
            duplicates=0.3,
            misrouted=0.2,
        )
        styles.update(workload.styles)
        shapes.update((len(m.teams), len(m.teams[0])) for m in workload.matches)
        starts = sorted({m.started_at or m.at for m in workload.matches})
        gaps.update(round(b - a) for a, b in itertools.pairwise(starts))
    assert styles == set(STYLES)
    assert (2, 1) in shapes and (2, 2) in shapes and (2, 3) in shapes  # 1v1 and teams
    assert any(teams >= 3 for teams, _ in shapes)  # free-for-all
    assert max(gaps) >= 13 * 3600  # idle hours: learning windows close between waves
