"""stream/local/workers.py: every worker log this process made is listed until removed, so a
run removes exactly its own (tests/conftest.py does at the end of a passing session)."""

from __future__ import annotations

from stream.local.workers import LOGS, WorkerProcess, remove_log


def test_a_worker_log_is_listed_until_it_is_removed() -> None:
    worker = WorkerProcess({}, "log-test", command=("-c", "pass"))
    assert worker.log_path in LOGS and worker.log_path.exists()
    worker.cleanup()  # never started: nothing to stop
    assert worker.log_path not in LOGS and not worker.log_path.exists()
    remove_log(worker.log_path)  # gone already: nothing to do


def test_a_finished_process_keeps_its_log_until_cleanup() -> None:
    worker = WorkerProcess({}, "log-test", command=("-c", "print('last words')"))
    worker.launch()
    assert worker.process is not None and worker.process.wait(30) == 0
    assert "last words" in worker.output()
    worker.cleanup()
    assert not worker.log_path.exists()
