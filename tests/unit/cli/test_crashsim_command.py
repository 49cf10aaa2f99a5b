"""`skillstream crashsim` as a user runs it: a summary line and exit 0 when every schedule
passed, the failing seeds with a command to run each alone and exit 1, exit 2 and one line for
a wrong option."""

from __future__ import annotations

import os

import orjson
from builders import skillstream


def test_a_run_says_what_it_ran_and_passes() -> None:
    done = skillstream(os.environ, "crashsim", "--schedules", "6", "--processes", "1")
    assert done.returncode == 0, done.stderr
    assert "crashsim: 6 of 6 schedules passed (seeds 1 to 6)" in done.stdout


def test_a_failing_seed_is_printed_with_the_command_that_runs_it_alone() -> None:
    done = skillstream(
        os.environ,
        "crashsim",
        "--first-seed",
        "2",
        "--schedules",
        "3",
        "--processes",
        "1",
        "--short",
        "1",
        "--without-checkpoints",
        "--json",
    )
    assert done.returncode == 1, done.stderr
    result = orjson.loads(done.stdout)
    assert result["failed"] and result["schedules"] == 3
    seed = result["failed"][0]["seed"]
    alone = skillstream(
        os.environ, "crashsim", "--seed", str(seed), "--short", "1", "--without-checkpoints"
    )
    assert alone.returncode == 1
    assert f"skillstream crashsim --seed {seed}" in alone.stdout


def test_a_wrong_option_is_one_line_and_exit_2() -> None:
    for args in (("--schedules", "0"), ("--short", "2")):
        done = skillstream(os.environ, "crashsim", *args)
        assert done.returncode == 2
        assert done.stderr.count("\n") == 1 and "skillstream crashsim: error:" in done.stderr
