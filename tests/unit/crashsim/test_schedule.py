"""The schedules (stream/crashsim/schedule.py): one seed, one schedule; over a few hundred
seeds every kind of kill, restore and workload the simulator promises is drawn."""

from __future__ import annotations

import itertools
import random

from stream.crashsim.schedule import POINTS, draw_schedule
from stream.crashsim.workload import STYLES, Publication, draw_workload, mixed


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
    assert {s.mix for s in schedules} == {0, 2, 3}
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


def test_mixed_waves_publish_every_event_in_the_slots_of_their_waves_in_another_order() -> None:
    """Schedule.mix: the events of each group of waves shuffled together and dealt back, as
    many to each slot as it had, so a start can be published after its players' next matches
    and a finish before its start."""
    waves = [[Publication("t", 0, f"{w}-{i}".encode()) for i in range(w + 2)] for w in range(5)]
    got = mixed(waves, 2, random.Random(3))
    assert [len(w) for w in got] == [len(w) for w in waves]
    for first in (0, 2, 4):
        group = waves[first : first + 2]
        assert sorted(e.value for w in got[first : first + 2] for e in w) == sorted(
            e.value for w in group for e in w
        )
    assert got != waves
