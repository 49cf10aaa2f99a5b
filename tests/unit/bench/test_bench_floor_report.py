"""The Faust floor app's counting and report (stream/bench/faust_floor.py); the app itself runs
on the local stack in tests/integration/bench/test_bench_faust_floor.py."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from stream.bench.faust_floor import EventCount, FloorRun, parse_report, report_line


def test_the_report_comes_once_when_the_count_reaches_what_was_expected() -> None:
    ticks = iter([1_795_000_010.0, 1_795_000_012.5, 1_795_000_013.0])
    counter = EventCount(100, clock=lambda: next(ticks))
    assert counter.add(60) is None
    assert counter.add(50) == (
        "faust floor: 110 events, the first at 1795000010.000000, the last at 1795000012.500000"
    )
    assert counter.add(10) is None
    assert counter.seen == 120


def test_a_report_is_found_in_the_app_s_log_and_nothing_before_it() -> None:
    line = (
        "[2026-11-23 20:00:00,000] [1] [WARNING] faust floor: 60000 events,"
        " the first at 1795000000.000000, the last at 1795000003.771200"
    )
    assert parse_report("Worker ready\n") is None
    run = parse_report(f"Worker ready\n{line} \n")
    assert run == FloorRun(60_000, 1_795_000_000.0, 1_795_000_003.7712)
    assert abs(run.seconds - 3.7712) < 1e-6


@given(
    st.integers(min_value=1, max_value=10**9),
    st.floats(min_value=1e9, max_value=4e9, allow_nan=False),
)
def test_the_report_line_reads_back_as_written(events: int, first_at: float) -> None:
    run = parse_report(report_line(events, first_at, first_at + 1.5))
    assert run is not None
    assert run.events == events
    assert abs(run.first_at - first_at) <= 5e-7
    assert abs(run.seconds - 1.5) <= 1e-6
