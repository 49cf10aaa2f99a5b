"""stream/chaos/soakplan.py: a seed's plan is the same every time, any run of consecutive seeds
as long as the phase list covers every phase, and every wave's matches keep players apart."""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stream.chaos.soakplan import (
    PHASES,
    POINT_PHASES,
    WaveStyle,
    plan_matches,
    plan_seed,
    wave_events,
)


@given(seed=st.integers(0, 10_000), kills=st.integers(1, 5))
def test_a_seed_gives_the_same_plan_and_matches(seed: int, kills: int) -> None:
    assert plan_seed(seed, kills) == plan_seed(seed, kills)
    assert plan_matches(plan_seed(seed, kills)) == plan_matches(plan_seed(seed, kills))


@given(first=st.integers(0, 10_000))
def test_consecutive_seeds_cover_every_phase(first: int) -> None:
    seen = {k.phase for seed in range(first, first + len(PHASES)) for k in plan_seed(seed).kills}
    assert seen == set(PHASES)


@given(seed=st.integers(0, 10_000), kills=st.integers(1, 5))
def test_kills_are_spread_and_a_soon_after_kill_follows_another(seed: int, kills: int) -> None:
    plan = plan_seed(seed, kills)
    assert len(plan.kills) == kills
    assert plan.kills[0].phase != "soon-after"
    waves = [k.wave for k in plan.kills]
    assert waves == sorted(waves) and len(set(waves)) == kills
    assert waves[0] >= 2 and plan.planned >= waves[-1] + 2 and len(plan.waves) == 2 * plan.planned
    for kill in plan.kills:
        if kill.phase in POINT_PHASES:
            assert kill.crash_at == f"{kill.phase}:{kill.n}" and 1 <= kill.n <= 4
        elif kill.phase == "rebalance":
            assert kill.crash_at == "revoked:1"
        else:
            assert kill.crash_at is None
            assert 0.0 <= kill.delay <= 0.5 and 0.0 <= kill.age <= 5.0


@given(seed=st.integers(0, 10_000))
def test_no_player_plays_twice_in_a_wave_and_waves_never_overlap(seed: int) -> None:
    plan = plan_seed(seed)
    waves = plan_matches(plan)
    for wave in waves:
        players = [p for m in wave for team in m.teams for p in team]
        assert len(players) == len(set(players)) == plan.players
    for before, after in itertools.pairwise(waves):
        assert max(m.finished_at for m in before) < min(m.started_at for m in after)


def test_every_order_publishes_every_event_at_least_once() -> None:
    wave = plan_matches(plan_seed(4))[0]
    for order in ("starts-first", "finishes-first", "shuffled", "duplicated"):
        events = wave_events(wave, WaveStyle(order, 60.0), random.Random(1))
        kinds = {(kind, e["match_id"]) for kind, e in events}
        assert kinds == {(k, m.match_id) for m in wave for k in ("started", "finished")}
        if order == "finishes-first":
            assert [kind for kind, _ in events[: len(wave)]] == ["finished"] * len(wave)


def test_the_seeds_draw_the_deployments_issue_44_found_the_soak_never_drew() -> None:
    """An operator's environment, waves as far apart as the retention, the first wave before
    the worker is ready, a fleet whose events land off their home partition: each drawn by
    some of the first twenty seeds, the local setup by others."""
    plans = [plan_seed(seed) for seed in range(1, 21)]
    assert {p.environment for p in plans} == {"local", "operator"}
    assert {p.gap for p in plans} == {1000.0, 3600.0}
    assert {p.early_publish for p in plans} == {True, False}
    assert {p.keyed for p in plans} == {True, False}
    assert plan_seed(3, environment="operator").environment == "operator"
    waves = plan_matches(plan_seed(5, environment="local"))
    gap = plan_seed(5).gap
    assert waves[1][0].started_at - waves[0][0].started_at == gap


def test_an_unknown_environment_is_refused() -> None:
    with pytest.raises(ValueError, match="environment: must be one of local, operator"):
        plan_seed(1, environment="cloud")
