"""Worker processes on the local stack: start, wait until ready, stop or kill exactly them."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path


class WorkerError(RuntimeError):
    """A worker that did not start, with its output."""


# What a worker process runs after the interpreter: ``skillstream worker``.
WORKER = ("-m", "stream", "worker")


class WorkerProcess:
    """``skillstream worker`` (or another Faust app, ``command``) in a child process, logging to
    a temporary file.

    The log outlives the process (a crash's last lines are read after it); :meth:`cleanup`
    removes it, and :data:`LOGS` lists every log this Python process made that is still there,
    so that a caller that made many (the test suite) removes exactly its own at the end."""

    def __init__(
        self, env: Mapping[str, str], name: str = "worker", command: Sequence[str] = WORKER
    ) -> None:
        self.env = dict(env)
        self.name = name
        self.command = list(command)
        self.log_path = Path(tempfile.mkstemp(prefix=f"skillstream-{name}-", suffix=".log")[1])
        LOGS.add(self.log_path)
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 60.0) -> WorkerProcess:
        """Start and wait for Faust's "Worker ready" (partitions assigned, tables recovered)."""
        self.launch()
        self.wait_ready(timeout)
        return self

    def launch(self) -> None:
        """Start the process without waiting for it to be ready."""
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, *self.command],
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                # Own session: Ctrl-C reaches the parent, which stops the worker in order.
                start_new_session=True,
            )

    def wait_ready(self, timeout: float = 60.0, after: int = 0) -> None:
        """Wait for the ``after``-th-plus-one "Worker ready" line (recovery after a rebalance)."""
        self.wait_for("Worker ready", timeout, after)

    def wait_for(self, text: str, timeout: float = 60.0, after: int = 0) -> None:
        """Wait for the ``after``-th-plus-one line containing ``text`` in the worker's log."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.output().count(text) > after:
                return
            if self.process is not None and self.process.poll() is not None:
                raise WorkerError(
                    f"{self.name} exited with {self.process.returncode}:\n{self.output()[-4000:]}"
                )
            time.sleep(0.1)
        raise WorkerError(f"{self.name}: no {text!r} in {timeout:.0f} s:\n{self.output()[-4000:]}")

    def output(self) -> str:
        return self.log_path.read_text(errors="replace")

    def stop(self, timeout: float = 30.0) -> int | None:
        """SIGTERM (graceful: finish the batch, flush, commit), SIGKILL if it hangs."""
        process = self.process
        if process is None or process.poll() is not None:
            return None if process is None else process.returncode
        process.send_signal(signal.SIGTERM)
        try:
            return process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            return process.wait()

    def kill(self) -> None:
        """SIGKILL: a crash, nothing flushed or committed."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    @property
    def running(self) -> bool:
        """Started and not exited."""
        return self.process is not None and self.process.poll() is None

    @property
    def pid(self) -> int | None:
        return None if self.process is None else self.process.pid

    def cleanup(self) -> None:
        self.stop()
        remove_log(self.log_path)


# The logs of the WorkerProcesses this Python process made, until removed.
LOGS: set[Path] = set()


def remove_log(path: Path) -> None:
    """Remove a worker's log (gone already: nothing to do)."""
    LOGS.discard(path)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
