"""stream/pipeline/health.py: readiness reads Faust's own recovery and rebalance state (an app
never started, moved through the states by Faust's own recovery service)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import faust
import pytest

from stream.pipeline.health import readiness


@pytest.fixture
async def app() -> AsyncIterator[Any]:
    yield faust.App("health-test", broker="kafka://127.0.0.1:1", autodiscover=False)


async def test_a_worker_not_started_is_not_ready(app: Any) -> None:
    assert readiness(app) == {
        "ready": False,
        "rebalancing": False,
        "recovering": False,
        "assigned_partitions": 0,
        "refused_partitions": [],
    }


async def test_a_worker_recovering_its_tables_says_so_until_recovery_ends(app: Any) -> None:
    recovery = app.tables.recovery
    recovery._set_recovery_started()
    assert readiness(app)["recovering"] is True
    recovery._set_recovery_ended()
    assert readiness(app)["recovering"] is False


async def test_a_started_worker_is_ready_unless_it_rebalances_or_recovers(app: Any) -> None:
    app._started.set()  # what Faust's start sets
    app.consumer.assignment = lambda: {"two", "partitions"}  # a started consumer's answer
    assert readiness(app) == {
        "ready": True,
        "rebalancing": False,
        "recovering": False,
        "assigned_partitions": 2,
        "refused_partitions": [],
    }
    # An input partition refused (a table behind records its inputs no longer hold).
    refused = readiness(app, {("match-started", 3)})
    assert refused["ready"] is False
    assert refused["refused_partitions"] == ["match-started[3]"]
    app.rebalancing = True
    assert readiness(app)["ready"] is False
    app.rebalancing = False
    app.tables.recovery._set_recovery_started()
    assert readiness(app)["ready"] is False
