"""`skillstream simulate`: every model knob is an option, and histories `evaluate` reads."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import orjson
import pytest

from stream.cli.main import main
from stream.cli.simulate import MODEL_OPTIONS
from stream.simulation import SimulationConfig


def test_every_model_field_is_an_option() -> None:
    fields = {f.name for f in dataclasses.fields(SimulationConfig)}
    # start and stats are for library callers (the fleet, tests), not the command line.
    assert fields - set(MODEL_OPTIONS.values()) == {"start", "stats"}


def test_uneven_teams_then_evaluate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "h.jsonl"
    argv = ["simulate", "--team-sizes", "2v3", "--matches", "300", "--players", "60"]
    assert main([*argv, "--seed", "4", "--party-rate", "0.5", "--out", str(out)]) == 0
    events = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    assert len(events) == 300
    assert {e["mode"] for e in events} == {"2v3"}
    assert all(sorted(len(t) for t in e["teams"]) == [2, 3] for e in events)
    assert main(["evaluate", str(out), "--json"]) == 0
    report = orjson.loads(capsys.readouterr().out)
    assert report["matches"] == 300
    assert report["log_loss"] < 0.693


def test_sides_drawn_from_a_range_some_uneven(tmp_path: Path) -> None:
    out = tmp_path / "h.jsonl"
    argv = ["simulate", "--size-range", "1-6", "--uneven-rate", "0.4", "--pool-size", "16"]
    assert main([*argv, "--matches", "600", "--players", "300", "--out", str(out)]) == 0
    events = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    sizes = [tuple(len(t) for t in e["teams"]) for e in events]
    assert {e["mode"] for e in events} == {"1-6-a-side"}
    assert all(1 <= size <= 7 for pair in sizes for size in pair)
    uneven = [pair for pair in sizes if pair[0] != pair[1]]
    assert all(abs(a - b) == 1 for a, b in uneven)
    assert 0.3 < len(uneven) / len(sizes) < 0.5
    assert len({max(pair) for pair in sizes}) >= 6


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--team-sizes", "2,x"], "--team-sizes: expected two or more team sizes"),
        (["--team-sizes", "3,0"], "--team-sizes: every team needs a player, got '3,0'"),
        (
            ["--matchmaker", "magic"],
            "--matchmaker: invalid choice: 'magic'",
        ),
        (["--carry", "2"], "carry must be between 0 and 1, got 2.0"),
        (["--learning-matches", "0"], "learning_matches must be > 0, got 0.0"),
        (["--team-sizes", "5,5", "--players", "9"], "(10), got 9"),
        (["--size-range", "3"], "--size-range: expected the fewest and most players a side"),
        (["--size-range", "4-2"], "--size-range: expected 1 <= fewest <= most, got '4-2'"),
        (["--uneven-rate", "1.5"], "--uneven-rate: must be between 0 and 1, got 1.5"),
        (["--size-range", "1-10"], "pool_size must be at least 20, got 16"),
    ],
)
def test_a_bad_value_is_one_line(
    argv: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        code = main(["simulate", "--matches", "1", *argv])
    except SystemExit as stopped:
        code = int(stopped.code or 0)
    assert code == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1
    assert message in err
