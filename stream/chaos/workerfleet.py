"""The workers of a chaos run: N ``skillstream worker`` processes in one consumer group, each
in a *slot* that is restarted whenever its process dies, like a Kubernetes pod.

A kill (SIGKILL) is the harness's own doing; any other exit is a crash the report must show:
the watchdog records it with the end of the worker's log, then restarts the slot.

Failure: ``start`` and ``kill_and_restart`` raise WorkerError (with the worker's output) if a
worker exits or is not ready in time. ``stop_all`` never raises for a worker that is already
gone; it SIGKILLs those that ignore SIGTERM.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from stream.local.stack import LocalStack, environment
from stream.local.workers import WorkerError, WorkerProcess, remove_log

__all__ = [
    "READY_TIMEOUT",
    "ChaosWorker",
    "Fleet",
    "KillResult",
    "WorkerExit",
    "harness_env",
    "worker_warnings",
]

READY = "Worker ready"
# Seconds before a crashed slot is started again: enough for its partitions to be noticed as
# free, short enough that the stream hardly waits.
RESTART_DELAY = 1.0
# Log lines every rebalance produces, left out of a report's warnings.
ROUTINE = ("because it is rebalancing", "cache lag:")
# How long a worker may take to be ready (start, join the group, recover its tables).
READY_TIMEOUT = 120.0


def harness_env(
    stack: LocalStack,
    tag: str,
    *,
    session_timeout: float,
    store: str,
    partitions: int | None,
    cache_writer: str,
) -> dict[str, str]:
    """A harness's workers' environment on ``stack``: topics and cache keys of their own
    (named after ``tag``), whatever the caller's environment says about them."""
    env = {
        **environment(stack),
        **_named(tag, store),
        "SKILLSTREAM_SESSION_TIMEOUT_SECONDS": f"{session_timeout:g}",
        "SKILLSTREAM_CACHE_WRITER": cache_writer,
    }
    # Several workers on one machine cannot share one web port; crash points are the
    # harness's to arm.
    env.pop("SKILLSTREAM_WEB_PORT", None)
    env.pop("SKILLSTREAM_CRASH_AT", None)
    if partitions is not None:
        env["SKILLSTREAM_PARTITIONS"] = str(partitions)
    return env


def operator_env(stack: LocalStack, tag: str, *, store: str) -> dict[str, str]:
    """The environment an operator gives a worker (docs/operations.md): the servers'
    addresses and the deployment's names (here ``tag``'s, to keep a run's topics its own), and
    nothing else of skillstream's, none of the caller's SKILLSTREAM_* variables either: every
    other setting at its default (8 partitions, the 6 s session, the cache writer in the
    worker)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLSTREAM_")}
    env.update(
        {
            "KAFKA_BOOTSTRAP_SERVERS": stack.bootstrap_servers,
            "REDIS_URL": stack.redis_url,
            **_named(tag, store),
        }
    )
    return env


def _named(tag: str, store: str) -> dict[str, str]:
    """A run's own app id, topics and cache keys (named after ``tag``), and its store."""
    return {
        "SKILLSTREAM_APP_ID": tag,
        "SKILLSTREAM_STORE": store,
        "SKILLSTREAM_TOPIC_MATCH_STARTED": f"{tag}-match-started",
        "SKILLSTREAM_TOPIC_MATCH_FINISHED": f"{tag}-match-finished",
        "SKILLSTREAM_TOPIC_RATING_CHANGED": f"{tag}-rating-changed",
        "SKILLSTREAM_TOPIC_DLQ": f"{tag}-dlq",
        "SKILLSTREAM_CACHE_PREFIX": tag,
    }


class ChaosWorker(WorkerProcess):
    """A worker process whose readiness is awaited without blocking (``launch`` then
    ``ready``), so the harness's event loop (and a Ctrl-C) is never stuck waiting for it."""

    async def ready(self, timeout: float) -> None:
        """Wait for Faust's first "Worker ready" (partitions assigned, tables recovered).

        Raises WorkerError if the process exits first or ``timeout`` seconds pass.
        """
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if READY in self.output():
                return
            if self.process is not None and self.process.poll() is not None:
                raise WorkerError(
                    f"{self.name} exited with {self.process.returncode}:\n{self.tail(40)}"
                )
            await asyncio.sleep(0.1)
        raise WorkerError(f"{self.name} not ready in {timeout:.0f} s:\n{self.tail(40)}")

    def exited(self) -> int | None:
        """The exit code if the process has ended, else None."""
        return None if self.process is None else self.process.poll()

    def tail(self, lines: int = 15) -> str:
        try:
            return "\n".join(self.output().splitlines()[-lines:])
        except FileNotFoundError:
            return ""


@dataclass
class WorkerExit:
    """A worker exit the harness did not cause (check 4 fails on any)."""

    slot: str
    pid: int
    returncode: int
    at: float  # seconds since the run started
    tail: str  # the end of its log
    restarted_in: float | None = None  # seconds until the replacement was ready

    def describe(self) -> str:
        return f"{self.slot} (pid {self.pid}) exited with {self.returncode} at {self.at:.1f} s"

    def to_json(self) -> dict[str, object]:
        return {
            "worker": self.slot,
            "pid": self.pid,
            "returncode": self.returncode,
            "at": round(self.at, 2),
            "restarted_in": None if self.restarted_in is None else round(self.restarted_in, 2),
            "log_tail": self.tail,
        }


@dataclass(frozen=True)
class KillResult:
    pid: int
    new_pid: int
    killed_at: float  # seconds since the run started
    restart_seconds: float  # SIGKILL -> the replacement's "Worker ready"


@dataclass
class _Slot:
    name: str
    env: dict[str, str]
    worker: ChaosWorker
    incarnation: int = 0
    ready_at: float | None = None  # when its worker said "Worker ready" (seconds since start)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)


class Fleet:
    """``size`` worker slots sharing ``env``; with a RocksDB store each slot has its own data
    directory under ``data_root`` (kept across the slot's restarts, like a pod's volume)."""

    def __init__(
        self,
        env: Mapping[str, str],
        size: int,
        clock: Callable[[], float],
        say: Callable[[str], None],
        data_root: Path | None = None,
    ) -> None:
        self.clock = clock
        self.say = say
        self.exits: list[WorkerExit] = []
        self.workers: list[ChaosWorker] = []  # every incarnation, for logs and cleanup
        self.slots: list[_Slot] = []
        for i in range(size):
            slot_env = dict(env)
            if data_root is not None:
                # Faust creates the directory itself, but not its parents.
                (data_root / f"w{i}").mkdir(parents=True, exist_ok=True)
                slot_env["SKILLSTREAM_DATA_DIR"] = str(data_root / f"w{i}")
            self.slots.append(_Slot(f"w{i}", slot_env, self._new_worker(f"w{i}", slot_env, 0)))

    def _new_worker(self, name: str, env: Mapping[str, str], incarnation: int) -> ChaosWorker:
        worker = ChaosWorker(env, f"chaos-{name}.{incarnation}")
        self.workers.append(worker)
        return worker

    def pids(self) -> list[int]:
        return [s.worker.pid for s in self.slots if s.worker.pid is not None]

    async def start(self, timeout: float) -> None:
        """Launch every slot at once and wait until all are ready."""
        for slot in self.slots:
            slot.worker.launch()
        await asyncio.gather(*(self._ready(slot, timeout) for slot in self.slots))

    async def _ready(self, slot: _Slot, timeout: float) -> None:
        await slot.worker.ready(timeout)
        slot.ready_at = self.clock()

    async def kill_and_restart(
        self, index: int, timeout: float, on_kill: Callable[[], None] | None = None
    ) -> KillResult:
        """SIGKILL slot ``index``'s worker (a crash: nothing flushed or committed) and start
        its replacement at once; returns when the replacement is ready. ``on_kill`` is called
        right after the SIGKILL."""
        slot = self.slots[index]
        async with slot.lock:
            old = slot.worker
            pid = old.pid or 0
            code = old.exited()
            if code is not None:
                # Gone by itself before the watchdog noticed: a crash all the same.
                self.exits.append(WorkerExit(slot.name, pid, code, self.clock(), old.tail(25)))
                self.say(f"UNEXPECTED: worker {self.exits[-1].describe()} before its kill")
            killed = self.clock()
            old.kill()
            if on_kill is not None:
                on_kill()
            self._relaunch(slot)
            await self._ready(slot, timeout)
            return KillResult(pid, slot.worker.pid or 0, killed, self.clock() - killed)

    async def outage(
        self, seconds: float, timeout: float, on_kill: Callable[[], None] | None = None
    ) -> float:
        """SIGKILL every worker at once (the whole group down, nothing flushed or committed),
        wait ``seconds``, then start them all again; returns when all are ready, with the
        seconds from their launch to the last "Worker ready". ``on_kill`` is called right
        after the kills. The watchdog leaves the slots alone meanwhile (their locks)."""
        for slot in self.slots:
            await slot.lock.acquire()
        try:
            for slot in self.slots:
                slot.worker.kill()
            if on_kill is not None:
                on_kill()
            await asyncio.sleep(seconds)
            began = self.clock()
            for slot in self.slots:
                self._relaunch(slot)
            await asyncio.gather(*(self._ready(slot, timeout) for slot in self.slots))
            return self.clock() - began
        finally:
            for slot in self.slots:
                slot.lock.release()

    def _relaunch(self, slot: _Slot) -> None:
        slot.incarnation += 1
        slot.ready_at = None
        slot.worker = self._new_worker(slot.name, slot.env, slot.incarnation)
        slot.worker.launch()

    async def watch(self, stopping: asyncio.Event, ready_timeout: float) -> None:
        """Until ``stopping``: restart any slot whose worker exited on its own, recording the
        exit. A slot being killed and restarted by the harness holds its lock and is skipped;
        each slot recovers in its own task, so one slow restart holds up no other."""
        recoveries: set[asyncio.Task[None]] = set()
        try:
            while not stopping.is_set():
                for slot in self.slots:
                    code = slot.worker.exited()
                    if code is None or slot.lock.locked():
                        continue
                    # Taken here, without waiting (it is free), and released by the task.
                    await slot.lock.acquire()
                    task = asyncio.create_task(self._recover(slot, code, ready_timeout))
                    recoveries.add(task)
                    task.add_done_callback(recoveries.discard)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stopping.wait(), 0.5)
        finally:
            for task in list(recoveries):
                task.cancel()

    async def _recover(self, slot: _Slot, code: int, ready_timeout: float) -> None:
        try:
            await self._restart_crashed(slot, code, ready_timeout)
        finally:
            slot.lock.release()

    async def _restart_crashed(self, slot: _Slot, code: int, ready_timeout: float) -> None:
        old = slot.worker
        record = WorkerExit(slot.name, old.pid or 0, code, self.clock(), old.tail(25))
        self.exits.append(record)
        self.say(
            f"UNEXPECTED: worker {record.describe()}; its last lines:\n"
            + _indent(old.tail(8))
            + f"\n  restarting {slot.name} in {RESTART_DELAY:g} s"
        )
        await asyncio.sleep(RESTART_DELAY)
        began = self.clock()
        self._relaunch(slot)
        try:
            await self._ready(slot, ready_timeout)
        except WorkerError as exc:
            # It stays in its slot: the next round of the watchdog sees it exit, if it does.
            self.say(f"{slot.name}: the restarted worker is not ready: {str(exc)[:200]}")
            return
        record.restarted_in = self.clock() - began
        self.say(
            f"{slot.name} restarted (pid {slot.worker.pid}), ready after "
            f"{record.restarted_in:.1f} s"
        )

    def stop_all(self, timeout: float = 20.0) -> None:
        """SIGTERM every live worker (a graceful stop), then SIGKILL what is left after
        ``timeout`` seconds. Safe to call more than once."""
        live = [w.process for w in self.workers if w.process is not None]
        live = [p for p in live if p.poll() is None]
        for process in live:
            with contextlib.suppress(ProcessLookupError):
                process.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + timeout
        for process in live:
            try:
                process.wait(max(deadline - time.monotonic(), 0.1))
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def remove_logs(self) -> None:
        for worker in self.workers:
            remove_log(worker.log_path)

    def log_paths(self) -> list[Path]:
        return [w.log_path for w in self.workers]

    def lines_with(self, text: str) -> list[str]:
        """Every line of the workers' logs that contains ``text``, named by worker."""
        found: list[str] = []
        for worker in self.workers:
            try:
                output = worker.output()
            except FileNotFoundError:
                continue
            found.extend(f"{worker.name}: {line}" for line in output.splitlines() if text in line)
        return found

    def warnings(self, limit: int = 60) -> list[str]:
        """The workers' warnings and errors (:func:`worker_warnings`)."""
        return worker_warnings(self.workers, limit)


def worker_warnings(workers: Sequence[ChaosWorker], limit: int = 60) -> list[str]:
    """The workers' warnings and errors, oldest first, without the routine rebalance heartbeat
    notices: what a failed run's report shows of the logs."""
    found: list[str] = []
    for worker in workers:
        try:
            text = worker.output()
        except FileNotFoundError:
            continue
        for line in text.splitlines():
            if ("[WARNING]" in line or "[ERROR]" in line) and not any(
                routine in line for routine in ROUTINE
            ):
                found.append(f"{worker.name}: {line[:300]}")
    # Faust's lines start with their timestamp, after the worker's name.
    found.sort(key=lambda line: line.partition(": ")[2][:25])
    return found[-limit:]


def _indent(text: str) -> str:
    return "\n".join(f"    | {line}" for line in text.splitlines())
