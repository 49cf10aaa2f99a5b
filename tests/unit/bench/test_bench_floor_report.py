"""The Faust floor app's counting and report (stream/bench/faust_floor.py); the app itself runs
on the local stack in tests/integration/bench/test_bench_faust_floor.py."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from stream.bench.faust_floor import EventCount, FloorRun, parse_report, report_line


def test_the_report_comes_once_when_the_count_reaches_what_was_expected() -> None:
    ticks = iter([10.0, 12.5, 13.0])
    counter = EventCount(100, clock=lambda: next(ticks))
    assert counter.add(60) is None  # first batch: the clock starts
    assert counter.add(50) == "faust floor: 110 events in 2.5000 s"
    assert counter.add(10) is None
    assert counter.seen == 120


def test_a_report_is_found_in_the_app_s_log_and_nothing_before_it() -> None:
    log = "[2026-11-23 20:00:00,000] [1] [WARNING] faust floor: 60000 events in 3.7712 s \n"
    assert parse_report("Worker ready\n") is None
    run = parse_report("Worker ready\n" + log)
    assert run == FloorRun(60_000, 3.7712)
    assert round(run.events_per_second) == 15_910


@given(st.integers(min_value=1, max_value=10**9), st.floats(min_value=0.0001, max_value=1e5))
def test_the_report_line_reads_back_as_written(events: int, seconds: float) -> None:
    run = parse_report(report_line(events, seconds))
    assert run is not None
    assert run.events == events
    assert abs(run.seconds - seconds) <= 0.00005 + 1e-12 * seconds
