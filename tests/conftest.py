"""Fixtures shared across the suite: the local stack (Tansu and Valkey on free loopback ports)
and Valkey servers with clients, each started once per test module and stopped, those
processes only, after it. Imports are deferred so that unit runs do not pay for them."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from cache_support import ValkeyServer
    from redis import Redis
    from redis.asyncio import Redis as AsyncRedis

    from stream.local.stack import LocalStack


@pytest.fixture(scope="module")
def stack() -> Iterator[LocalStack]:
    """One local stack per test module (a module that needs one per test overrides this)."""
    from stream.local.stack import LocalStack

    with LocalStack() as running:
        yield running


@pytest.fixture(scope="module")
def valkey() -> Iterator[ValkeyServer]:
    """One plain (non-cluster) Valkey per test module."""
    from cache_support import running_valkey

    with running_valkey() as server:
        yield server


@pytest.fixture(scope="module")
def valkey_cluster_node(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ValkeyServer]:
    """A cluster-enabled Valkey without slots: enough to ask it CLUSTER KEYSLOT."""
    from cache_support import cluster_port, running_valkey

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
    from redis.asyncio import Redis as AsyncRedis

    client = AsyncRedis.from_url(valkey.url)
    await client.flushdb()
    yield client
    await client.aclose()


@pytest.fixture
def sredis(valkey: ValkeyServer) -> Iterator[Redis]:
    """A sync client on the same server (flushes too: fine, fixtures run before the test)."""
    from redis import Redis

    client = Redis.from_url(valkey.url)
    client.flushdb()
    yield client
    client.close()


@pytest.fixture(params=[1, 7], ids=["batch1", "batch7"])
def batched(request: pytest.FixtureRequest) -> Iterator[int]:
    """The in-memory harness's batch size (tests/unit/pipeline/harness.py) for the modules that
    ask for it (``pytestmark = pytest.mark.usefixtures("batched")``): each of their tests runs
    with one message per runner call, and with seven (the next ones of the same agent, across
    partitions, as Faust batches them), so that batches spanning several partitions run in the
    unit tests too, not only on the broker."""
    import harness  # tests/unit/pipeline: on the path of the modules that use this

    before = harness.DEFAULT_BATCH
    harness.DEFAULT_BATCH = request.param
    yield request.param
    harness.DEFAULT_BATCH = before


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """A run that passed removes the log files of the worker processes it started (a failed
    one keeps them to be read); those files only, not another run's."""
    if exitstatus != 0:
        return
    import sys

    workers = sys.modules.get("stream.local.workers")
    if workers is not None:
        for path in list(workers.LOGS):
            workers.remove_log(path)
