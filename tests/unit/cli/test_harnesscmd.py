"""stream/cli/harnesscmd.py: the exit codes and outputs `skillstream chaos` and `soak` share."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

import orjson
import pytest

from stream.cli.harnesscmd import Advance, Emit, add_common, run_harness
from stream.local.stack import StackError


@dataclass
class Report:
    passed: bool

    def text(self) -> str:
        return "PASS" if self.passed else "FAIL"

    def to_json(self) -> dict[str, Any]:
        return {"passed": self.passed}


def args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_common(parser)
    return parser.parse_args(argv)


def runs(passed: bool) -> Any:
    def run(config: int, emit: Emit, advance: Advance) -> Report:
        advance(0, 2)
        emit(f"seed {config}: one line")
        advance(2, 2)
        return Report(passed)

    return run


def test_a_passed_run_exits_0_with_its_lines_and_report(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_harness("soak", args(), lambda: 7, runs(True), unit="seeds") == 0
    out = capsys.readouterr().out
    assert out.splitlines() == ["seed 7: one line", "PASS"]


def test_a_failed_run_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_harness("soak", args(), lambda: 7, runs(False), unit="seeds") == 1
    assert capsys.readouterr().out.splitlines()[-1] == "FAIL"


def test_with_json_stdout_carries_only_the_report(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_harness("chaos", args("--json"), lambda: 7, runs(True), unit="ratings") == 0
    captured = capsys.readouterr()
    assert orjson.loads(captured.out) == {"passed": True}
    assert "seed 7: one line" in captured.err


def test_a_wrong_option_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    def config() -> int:
        raise ValueError("phases: need 3 (one per kill), got early")

    assert run_harness("soak", args(), config, runs(True), unit="seeds") == 2
    captured = capsys.readouterr()
    assert captured.err == "skillstream soak: error: phases: need 3 (one per kill), got early\n"
    assert captured.out == ""


def test_a_stack_that_cannot_start_is_one_line_and_exit_2(
    capsys: pytest.CaptureFixture[str],
) -> None:
    def run(config: int, emit: Emit, advance: Advance) -> Report:
        raise StackError("tansu exited with 1")

    assert run_harness("chaos", args(), lambda: 1, run, unit="ratings") == 2
    err = capsys.readouterr().err
    assert err == "skillstream chaos: error: could not start: tansu exited with 1\n"
