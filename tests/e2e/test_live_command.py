"""`skillstream live` (make run) and `skillstream simulate --kafka`, as a user runs them."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from pathlib import Path

from stream.local.stack import LocalStack, environment
from stream.local.workers import WorkerProcess


def test_live_shows_ratings_moving_and_stops_what_it_started() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "stream", "live", "--seconds", "8", "--rate", "50"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    rates = [int(x) for x in re.findall(r"ratings/s\s+(\d+)", run.stdout)]
    assert rates and max(rates) > 0
    # The simulated players win as often as their ratings say: better than a coin flip.
    losses = [float(x) for x in re.findall(r"log loss (\d+\.\d+)", run.stdout)]
    assert losses and 0.0 < losses[-1] < 0.75
    assert "stopped the worker, the broker and the cache" in run.stderr
    pid = int(re.search(r"worker pid (\d+)", run.stderr).group(1))  # type: ignore[union-attr]
    assert not Path(f"/proc/{pid}").exists()


def _children(pid: int) -> set[int]:
    """Every process whose parent is ``pid`` (servers run in sessions of their own)."""
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.add(int(stat.parent.name))
    return found


def test_sigterm_stops_live_and_everything_it_started(tmp_path: Path) -> None:
    err = (tmp_path / "err").open("w+")
    live = subprocess.Popen(
        [sys.executable, "-m", "stream", "live", "--seconds", "120", "--rate", "20"],
        stdout=subprocess.DEVNULL,
        stderr=err,
    )
    try:
        deadline = time.monotonic() + 60
        children: set[int] = set()
        while time.monotonic() < deadline and len(children) < 3:  # broker, cache, worker
            time.sleep(0.5)
            children = _children(live.pid)
        assert len(children) >= 3, Path(err.name).read_text()
        live.send_signal(signal.SIGTERM)
        # SIGTERM is a stop request, as Ctrl-C: live stops what it started and exits cleanly.
        assert live.wait(60) == 0
    finally:
        if live.poll() is None:
            live.kill()
    assert "stopped the worker, the broker and the cache" in Path(err.name).read_text()
    assert not [pid for pid in children if Path(f"/proc/{pid}").exists()]


def test_simulate_publishes_matches_the_worker_rates() -> None:
    with LocalStack() as stack:
        env = {**environment(stack), "SKILLSTREAM_SESSION_TIMEOUT_SECONDS": "4"}
        worker = WorkerProcess(env, "sim").start()
        try:
            run = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "stream",
                    "simulate",
                    "--kafka",
                    "--matches",
                    "50",
                    "--rate",
                    "0",
                    "--duplicate-rate",
                    "0.2",
                ],
                env=env,
                check=False,
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert run.returncode == 0, run.stderr
            assert "published 50 matches" in run.stderr
            read = subprocess.run(
                [sys.executable, "-c", _READ, stack.bootstrap_servers],
                check=True,
                capture_output=True,
                text=True,
                timeout=90,
            )
        finally:
            worker.cleanup()
    assert read.stdout.split() == ["100"]


# Count distinct (player, match) rating changes with librdkafka, until 100 or 60 s.
_READ = """
import sys, time, uuid, orjson
from confluent_kafka import Consumer
c = Consumer({"bootstrap.servers": sys.argv[1], "group.id": uuid.uuid4().hex,
              "auto.offset.reset": "earliest"})
c.subscribe(["rating-changed"])
seen, end = set(), time.time() + 60
while len(seen) < 100 and time.time() < end:
    m = c.poll(0.2)
    if m is not None and m.error() is None:
        e = orjson.loads(m.value())
        seen.add((e["player_id"], e["match_id"]))
c.close()
print(len(seen))
"""
