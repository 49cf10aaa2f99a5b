"""stream/pipeline/workarounds/beforecommit.py: Faust's consumer runs the app's hook after it
has chosen the offsets to commit and before it commits them; a hook that fails skips the commit;
no offset is committed above the app's limit for its partition. Fails when Faust's commit steps
change (revisit the patch) or when the hook or the limit stops applying there.

The consumer is Faust's own, never started, and runs Faust's own commit steps: the choice of
offsets is its ack bookkeeping; only the broker calls (the commit request, the producer's
flush) are replaced by recorders on the instance."""

from __future__ import annotations

import hashlib
import inspect
from collections.abc import AsyncIterator, Mapping
from typing import Any

import faust
import pytest
from faust.transport.consumer import Consumer
from faust.types import TP
from faust.types.tuples import ConsumerMessage

from stream.pipeline.workarounds.beforecommit import (
    after_commit,
    before_commit,
    limit_commits,
    patch_before_commit,
)

TOPIC = "t"
tp = TP(TOPIC, 0)


@pytest.fixture
async def consumer() -> AsyncIterator[Any]:
    patch_before_commit()
    app = faust.App("before-commit-test", broker="kafka://127.0.0.1:1", autodiscover=False)
    app.topics.add(app.topic(TOPIC, value_serializer="raw"))
    conductor: Any = app.topics
    await conductor._update_indices()
    consumer: Any = app.consumer
    consumer._committed_offset[tp] = 0
    consumer.committed = []

    async def commit(offsets: dict[TP, int]) -> bool:
        consumer.committed.append(dict(offsets))
        return True

    async def flush() -> None:
        consumer.committed.append("flushed")

    consumer._commit = commit
    consumer.assignment = lambda: {tp}
    producer: Any = app.producer
    producer.flush = flush
    yield consumer


def ack(consumer: Any, *offsets: int) -> None:
    for offset in offsets:
        message = ConsumerMessage(TOPIC, 0, offset, 0.0, 0, [], b"k", b"v", None)
        assert message.ack(consumer) is True


# The source of Faust's commit steps this patch was written against (faust-streaming 0.15.3).
PINNED = {
    "force_commit": "cc094614d22c70fb",
    "_commit_tps": "a20e230b05ae8b15",
    "_filter_committable_offsets": "dc5e9baf5d994485",
    "_commit_offsets": "1a69799041188441",
}


@pytest.mark.parametrize("name", sorted(PINNED))
def test_faust_commits_as_it_did_when_the_patch_was_written(name: str) -> None:
    method = getattr(Consumer, name)
    source = inspect.getsource(getattr(method, "__wrapped__", method))
    digest = hashlib.sha256(source.encode()).hexdigest()[:16]
    assert digest == PINNED[name], f"Faust's Consumer.{name} changed: revisit beforecommit.py"


def test_the_hook_comes_after_the_choice_and_before_faust_commits() -> None:
    """Faust's _commit_tps, as it runs: choose, publish attached messages, commit."""
    patch_before_commit()
    names = Consumer._commit_tps.__code__.co_names
    steps = ("_filter_committable_offsets", "_handle_attached", "_commit_offsets")
    assert all(step in names for step in steps)
    assert hasattr(Consumer._filter_committable_offsets, "__wrapped__")
    assert hasattr(Consumer._commit_offsets, "__wrapped__")


async def test_the_hook_runs_after_the_choice_and_records_acked_meanwhile_wait(
    consumer: Any,
) -> None:
    calls: list[dict[TP, int]] = []

    async def hook(chosen: Mapping[TP, int]) -> bool:
        calls.append(dict(chosen))
        # A batch acked while the hook awaits: its writes may not be in this flush.
        ack(consumer, 2, 3)
        return True

    before_commit(consumer.app, hook)
    ack(consumer, 0, 1)
    assert await consumer.commit() is True
    assert calls == [{tp: 2}]  # the hook is told the offsets about to be committed
    assert consumer.committed == ["flushed", {tp: 2}]
    # The next commit takes them (and runs the hook again).
    before_commit(consumer.app, _succeeds)
    assert await consumer.commit() is True
    assert consumer.committed[-1] == {tp: 4}
    assert consumer._committed_offset[tp] == 4


async def _succeeds(chosen: Mapping[TP, int]) -> bool:
    return True


async def test_a_failed_hook_skips_the_commit_and_the_next_one_makes_it(consumer: Any) -> None:
    async def fails(chosen: Mapping[TP, int]) -> bool:
        return False

    before_commit(consumer.app, fails)
    ack(consumer, 0, 1, 2)
    assert await consumer.commit() is False
    assert consumer.committed == []
    before_commit(consumer.app, _succeeds)
    assert await consumer.commit() is True
    assert consumer.committed == ["flushed", {tp: 3}]


async def test_nothing_to_commit_runs_no_hook(consumer: Any) -> None:
    calls: list[int] = []

    async def hook(chosen: Mapping[TP, int]) -> bool:
        calls.append(1)
        return True

    before_commit(consumer.app, hook)
    assert await consumer.commit() is False
    assert calls == []


async def test_no_offset_is_committed_past_the_limit_and_the_rest_waits_for_it(
    consumer: Any,
) -> None:
    """Faust acked 0-5, but the agent has processed only up to 3 (the limit: the runner's
    position). 3 is committed; 3-5 stay on Faust's acked lists, committed once processed."""
    limits = {(TOPIC, 0): 3}
    limit_commits(consumer.app, lambda topic, partition: limits.get((topic, partition)))
    before_commit(consumer.app, _succeeds)
    ack(consumer, 0, 1, 2, 3, 4, 5)
    assert await consumer.commit() is True
    assert consumer.committed == ["flushed", {tp: 3}]
    assert await consumer.commit() is False  # nothing new within the limit
    limits[(TOPIC, 0)] = 6
    assert await consumer.commit() is True
    assert consumer.committed[-1] == {tp: 6}


async def test_a_partition_without_a_limit_is_not_committed_and_keeps_its_acks(
    consumer: Any,
) -> None:
    limits: dict[tuple[str, int], int] = {}
    limit_commits(consumer.app, lambda topic, partition: limits.get((topic, partition)))
    before_commit(consumer.app, _succeeds)
    ack(consumer, 0, 1)
    assert await consumer.commit() is False
    limits[(TOPIC, 0)] = 2
    assert await consumer.commit() is True
    assert consumer.committed == ["flushed", {tp: 2}]


async def test_the_after_commit_callback_gets_what_went_through(consumer: Any) -> None:
    seen: list[dict[TP, int]] = []
    after_commit(consumer.app, lambda offsets: seen.append(dict(offsets)))
    before_commit(consumer.app, _succeeds)
    ack(consumer, 0, 1)
    assert await consumer.commit() is True
    assert seen == [{tp: 2}]


def test_patching_twice_wraps_once() -> None:
    patch_before_commit()
    patch_before_commit()
    for name in ("_filter_committable_offsets", "_commit_offsets"):
        method: Any = getattr(Consumer, name)
        assert not hasattr(method.__wrapped__, "__wrapped__")
