"""stream/pipeline/workarounds/headgap.py: Faust alone commits past unacked records at the head
of a partition (never committed, or one record past its commit); patched, it holds the commit
back until the head is acked. Fails when a Faust upgrade fixes the head check (then remove the
workaround) or when the patch stops working."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from types import SimpleNamespace
from typing import Any

import faust
import pytest
from faust.transport.consumer import Consumer
from faust.types import TP
from faust.types.tuples import ConsumerMessage

from stream.pipeline.workarounds.acks import withhold_acks
from stream.pipeline.workarounds.headgap import held_back, patch_head_gap

TOPIC = "t"
tp = TP(TOPIC, 0)


@pytest.fixture
async def consumer() -> AsyncIterator[Any]:
    # Never started: no broker needed for the ack bookkeeping.
    app = faust.App("head-gap-test", broker="kafka://127.0.0.1:1", autodiscover=False)
    app.topics.add(app.topic(TOPIC, value_serializer="raw"))
    # Faust fills its acking-topic index when the consumer starts; without a broker, directly.
    conductor: Any = app.topics
    await conductor._update_indices()
    yield app.consumer


def message(offset: int) -> ConsumerMessage:
    return ConsumerMessage(TOPIC, 0, offset, 0.0, 0, [], b"k", b"v", None)


def ack(consumer: Any, *offsets: int) -> None:
    for offset in offsets:
        assert message(offset).ack(consumer) is True


def faust_alone(consumer: Any) -> Callable[[TP], int | None]:
    """Faust's own ``_new_offset``, whether or not the patch is installed in this process."""
    method = getattr(Consumer._new_offset, "__wrapped__", Consumer._new_offset)
    return lambda tp: method(consumer, tp)


async def test_faust_commits_past_an_unacked_head_of_a_partition_never_committed(
    consumer: Any,
) -> None:
    # A batch of offsets 0-4 withheld (a rebalance or a stop cancelled it), the next acked.
    withhold_acks([SimpleNamespace(message=message(o)) for o in range(5)])  # type: ignore[misc]
    ack(consumer, 5, 6)
    assert faust_alone(consumer)(tp) == 7, (
        "Faust no longer commits past the unacked head of a partition never committed: "
        "workarounds/headgap.py may be unneeded"
    )


async def test_faust_commits_past_one_unacked_record_after_its_commit(consumer: Any) -> None:
    consumer._committed_offset[tp] = 10  # the next offset to read
    ack(consumer, 11, 12)
    assert faust_alone(consumer)(tp) == 13, (
        "Faust's head check now catches a gap of one record: workarounds/headgap.py may be unneeded"
    )


async def test_patched_it_commits_nothing_until_the_head_is_acked(consumer: Any) -> None:
    patch_head_gap()
    patch_head_gap()
    method: Any = Consumer._new_offset
    assert not hasattr(method.__wrapped__, "__wrapped__"), "patched twice"
    ack(consumer, 5, 6)
    assert consumer._new_offset(tp) is None
    # Held back since then: the stall watchdog seeks the partition back if it lasts.
    since = held_back(consumer)[tp]
    assert consumer._new_offset(tp) is None
    assert held_back(consumer) == {tp: since}
    # The records are read again (a seek back, or the next owner) and acked: 0-6 commit 7.
    ack(consumer, 0, 1, 2, 3, 4)
    assert consumer._new_offset(tp) == 7
    assert held_back(consumer) == {}


async def test_patched_a_gap_of_one_after_the_commit_holds_it_back(consumer: Any) -> None:
    patch_head_gap()
    consumer._committed_offset[tp] = 10
    ack(consumer, 11, 12)
    assert consumer._new_offset(tp) is None
    ack(consumer, 10)
    assert consumer._new_offset(tp) == 13


async def test_faust_counts_offsets_its_fetch_jumped_over_as_done(consumer: Any) -> None:
    consumer._committed_offset[tp] = 3
    ack(consumer, 3)
    # The fetch loop's read offset was 3 when a record at 16 came: Faust marks 4-15 as holes.
    add_gap = getattr(Consumer._add_gap, "__wrapped__", Consumer._add_gap)
    await add_gap(consumer, tp, 4, 16)
    ack(consumer, 16)
    assert faust_alone(consumer)(tp) == 17, (
        "Faust no longer commits past offsets it jumped over: workarounds/headgap.py may be "
        "unneeded"
    )


async def test_patched_jumped_over_records_hold_the_commit_back(consumer: Any) -> None:
    patch_head_gap()
    consumer._committed_offset[tp] = 3
    ack(consumer, 3)
    await consumer._add_gap(tp, 4, 16)
    ack(consumer, 16)
    # Committed up to the first record never processed, and held back there.
    assert consumer._new_offset(tp) == 4
    consumer._committed_offset[tp] = 4  # as the commit records it
    assert tp in held_back(consumer)
    assert consumer._new_offset(tp) is None
    # The watchdog seeks back to 4; the records are processed and acked: 4-16 commit 17.
    ack(consumer, *range(4, 16))
    assert consumer._new_offset(tp) == 17
    assert held_back(consumer) == {}


async def test_patched_a_partition_never_committed_commits_from_its_start(
    consumer: Any,
) -> None:
    patch_head_gap()
    other = TP(TOPIC, 1)
    for offset in range(3):
        assert ConsumerMessage(TOPIC, 1, offset, 0.0, 0, [], b"k", b"v", None).ack(consumer)
    assert consumer._new_offset(other) == 3
