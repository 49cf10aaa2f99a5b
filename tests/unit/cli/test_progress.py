"""The terminal progress bar."""

from __future__ import annotations

import io

from stream.cli.progress import Progress, counting, tracked


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_disabled_prints_nothing() -> None:
    out = io.StringIO()  # not a terminal: disabled by default
    with Progress(100, "replay", out) as bar:
        bar.update(50)
        bar.update(100)
    assert out.getvalue() == ""
    assert not bar.enabled


def test_explicitly_disabled_on_a_terminal() -> None:
    out = Tty()
    with Progress(100, "replay", out, enabled=False) as bar:
        bar.update(10)
    assert out.getvalue() == ""


def test_enabled_on_a_terminal_by_default() -> None:
    assert Progress(1, "x", Tty()).enabled


def test_percent_rate_eta_and_final_line() -> None:
    out = io.StringIO()
    clock = Clock()
    bar = Progress(1000, "replay", out, enabled=True, clock=clock)
    clock.now += 2.0
    bar.update(250)
    assert out.getvalue() == "\rreplay  25.0% [######------------------] 250/1.0k 125/s ETA 6.0s"
    clock.now += 6.0
    bar.update(1000)
    bar.close()
    lines = out.getvalue().split("\r")
    assert lines[-1] == "replay 100.0% [########################] 1.0k/1.0k 125/s in 8.0s\n"
    bar.close()  # idempotent
    assert out.getvalue().count("\n") == 1


def test_redraws_at_most_ten_times_a_second() -> None:
    out = io.StringIO()
    clock = Clock()
    bar = Progress(10_000, "x", out, enabled=True, clock=clock)
    for done in range(1, 1001):
        clock.now += 0.001  # one second in all
        bar.update(done)
    assert 9 <= out.getvalue().count("\r") <= 11


def test_bytes_and_unknown_total() -> None:
    out = io.StringIO()
    clock = Clock()
    bar = Progress(None, "read", out, enabled=True, unit="B", clock=clock)
    clock.now += 1.0
    bar.update(2_500_000)
    assert out.getvalue() == "\rread 2.5MB 2.5MB/s"
    out2 = io.StringIO()
    bar2 = Progress(5_000_000_000, "read", out2, enabled=True, unit="B", clock=clock)
    clock.now += 100.0
    bar2.update(1_000_000_000)
    assert out2.getvalue() == (
        "\rread  20.0% [#####-------------------] 1.0GB/5.0GB 10.0MB/s ETA 6:40"
    )


def test_unit_for_counts_and_long_eta() -> None:
    out = io.StringIO()
    clock = Clock()
    bar = Progress(1_000_000, "rate", out, enabled=True, unit="matches", clock=clock)
    clock.now += 10.0
    bar.update(1000)
    assert out.getvalue().endswith("1.0k matches/1.0M matches 100 matches/s ETA 2:46:30")


def test_shorter_line_overwrites_longer_one() -> None:
    out = io.StringIO()
    clock = Clock()
    bar = Progress(None, "x", out, enabled=True, clock=clock)
    clock.now += 1.0
    bar.update(123_456)
    first = out.getvalue()
    clock.now += 1000.0
    bar.update(123_457)
    second = out.getvalue()[len(first) :]
    assert len(second) == len(first)  # padded over the remains


def test_broken_stream_disables_instead_of_failing() -> None:
    out = io.StringIO()
    out.close()
    bar = Progress(10, "x", out, enabled=True)
    bar.update(5)
    bar.close()
    assert not bar.enabled


def test_default_stream_is_current_stderr(capsys: object) -> None:
    bar = Progress(10, "x", enabled=True)
    bar.update(5)
    bar.close()
    captured = capsys.readouterr()  # type: ignore[attr-defined]
    assert captured.err.endswith("\n")
    assert "x" in captured.err


def test_matches_counted_while_the_percent_comes_from_bytes() -> None:
    out = io.StringIO()
    clock = Clock()
    bar = Progress(2_200_000, "replay", out, enabled=True, unit="matches", clock=clock)
    clock.now += 2.0
    bar.update(184_300, 550_000)
    line = out.getvalue()
    assert line.startswith("\rreplay  25.0% [######------------------]")
    assert line.endswith(" 184.3k matches 92.2k matches/s ETA 6.0s")
    clock.now += 6.0
    bar.update(737_200, 2_200_000)
    bar.close()
    assert out.getvalue().endswith(
        " 100.0% [" + "#" * 24 + "] 737.2k matches 92.2k matches/s in 8.0s\n"
    )


def test_a_slow_rate_keeps_a_decimal() -> None:
    out, clock = Tty(), Clock()
    with Progress(71, "tune", out, clock=clock) as bar:
        clock.now += 40.0
        bar.update(29)
    assert "29/71 0.7/s" in out.getvalue()


def test_tracked_counts_what_passes_and_ends_at_the_total() -> None:
    out = Tty()
    with Progress(2500, "simulate", out, unit="matches") as bar:
        assert list(tracked(range(2500), bar, every=1000)) == list(range(2500))
    assert out.getvalue().rstrip().split("\r")[-1].startswith("simulate 100.0% [")
    assert "2.5k matches/2.5k matches" in out.getvalue()


def test_a_total_learnt_once_reading_has_begun() -> None:
    out = io.StringIO()
    clock = Clock()
    bar = Progress(None, "reading", out, enabled=True, unit="records", clock=clock)
    seen = counting(bar)
    clock.now += 1.0
    seen(5, 20)
    assert (
        out.getvalue()
        == "\rreading  25.0% [######------------------] 5 records/20 records 5.0 records/s ETA 3.0s"
    )
    clock.now += 1.0
    seen(20, 20)
    bar.close()
    assert out.getvalue().split("\r")[-1].startswith("reading 100.0% [")
    # An empty topic has no total to draw a percent from.
    empty = Progress(None, "reading", io.StringIO(), enabled=True)
    counting(empty)(0, 0)
    assert empty.total is None
