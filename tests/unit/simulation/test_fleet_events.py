"""The simulated fleet's events for each producer style: a match's start and finish times as
the worker decodes them (replay times, start published at the start, both at the end)."""

from __future__ import annotations

import orjson
import pytest
from builders import T0

from stream.events import decode_match_finished, decode_match_started
from stream.simulation.core import SimulatedMatch
from stream.simulation.gamefleet import match_events

MATCH = SimulatedMatch(
    match_id="m-1",
    mode="duel",
    at=T0,
    teams=(("a",), ("b",)),
    ranks=(0, 1),
    stats=None,
    quitters=frozenset(),
    true_skills={"a": 0.0, "b": 0.0},
)
NOW = T0 + 5_000.0


def times(now: float | None, duration: float = 0.0, *, at_end: bool = False) -> tuple[float, float]:
    start, finish = match_events(MATCH, now, False, duration, at_end=at_end)
    started = decode_match_started(orjson.dumps(start)).started_at
    finished = decode_match_finished(orjson.dumps(finish)).finished_at
    return started, finished


def test_a_replayed_match_keeps_its_own_time_and_starts_a_millisecond_before() -> None:
    assert times(None) == pytest.approx((T0 - 0.001, T0))


def test_a_live_match_starts_now_and_finishes_its_duration_later() -> None:
    assert times(NOW, 2.0) == pytest.approx((NOW, NOW + 2.0))
    # An instant match: start and finish at the moment both are published.
    assert times(NOW, 0.0) == pytest.approx((NOW, NOW + 0.001))


def test_a_match_published_at_the_end_finishes_now_and_started_its_duration_before() -> None:
    assert times(NOW, 2.0, at_end=True) == pytest.approx((NOW - 2.0, NOW))
    assert times(NOW, 0.0, at_end=True) == pytest.approx((NOW - 0.001, NOW))
