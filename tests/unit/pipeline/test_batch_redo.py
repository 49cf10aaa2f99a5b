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

from stream.config.settings import CacheSettings, Settings
from stream.pipeline.app import Pipeline, build_worker
from stream.pipeline.batches import BatchReport, Message
from stream.pipeline.outbox import Outbox


def events(partition: int, n: int) -> list[Any]:
    return [
        SimpleNamespace(message=ConsumerMessage("t", partition, o, 0.0, 0, [], None, b"", None))
        for o in range(n)
    ]


@pytest.fixture
def pipeline() -> Pipeline:
    # Never started: no broker needed to run a batch handler.
    return build_worker(Settings(app_id="redo", cache=CacheSettings(writer="off")))


def report(pipeline: Pipeline, n: int) -> BatchReport:
    """What a batch that processed nothing reports."""
    return BatchReport("matches", Outbox(), n, pipeline.positions.admit([]))


async def test_a_failing_batch_is_redone_until_it_succeeds(
    pipeline: Pipeline, caplog: pytest.LogCaptureFixture
) -> None:
    batch = events(3, 4)
    pipeline.runner.match_partition(3, 0.0)
    seen: list[list[tuple[int, int]]] = []

    async def flaky(messages: Sequence[Message]) -> BatchReport:
        seen.append([(m.partition, m.offset) for m in messages])
        if len(seen) < 3:
            raise ConnectionError("broker gone")
        return report(pipeline, len(messages))

    pipeline.runner.match_batch = flaky  # type: ignore[method-assign]
    with caplog.at_level(logging.WARNING, logger="skillstream.worker"):
        await pipeline.run_batch("matches", batch)
    # The same whole batch each time, as the runner's messages.
    assert seen == [[(3, 0), (3, 1), (3, 2), (3, 3)]] * 3
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

    async def stuck(messages: Sequence[Message]) -> BatchReport:
        started.set()
        await asyncio.sleep(3600)  # Kafka never answers
        return report(pipeline, len(messages))

    pipeline.runner.player_batch = stuck  # type: ignore[method-assign]
    task = asyncio.create_task(pipeline.run_batch("players", batch))
    await started.wait()
    task.cancel()  # the worker stops, or a rebalance takes the partitions
    with pytest.raises(asyncio.CancelledError):
        await task
    # Marked so that Faust's own ack of the batch does nothing (workarounds/test_acks.py).
    assert all(e.message.acked for e in batch)
