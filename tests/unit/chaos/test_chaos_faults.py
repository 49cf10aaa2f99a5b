"""The chaos harness's fault schedule and process pauser."""

from __future__ import annotations

import itertools
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from stream.chaos.faults import (
    MAX_EARLY_KILL_AGE,
    MAX_EARLY_KILL_DELAY,
    MAX_KILL_DELAY,
    FaultKind,
    Pauser,
    PlannedFault,
    plan_faults,
)


def plan(
    seed: int = 1,
    waves: int = 138,
    kills: int = 3,
    broker_pause: float = 20.0,
    redis_pause: float = 30.0,
) -> list[PlannedFault]:
    return plan_faults(
        seed, waves, kills=kills, workers=3, broker_pause=broker_pause, redis_pause=redis_pause
    )


def test_same_seed_same_plan_other_seed_other_plan() -> None:
    assert plan(seed=7) == plan(seed=7)
    plans = {tuple(plan(seed=s)) for s in range(10)}
    assert len(plans) > 5


def test_every_fault_once_with_its_parameters() -> None:
    faults = plan()
    kinds = Counter(f.kind for f in faults)
    assert kinds == {FaultKind.KILL: 3, FaultKind.BROKER_PAUSE: 1, FaultKind.REDIS_PAUSE: 1}
    for f in faults:
        if f.kind is FaultKind.KILL:
            assert f.target in range(3)
            assert 0.0 <= f.delay <= MAX_KILL_DELAY
            assert f.seconds == 0
        else:
            assert f.target is None
            assert f.seconds == (20.0 if f.kind is FaultKind.BROKER_PAUSE else 30.0)


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("waves", [14, 30, 138, 1000])
def test_spread_over_the_run_with_warm_up_and_tail(seed: int, waves: int) -> None:
    faults = plan(seed=seed, waves=waves)
    at = [f.wave for f in faults]
    margin = max(2, waves // 10)
    assert at == sorted(at)
    assert len(set(at)) == len(at), "two faults on one wave"
    assert at[0] >= margin
    assert at[-1] < waves - margin
    # One per slot: consecutive faults about a slot apart, never bunched together.
    slot = (waves - 2 * margin) / len(faults)
    gaps = [b - a for a, b in itertools.pairwise(at)]
    assert min(gaps) >= max(1, slot / 2 - 1)
    # The Redis pause never comes last: the stream goes on while Redis is away.
    assert faults[-1].kind is not FaultKind.REDIS_PAUSE


def test_kill_targets_and_kinds_vary_with_the_seed() -> None:
    targets = {f.target for s in range(20) for f in plan(seed=s) if f.kind is FaultKind.KILL}
    assert targets == {0, 1, 2}
    firsts = {plan(seed=s)[0].kind for s in range(20)}
    assert len(firsts) == 3


def test_pauses_of_zero_seconds_are_left_out() -> None:
    faults = plan(broker_pause=0, redis_pause=0)
    assert [f.kind for f in faults] == [FaultKind.KILL] * 3
    assert plan(kills=0, broker_pause=0, redis_pause=0) == []


def test_too_few_waves_is_an_error_saying_so() -> None:
    with pytest.raises(ValueError, match="too few"):
        plan(waves=10)
    with pytest.raises(ValueError):
        plan(kills=-1)


def test_early_kills_take_the_first_waves_and_keep_the_other_draws() -> None:
    for seed in range(20):
        faults = plan_faults(
            seed, 40, kills=2, kill_early=3, workers=2, broker_pause=0, redis_pause=0
        )
        early = [f for f in faults if f.kind is FaultKind.KILL_EARLY]
        assert [f.wave for f in early] == [0, 1, 2]
        assert all(0.0 <= f.delay <= MAX_EARLY_KILL_DELAY and f.target in (0, 1) for f in early)
        assert all(0.0 <= f.age <= MAX_EARLY_KILL_AGE for f in early)
        assert len({f.target for f in early}) == 1, "each hits the previous one's replacement"
        later = [f for f in faults if f.kind is FaultKind.KILL]
        assert len(later) == 2 and min(f.wave for f in later) > 2
        assert [f.wave for f in faults] == sorted(f.wave for f in faults)
    # Early kills only (the issue-15 scenario); the same seed, the same plan.
    only = plan_faults(5, 20, kills=0, kill_early=4, workers=1, broker_pause=0, redis_pause=0)
    assert [(f.kind, f.wave, f.target) for f in only] == [
        (FaultKind.KILL_EARLY, w, 0) for w in range(4)
    ]
    assert only == plan_faults(
        5, 20, kills=0, kill_early=4, workers=1, broker_pause=0, redis_pause=0
    )
    delays = {
        f.delay
        for s in range(10)
        for f in plan_faults(s, 20, kills=0, kill_early=4, workers=1, broker_pause=0, redis_pause=0)
    }
    assert max(delays) > MAX_KILL_DELAY, "early kills reach 0.5 s"
    # Early kills within the warm-up leave the other faults of a seed as they were.
    for seed in range(5):
        with_early = plan_faults(
            seed, 138, kills=3, kill_early=3, workers=3, broker_pause=20.0, redis_pause=30.0
        )
        assert [f for f in with_early if f.kind is not FaultKind.KILL_EARLY] == plan(seed=seed)


def test_early_kills_need_a_wave_each_and_one_after() -> None:
    with pytest.raises(ValueError, match="early kills"):
        plan_faults(1, 3, kills=0, kill_early=3, workers=1, broker_pause=0, redis_pause=0)
    with pytest.raises(ValueError):
        plan_faults(1, 30, kills=0, kill_early=-1, workers=1, broker_pause=0, redis_pause=0)


def test_pauser_stops_and_continues_a_process_and_resumes_all(tmp_path: Path) -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        pauser = Pauser()
        pauser.pause(child.pid, "sleeper")
        assert _state(child.pid, "T") == "T"
        assert pauser.stopped == {child.pid: "sleeper"}
        pauser.resume_all()
        assert pauser.stopped == {}
        assert _state(child.pid, "SR") in ("S", "R")
        pauser.pause(child.pid, "sleeper")
        assert _state(child.pid, "T") == "T"
        pauser.resume(child.pid)
        assert _state(child.pid, "SR") in ("S", "R")
    finally:
        child.kill()
        child.wait()
    # A process that is gone: pausing says so, resuming is quiet.
    with pytest.raises(ProcessLookupError):
        pauser.pause(child.pid, "gone")
    assert pauser.stopped == {}
    pauser.resume(child.pid)


def _state(pid: int, wanted: str) -> str:
    """The process state letter from /proc (T: stopped), once it is one of ``wanted`` or 2 s
    have passed: signals are delivered asynchronously."""
    deadline = time.monotonic() + 2.0
    while True:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        if state in wanted or time.monotonic() > deadline:
            return state
        time.sleep(0.01)


@pytest.mark.parametrize("seed", range(20))
def test_an_outage_comes_after_the_other_faults_and_keeps_their_draws(seed: int) -> None:
    others = plan(seed)
    faults = plan_faults(
        seed, 138, kills=3, workers=3, broker_pause=20.0, redis_pause=30.0, outage=15.0
    )
    assert faults[:-1] == others
    outage = faults[-1]
    assert outage.kind is FaultKind.OUTAGE and outage.seconds == 15.0
    # After every other fault (they never overlap), before the tail.
    assert max(f.wave for f in others) < outage.wave < 138 - 138 // 10
    alone = plan_faults(seed, 30, kills=0, workers=1, broker_pause=0, redis_pause=0, outage=5)
    assert [f.kind for f in alone] == [FaultKind.OUTAGE]
    assert 3 <= alone[0].wave < 27


def test_an_outage_needs_waves_after_the_other_faults() -> None:
    with pytest.raises(ValueError, match="outage"):
        plan_faults(1, 4, kills=0, workers=1, broker_pause=0, redis_pause=0, outage=5)
    with pytest.raises(ValueError, match=">= 0"):
        plan_faults(1, 30, kills=0, workers=1, broker_pause=0, redis_pause=0, outage=-1)
