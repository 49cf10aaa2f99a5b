"""A batch that fails is redone until it succeeds, never raised to Faust; one cancelled while
it waits is left unacked (the Faust bookkeeping itself: workarounds/test_acks.py)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

import pytest
from faust.types.tuples import ConsumerMessage

from stream.config.settings import Settings
from stream.pipeline.app import Pipeline, build_worker
from stream.retry import Outage


def events(partition: int, n: int) -> list[Any]:
    return [
        SimpleNamespace(message=ConsumerMessage("t", partition, o, 0.0, 0, [], None, b"", None))
        for o in range(n)
    ]


@pytest.fixture
def pipeline() -> Pipeline:
    # Never started: no broker needed to run a batch handler.
    return build_worker(Settings(app_id="redo", cache_writer="off"))


async def test_a_failing_batch_is_redone_until_it_succeeds(
    pipeline: Pipeline, caplog: pytest.LogCaptureFixture
) -> None:
    batch = events(3, 4)
    pipeline.runner.match_partition(3, 0.0)
    seen: list[int] = []

    async def handle(got: Sequence[Any]) -> None:
        seen.append(len(got))
        if len(seen) < 3:
            raise ConnectionError("broker gone")

    outage = Outage("matches: batch failed")
    with caplog.at_level(logging.WARNING, logger="skillstream.worker"):
        await pipeline.until_done(handle, batch, outage)
    assert seen == [4, 4, 4]  # the same whole batch each time
    # Rebuilt from the tables before the redo, as after a restart.
    assert 3 not in pipeline.runner.match_partitions
    lines = [r for r in caplog.records if r.name == "skillstream.worker"]
    assert [r.getMessage().split(":")[0] for r in lines] == ["matches", "matches"]
    assert "4 event(s) to redo" in lines[0].getMessage() and lines[0].exc_info is not None
    assert "working again" in lines[1].getMessage() and "2 failed attempts" in lines[1].getMessage()
    assert not any(e.message.acked for e in batch)


async def test_a_batch_cancelled_while_it_waits_is_left_unacked(pipeline: Pipeline) -> None:
    batch = events(0, 3)
    started = asyncio.Event()

    async def handle(got: Sequence[Any]) -> None:
        started.set()
        await asyncio.sleep(3600)  # Kafka never answers

    task = asyncio.create_task(pipeline.until_done(handle, batch, Outage("players: batch failed")))
    await started.wait()
    task.cancel()  # the worker stops, or a rebalance takes the partitions
    with pytest.raises(asyncio.CancelledError):
        await task
    # Marked so that Faust's own ack of the batch does nothing (workarounds/test_acks.py).
    assert all(e.message.acked for e in batch)
