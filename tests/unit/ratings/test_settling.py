"""The rule that settles a player's match by event time, shared by the live pipeline and
``skillstream replay --in-play-order`` (stream/ratings/settling.py)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from stream.ratings.settling import Fate, Settled, fate, may_be_superseded, superseding_starts

GRACE, TIMEOUT = 60.0, 7200.0


def settle(
    finished: float | None, superseded: float | None, now: float | None = None
) -> Fate | None:
    return fate(0.0, finished, superseded, grace_seconds=GRACE, timeout_seconds=TIMEOUT, now=now)


def test_the_earliest_in_event_time_decides() -> None:
    assert settle(100.0, None) == Fate(Settled.RESULT, 100.0)
    assert settle(300.0, 100.0) == Fate(Settled.ABANDONED, 100.0)
    assert settle(150.0, 100.0) == Fate(Settled.RESULT, 150.0)
    assert settle(7300.0, None) == Fate(Settled.TIMEOUT, 7200.0)
    assert settle(7300.0, 7190.0) == Fate(Settled.TIMEOUT, 7200.0)
    assert settle(7300.0, 7100.0) == Fate(Settled.ABANDONED, 7100.0)


def test_ties_go_to_the_result_then_to_abandonment() -> None:
    assert settle(160.0, 100.0) == Fate(Settled.RESULT, 160.0)
    assert settle(7200.0, None) == Fate(Settled.RESULT, 7200.0)
    assert settle(None, 7140.0, now=7200.0) == Fate(Settled.ABANDONED, 7140.0)


def test_without_a_result_it_waits_for_event_time_to_pass_the_deadline() -> None:
    assert settle(None, 100.0) is None
    assert settle(None, 100.0, now=159.9) is None
    assert settle(None, 100.0, now=160.0) == Fate(Settled.ABANDONED, 100.0)
    assert settle(None, None, now=7199.0) is None
    assert settle(None, None, now=7200.0) == Fate(Settled.TIMEOUT, 7200.0)


times = st.floats(0.0, 20_000.0)


@given(times, st.none() | times, st.none() | times, st.none() | times)
def test_with_a_result_the_fate_does_not_depend_on_when_it_was_read(
    finished: float, superseded: float | None, now: float | None, other: float | None
) -> None:
    assert settle(finished, superseded, now) == settle(finished, superseded, other)


@given(st.none() | times, st.none() | times, times)
def test_a_decision_without_a_result_is_the_one_a_later_result_would_not_change(
    superseded: float | None, now: float, later: float
) -> None:
    """Once event time has decided without a result, a result timed after ``now`` (so not yet
    read when it was decided) gets the same fate."""
    decided = settle(None, superseded, now)
    if decided is not None:
        assert settle(now + 1.0 + later, superseded) == decided


def test_only_a_match_longer_than_the_grace_period_can_be_superseded() -> None:
    assert may_be_superseded(0.0, 61.0, GRACE)
    assert not may_be_superseded(0.0, 60.0, GRACE)


def test_each_players_next_match_in_the_order_of_play_supersedes_the_previous() -> None:
    got = superseding_starts(
        [
            ("m1", 0.0, [["a"], ["b"]]),
            ("m2", 10.0, [["a"], ["c"]]),
            ("m3", 20.0, [["b", "c"], ["d", "a"]]),
        ]
    )
    assert got == {("a", "m1"): 10.0, ("b", "m1"): 20.0, ("a", "m2"): 20.0, ("c", "m2"): 20.0}
