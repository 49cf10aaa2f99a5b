"""How long the partitions of a worker lost with its disk take to rate again.

Two workers share the partitions, each keeping a standby copy of the other's tables (the
default ``SKILLSTREAM_STANDBY_REPLICAS``; docs/decisions.md, "Fail-over: standby copies, kept
whole"); a fleet publishes matches at a steady rate; one worker is SIGKILLed mid-run (and its
data directory removed: the node is gone, no volume to restart from) and never comes back. The
figure is the time from the kill until every match published up to a second after it has its
ratings: the group noticing the loss (the session timeout), the rebalance, the survivor
recovering the lost partitions' tables (from its standby copy and the changelogs' tails, or
the whole changelogs with the copies off), and event time settling on them again.

Only the local stack is touched; every process started here is stopped here.
"""

from __future__ import annotations

import asyncio
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import orjson

from stream.bench.pipeline import consumer_at_end, simulated_matches
from stream.config.settings import Settings
from stream.local.workers import WorkerProcess
from stream.pipeline.app import COMBINER_HERE, REVOKED
from stream.pipeline.workarounds.standbys import STANDBYS_READY
from stream.simulation.gamefleet import FleetConfig, FleetReport, run_fleet

__all__ = ["Failover", "Phases", "phases", "run_failover"]

# The lines of the survivor's log that mark a fail-over's phases, in their order: its rebalance
# has begun (the group noticed the loss, and Faust has stopped its streams), its new partitions
# come (the broker has completed the rebalance), its tables are ready (Faust's recovery).
# Faust's line at each assignment.
ASSIGNED = "Executing _on_partitions_assigned"
MARKS = (REVOKED, ASSIGNED, "Worker ready")
# Faust's text line starts with its local time to the millisecond: "[2026-12-06 07:03:54,723]";
# a JSON line (SKILLSTREAM_LOG_FORMAT=json, stream/pipeline/logs.py) has ``ts`` in UTC.
_STAMP = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),(\d{3})\]")


@dataclass(frozen=True)
class Phases:
    """Seconds from the kill until the survivor's log said each phase was over (None: it did
    not say)."""

    noticed: float | None
    assigned: float | None
    ready: float | None


def phases(log: str, killed: float) -> Phases:
    """The fail-over's phases in a survivor's log (:data:`MARKS`), each the first of its line
    after the one before, all after ``killed`` (wall time)."""
    found: list[float] = []
    for line in log.splitlines():
        if len(found) == len(MARKS):
            break
        if MARKS[len(found)] not in line:
            continue
        at = _logged_at(line)
        if at is not None and at >= killed:
            found.append(at - killed)
    padded = [*found, None, None, None]
    return Phases(padded[0], padded[1], padded[2])


def _logged_at(line: str) -> float | None:
    """When a log line was written (wall time; None: a line without a time)."""
    if line.startswith("{"):
        try:
            return datetime.fromisoformat(orjson.loads(line)["ts"]).timestamp()
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            return None
    stamp = _STAMP.match(line)
    if stamp is None:
        return None
    return time.mktime(time.strptime(stamp[1], "%Y-%m-%d %H:%M:%S")) + int(stamp[2]) / 1000


@dataclass(frozen=True)
class Failover:
    store: str
    players: int
    # Standby copies of each table partition (SKILLSTREAM_STANDBY_REPLICAS), and how long both
    # workers' took to catch up with the changelogs once both workers were ready.
    standbys: int
    standby_ready_seconds: float
    # Seconds from the kill until every match published by one second after it is rated.
    rated_again_seconds: float
    # Latency (publish to rating) of the matches rated before the kill, and of those published
    # after the partitions rated again.
    before_p99_ms: float
    after_p99_ms: float
    # Matches published, and rated (each 1v1 match has two ratings).
    matches: int
    rated: int
    # Where the survivor was when: the group noticed, the rebalance done, the tables ready.
    phases: Phases
    # Whether the worker lost ran the event-time combiner (None: neither worker said it did).
    lost_combiner: bool | None


def _last_count(worker: WorkerProcess) -> int:
    """How many "standby copies ready" lines the worker logged before its latest assignment
    (Faust's "Executing _on_partitions_assigned"): the line to wait for is the next one."""
    text = worker.output()
    return text[: text.rfind(ASSIGNED)].count(STANDBYS_READY)


def _runs_combiner(worker: WorkerProcess) -> bool:
    """Whether the worker's latest assignment brought it the event-time combiner."""
    text = worker.output()
    return COMBINER_HERE in text[text.rfind(ASSIGNED) :]


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.99 * len(ordered)))] if ordered else float("nan")


async def _load(
    env: Mapping[str, str], rate: float, seconds: float, kill_after: float, kill: Callable[[], None]
) -> tuple[FleetReport, dict[str, float], float]:
    """Publish matches at ``rate`` for ``seconds``, call ``kill`` ``kill_after`` seconds in;
    the fleet's report, each match's last rating time, and the kill's wall time."""
    settings = Settings.from_env(env)
    bootstrap = settings.kafka.bootstrap_servers
    consumer = await consumer_at_end(bootstrap, settings.topics.rating_changed)
    played = simulated_matches(round(rate * seconds), seed=int(time.time()), players=20_000)
    ours = {m.match_id for m in played}
    report = FleetReport()
    fleet = asyncio.create_task(run_fleet(played, bootstrap, FleetConfig(rate=rate), report=report))
    killed_box: list[float] = []

    def killer() -> None:
        time.sleep(kill_after)
        killed_box.append(time.time())
        kill()

    thread = threading.Thread(target=killer, daemon=True)
    thread.start()
    counts: dict[str, int] = {}
    rated_at: dict[str, float] = {}
    deadline = time.monotonic() + seconds + 300.0
    try:
        while time.monotonic() < deadline:
            batch = await consumer.getmany(timeout_ms=200, max_records=10_000)
            for records in batch.values():
                for record in records:
                    match_id = str(orjson.loads(record.value).get("match_id"))
                    if match_id in ours:
                        counts[match_id] = counts.get(match_id, 0) + 1
                        rated_at[match_id] = max(
                            rated_at.get(match_id, 0.0), record.timestamp / 1000.0
                        )
            if fleet.done() and sum(min(c, 2) for c in counts.values()) >= 2 * len(played):
                break
        await fleet
    finally:
        await consumer.stop()
        thread.join()
    return report, {m: t for m, t in rated_at.items() if counts[m] >= 2}, killed_box[0]


def run_failover(
    env: Mapping[str, str],
    players: int,
    *,
    store: str = "memory",
    rate: float = 100.0,
    seconds: float = 40.0,
    kill_after: float = 20.0,
) -> Failover:
    """Two workers, one SIGKILLed ``kill_after`` seconds into a run of ``seconds`` at ``rate``
    matches/s (the one the event-time combiner runs on), its data directory removed; how long
    until its partitions rated again, and the phases the survivor's log dates.

    Failure: a worker that does not start raises (stream.local.workers), and so does a
    survivor's log that cannot be read (OSError); every process started here is stopped
    either way."""
    with tempfile.TemporaryDirectory() as data:
        dirs = [Path(data) / "a", Path(data) / "b"]
        workers = [
            WorkerProcess(
                {**env, "SKILLSTREAM_STORE": store, "SKILLSTREAM_DATA_DIR": str(d)},
                f"failover-{name}",
            )
            for name, d in zip("ab", dirs, strict=True)
        ]
        try:
            workers[0].start(timeout=900)
            workers[1].start(timeout=900)
            workers[0].wait_ready(timeout=900, after=1)
            # The worker lost is the one the event-time combiner runs on, if either says so:
            # the survivor then starts a combiner afresh too, the slower case.
            combiner = [_runs_combiner(w) for w in workers]
            lost = 1 if combiner == [False, True] else 0
            kept = workers[1 - lost]
            # A node is lost long after its workers started: the standby copies have caught up
            # by then, the survivor's (for the fail-over) and the other's (catching up costs
            # latency). Wait for both, and say how long it took.
            began = time.monotonic()
            if Settings.from_env(env).worker.standby_replicas:
                for worker in workers:
                    worker.wait_for(STANDBYS_READY, timeout=900, after=_last_count(worker))
            standby_seconds = time.monotonic() - began

            def lose_node() -> None:
                workers[lost].kill()
                shutil.rmtree(dirs[lost], ignore_errors=True)

            report, rated_at, killed = asyncio.run(
                _load(kept.env, rate, seconds, kill_after, lose_node)
            )
            survivor = phases(kept.output(), killed)
        finally:
            for w in workers:
                w.cleanup()
    sent = report.finished_at_wall
    window = [m for m, at in sent.items() if at <= killed + 1.0]
    missing = [m for m in window if m not in rated_at]
    rated_again = float("inf") if missing else max(rated_at[m] for m in window) - killed
    before = [
        (rated_at[m] - at) * 1000 for m, at in sent.items() if rated_at.get(m, killed) < killed
    ]
    after = [
        (rated_at[m] - at) * 1000
        for m, at in sent.items()
        if m in rated_at and at > killed + rated_again
    ]
    return Failover(
        store=store,
        players=players,
        standbys=Settings.from_env(env).worker.standby_replicas,
        standby_ready_seconds=standby_seconds,
        rated_again_seconds=rated_again,
        before_p99_ms=_p99(before),
        after_p99_ms=_p99(after),
        matches=len(sent),
        rated=len(rated_at),
        phases=survivor,
        lost_combiner=combiner[lost] if any(combiner) else None,
    )
