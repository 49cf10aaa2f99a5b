"""The chaos fleet's bookkeeping, with tiny stand-in processes instead of workers: an exit it
did not cause is recorded and the slot restarted; a kill is not a crash; nothing is left."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time

import pytest

from stream.chaos.workerfleet import ChaosWorker, Fleet

# First incarnations say they are ready and crash soon after; replacements stay up.
SCRIPT = """
import sys, time
print("Worker ready", flush=True)
time.sleep(0.3 if sys.argv[1].endswith(".0") else 60)
sys.exit(3)
"""


def fake_launch(self: ChaosWorker) -> None:
    with self.log_path.open("ab") as log:
        self.process = subprocess.Popen(
            [sys.executable, "-c", SCRIPT, self.name], stdout=log, stderr=subprocess.STDOUT
        )


async def test_crashes_are_recorded_and_restarted_kills_are_not(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ChaosWorker, "launch", fake_launch)
    said: list[str] = []
    began = time.monotonic()
    fleet = Fleet({}, 2, lambda: time.monotonic() - began, said.append)
    try:
        await fleet.start(10.0)
        stopping = asyncio.Event()
        watch = asyncio.create_task(fleet.watch(stopping, 10.0))
        deadline = time.monotonic() + 15.0
        while not (len(fleet.exits) == 2 and all(e.restarted_in is not None for e in fleet.exits)):
            assert time.monotonic() < deadline, said
            await asyncio.sleep(0.1)
        result = await fleet.kill_and_restart(0, 10.0)
        await asyncio.sleep(1.0)  # a watchdog round or two: the kill is no crash
        stopping.set()
        await watch
    finally:
        fleet.stop_all(timeout=2.0)
        fleet.remove_logs()
    assert sorted(e.slot for e in fleet.exits) == ["w0", "w1"]
    assert {e.returncode for e in fleet.exits} == {3}
    assert all("Worker ready" in e.tail for e in fleet.exits)
    assert any("UNEXPECTED" in line for line in said)
    assert result.pid != result.new_pid and result.restart_seconds >= 0
    # Two first incarnations, two restarts after the crashes, one after the kill.
    assert len(fleet.workers) == 5
    assert all(w.exited() is not None for w in fleet.workers)
    assert not any(w.log_path.exists() for w in fleet.workers)


def test_warnings_are_the_workers_warnings_and_errors_in_time_order_without_routine_ones() -> None:
    fleet = Fleet({}, 2, time.monotonic, lambda line: None)
    logs = {
        "w0": "[2026-11-21 15:00:02,000] [1] [WARNING] b\n"
        "[2026-11-21 15:00:03,000] [1] [INFO] not a warning\n"
        "[2026-11-21 15:00:04,000] [1] [WARNING] Heartbeat failed for group g because it is "
        "rebalancing\n",
        "w1": "[2026-11-21 15:00:01,000] [2] [ERROR] a\n[2026-11-21 15:00:05,000] [2] [ERROR] c\n",
    }
    try:
        for slot in fleet.slots:
            slot.worker.log_path.write_text(logs[slot.name])
        assert fleet.warnings() == [
            "chaos-w1.0: [2026-11-21 15:00:01,000] [2] [ERROR] a",
            "chaos-w0.0: [2026-11-21 15:00:02,000] [1] [WARNING] b",
            "chaos-w1.0: [2026-11-21 15:00:05,000] [2] [ERROR] c",
        ]
        assert fleet.warnings(limit=1) == ["chaos-w1.0: [2026-11-21 15:00:05,000] [2] [ERROR] c"]
    finally:
        fleet.remove_logs()


def test_lines_with_a_text_are_every_workers_lines_containing_it() -> None:
    fleet = Fleet({}, 2, time.monotonic, lambda line: None)
    logs = {
        "w0": "[1] [INFO] store audit: 3 compared\n[1] [INFO] other\n",
        "w1": "[2] [ERROR] store audit: ratings[1] differs\n",
    }
    try:
        for slot in fleet.slots:
            slot.worker.log_path.write_text(logs[slot.name])
        assert fleet.lines_with("store audit:") == [
            "chaos-w0.0: [1] [INFO] store audit: 3 compared",
            "chaos-w1.0: [2] [ERROR] store audit: ratings[1] differs",
        ]
    finally:
        fleet.remove_logs()


async def test_an_outage_kills_every_worker_and_starts_them_all_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ChaosWorker, "launch", fake_launch)
    began = time.monotonic()
    fleet = Fleet({}, 3, lambda: time.monotonic() - began, lambda line: None)
    try:
        await fleet.start(10.0)
        before = [slot.worker for slot in fleet.slots]
        down: list[list[int | None]] = []
        await fleet.outage(0.5, 10.0, lambda: down.append([w.exited() for w in before]))
        after = [slot.worker for slot in fleet.slots]
    finally:
        fleet.stop_all(timeout=2.0)
        fleet.remove_logs()
    # Every worker was dead when the outage began, and each slot has a new one.
    assert len(down) == 1 and all(code is not None for code in down[0])
    assert all(a is not b for a, b in zip(after, before, strict=True))
    assert all(slot.incarnation == 1 and slot.ready_at is not None for slot in fleet.slots)
