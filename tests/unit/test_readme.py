"""The README's front door: short, and its offline example runs as written (its live example:
tests/e2e/test_readme_live.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import orjson
from builders import README, in_a_checkout, readme_blocks

# What a newcomer reads before giving up (issue 45); the rest is in docs/.
MOST_LINES = 150


def test_the_readme_is_short() -> None:
    assert len(README.read_text().splitlines()) <= MOST_LINES


def test_the_five_minute_path_has_a_live_and_an_offline_block() -> None:
    live, offline = readme_blocks("Five minutes")
    assert "skillstream local up" in live and "skillstream ratings get" in live
    assert "skillstream simulate" in offline and "--corrections c.jsonl" in offline


def test_the_offline_example_runs_as_written(tmp_path: Path) -> None:
    in_a_checkout(tmp_path)
    _, offline = readme_blocks("Five minutes")
    done = subprocess.run(
        ["bash", "-eu", "-c", offline],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    # The corrections file it writes is applied: one match voided, one rating adjusted.
    assert (
        "skillstream replay: c.jsonl: voided 1 match, adjusted 1 rating, erased 0 players"
        in done.stderr.splitlines()
    )
    before = {r["player_id"]: r for r in map(orjson.loads, (tmp_path / "ratings.jsonl").open())}
    after = {r["player_id"]: r for r in map(orjson.loads, (tmp_path / "corrected.jsonl").open())}
    assert set(before) == set(after) and len(before) > 100
    assert after["p000017"]["rating"] != before["p000017"]["rating"]
    worded = done.stdout.splitlines()[-6:]
    assert worded[1].startswith("Before match sim0-1 (a win), p000017 was rated 1500"), worded
