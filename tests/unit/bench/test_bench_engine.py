"""The engine benchmark's replay: every way of rating the generated file is timed, and the
published Glicko-2 replay agrees with both plain loops (no figure is checked: speed belongs in
benchmarks, not tests)."""

from __future__ import annotations

import math

from stream.bench.engine import time_replay


def test_the_replay_benchmark_times_every_way_and_the_loops_agree() -> None:
    timing = time_replay(matches=300, runs=1)
    assert timing.matches == 300
    for seconds in (timing.replay_s, timing.default_s, timing.textbook_s, timing.tuned_s):
        assert math.isfinite(seconds) and seconds > 0.0
    # The loops compute what the published Glicko-2 replay computes.
    assert timing.max_rating_difference < 1e-6
