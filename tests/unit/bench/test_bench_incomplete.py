"""A pipeline bench run that lost ratings stops with its worker's last lines instead of
printing a rate (stream/bench/pipelinebench.py): a worker that crashed seconds after it
started once printed 30,000,000,000,000 matches/s, and the ratio target "met"."""

from __future__ import annotations

import pytest

from stream.bench.pipelinebench import _require_every_rating
from stream.local.workers import WorkerError, WorkerProcess


def _exited(code: int) -> WorkerProcess:
    process = WorkerProcess(
        {}, "worker", ("-c", f"print('boom at the first record'); exit({code})")
    )
    process.launch()
    assert process.process is not None
    process.process.wait(30)
    return process


def test_a_run_missing_ratings_names_the_count_the_exit_and_the_log() -> None:
    process = _exited(3)
    try:
        with pytest.raises(WorkerError) as raised:
            _require_every_rating("flat out, instant matches", 7, 200, process)
    finally:
        process.cleanup()
    message = str(raised.value)
    assert message.startswith("flat out, instant matches: 7 of 200 ratings arrived;")
    assert "worker exited with 3" in message
    assert "boom at the first record" in message


def test_a_run_with_every_rating_passes() -> None:
    process = _exited(0)
    try:
        _require_every_rating("flat out, instant matches", 200, 200, process)
    finally:
        process.cleanup()


def test_a_worker_still_running_is_named_so() -> None:
    process = WorkerProcess(
        {}, "worker", ("-c", "import time; print('up', flush=True); time.sleep(60)")
    )
    process.launch()
    try:
        process.wait_for("up", timeout=30)
        with pytest.raises(WorkerError, match="worker still running, its log ends:\nup"):
            _require_every_rating("500/s, instant", 0, 200, process)
    finally:
        process.cleanup()
