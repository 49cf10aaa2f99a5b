"""The README's live example, as written: a local stack, a worker, one match published with an
independent client, its ratings read from the cache and explained; everything it started is
stopped (by the block itself, or here when it fails)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import orjson
from builders import in_a_checkout, readme_blocks


def test_the_live_example_runs_as_written(tmp_path: Path) -> None:
    in_a_checkout(tmp_path)
    live, _ = readme_blocks("Five minutes")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("KAFKA_", "REDIS_"))}
    script = subprocess.Popen(
        ["bash", "-eu", "-c", live],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        out, err = script.communicate(timeout=240)
    finally:
        if script.poll() is None:
            os.killpg(script.pid, signal.SIGKILL)
            script.wait()
        state = tmp_path / ".skillstream" / "local.json"
        if state.exists():  # the block failed before its own `skillstream local down`
            subprocess.run(
                [sys.executable, "-m", "stream", "local", "down", "--state-file", str(state)],
                check=False,
                capture_output=True,
            )
    assert script.returncode == 0, err + (tmp_path / "worker.log").read_text()[-3000:]
    ratings = [orjson.loads(line) for line in out.splitlines() if line.startswith("{")]
    by_player = {r["player_id"]: r for r in ratings}
    assert by_player["alice"]["rating"] > 1500 > by_player["bob"]["rating"]
    assert by_player["alice"]["unknown"] is False and by_player["alice"]["games"] == 1
    assert "Before match m-1 (a win), alice was rated 1500" in out
