"""Which fetched records are read again (stream/pipeline/workarounds/unread.py)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import pytest
from aiokafka import TopicPartition
from faust.transport.drivers import aiokafka as aiokafka_driver
from hypothesis import given
from hypothesis import strategies as st

from stream.pipeline.workarounds import unread as unread_module
from stream.pipeline.workarounds.unread import Fetched, not_handed_on, patch_unread


@dataclass(frozen=True)
class Record:
    offset: int


def batch(*offsets: int) -> list[Record]:
    return [Record(o) for o in offsets]


def test_a_partition_none_of_whose_records_was_handed_on_is_read_again_from_its_first() -> None:
    assert not_handed_on({"a": batch(7, 8, 9)}, {}) == {"a": 7}


def test_a_partition_left_midway_is_read_again_after_its_last_record_handed_on() -> None:
    assert not_handed_on({"a": batch(7, 8, 9), "b": batch(3)}, {"a": 9, "b": 4}) == {"a": 9}


def test_a_batch_handed_on_whole_or_empty_reads_nothing_again() -> None:
    assert not_handed_on({"a": batch(7, 8), "b": []}, {"a": 9}) == {}


@given(
    st.lists(st.integers(0, 5), min_size=1, max_size=20),
    st.integers(0, 1000),
    st.data(),
)
def test_what_is_read_again_is_exactly_the_records_after_those_handed_on(
    gaps: list[int], start: int, data: st.DataObject
) -> None:
    offsets = []
    at = start
    for gap in gaps:  # compacted changelogs leave gaps between offsets
        at += gap
        offsets.append(at)
        at += 1
    handed_count = data.draw(st.integers(0, len(offsets)))
    handed = {"a": offsets[handed_count - 1] + 1} if handed_count else {}
    rest = not_handed_on({"a": batch(*offsets)}, handed)
    if handed_count == len(offsets):
        assert rest == {}
    else:
        assert [o for o in offsets if o >= rest["a"]] == offsets[handed_count:]


def test_the_patch_replaces_the_consumer_fetch_and_its_walk_once() -> None:
    patch_unread()
    getmany = aiokafka_driver.Consumer.getmany
    fetch = aiokafka_driver.AIOKafkaConsumerThread.getmany
    patch_unread()
    assert hasattr(getmany, "__wrapped__") and hasattr(fetch, "__wrapped__")
    assert aiokafka_driver.Consumer.getmany is getmany
    assert hasattr(aiokafka_driver.Consumer.seek, "__wrapped__")
    assert aiokafka_driver.AIOKafkaConsumerThread.getmany is fetch


A, B = TopicPartition("a", 0), TopicPartition("b", 0)


class RoundRobin:
    """Faust's scheduler takes partitions in turn."""

    def iterate(self, records: dict[Any, list[Record]]) -> Iterator[tuple[Any, Record]]:
        its = {tp: iter(b) for tp, b in records.items()}
        while its:
            for tp in list(its):
                record = next(its[tp], None)
                if record is None:
                    del its[tp]
                else:
                    yield tp, record


class FaustConsumerState:
    """The state of Faust's consumer that its getmany reads: a batch just fetched for ``A``
    (active) and ``B`` (paused while the fetch waited)."""

    def __init__(self) -> None:
        self.records = Fetched({A: batch(1, 2, 3), B: batch(10, 11)}, {A: ("state", 4)})
        self.active = {A}
        self._buffered_partitions: set[Any] = set()
        self.flow_active = True
        self.should_stop = False
        self.scheduler = RoundRobin()
        self._thread = "consumer thread"
        self.app = SimpleNamespace(
            consumer_generation_id=1,
            monitor=SimpleNamespace(track_tp_end_offset=lambda tp, end: None),
        )

        # Faust's own seek (faust.transport.consumer.Consumer.seek) reads these.
        self.log = SimpleNamespace(dev=lambda *args: None)
        self._read_offset: dict[Any, int | None] = {}
        self.sought: list[tuple[Any, int]] = []
        self.seek_while_fetching: tuple[Any, int] | None = None
        self.refuse_seeks = False

    async def _wait_next_records(self, timeout: float) -> tuple[Fetched, set[Any]]:
        if self.seek_while_fetching is not None:
            await seek(self, *self.seek_while_fetching)
        return self.records, self.active

    async def _seek(self, tp: Any, offset: int) -> None:
        if self.refuse_seeks:
            raise RuntimeError("the partition was revoked")
        self.sought.append((tp, offset))

    def highwater(self, tp: Any) -> int:
        return 99

    def _to_message(self, tp: Any, record: Record) -> tuple[str, int]:
        return tp.topic, record.offset


Scheduled = list[tuple[Any, dict[Any, int], Any]]


@pytest.fixture
def scheduled(monkeypatch: pytest.MonkeyPatch) -> Scheduled:
    """The un-reads the walk queues on the consumer thread."""
    calls: Scheduled = []
    monkeypatch.setattr(
        unread_module, "_schedule_unread", lambda *args: calls.append((args[0], args[1], args[2]))
    )
    return calls


def both_active() -> FaustConsumerState:
    """The patched consumer's state with ``A`` and ``B`` both active."""
    patch_unread()
    state = FaustConsumerState()
    state.active = {A, B}
    return state


async def seek(state: FaustConsumerState, tp: Any, offset: int) -> None:
    """A seek through Faust's consumer, as the patch wraps it."""
    await aiokafka_driver.Consumer.seek(state, tp, offset)  # type: ignore[arg-type]


async def test_the_walk_hands_on_active_records_and_reads_the_paused_ones_again(
    scheduled: Scheduled,
) -> None:
    state = FaustConsumerState()
    handed = [message async for _, message in unread_module._handed_on(state, 1.0)]
    assert handed == [("a", 1), ("a", 2), ("a", 3)]
    assert scheduled == [("consumer thread", {B: 10}, {A: ("state", 4)})]


async def test_a_walk_left_midway_reads_the_rest_again(scheduled: Scheduled) -> None:
    state = FaustConsumerState()
    walk = unread_module._handed_on(state, 1.0)
    assert await anext(walk) == (A, ("a", 1))
    state.app.consumer_generation_id = 2  # a rebalance: Faust leaves the rest of the batch
    assert [m async for _, m in walk] == []
    assert [rest for _, rest, _ in scheduled] == [{A: 2, B: 10}]


async def test_a_walk_closed_after_a_record_counts_it_handed_on(scheduled: Scheduled) -> None:
    state = FaustConsumerState()
    walk = unread_module._handed_on(state, 1.0)
    assert await anext(walk) == (A, ("a", 1))
    await walk.aclose()
    assert [rest for _, rest, _ in scheduled] == [{A: 2, B: 10}]


async def test_a_partition_resumed_midway_hands_on_none_after_one_left(
    scheduled: Scheduled,
) -> None:
    state = FaustConsumerState()
    state.active = {B}
    walk = unread_module._handed_on(state, 1.0)
    assert await anext(walk) == (B, ("b", 10))  # A's first record was left
    state.active.add(A)  # resumed: A's next records must not overtake the one left
    assert [m async for _, m in walk] == [("b", 11)]
    assert [rest for _, rest, _ in scheduled] == [{A: 1}]


async def test_a_stopping_consumer_reads_nothing_again(scheduled: Scheduled) -> None:
    state = FaustConsumerState()
    walk = unread_module._handed_on(state, 1.0)
    await anext(walk)
    state.should_stop = True
    await walk.aclose()
    assert scheduled == []


async def test_a_partition_sought_midway_hands_on_nothing_fetched_before_the_seek(
    scheduled: Scheduled,
) -> None:
    state = both_active()
    walk = unread_module._handed_on(state, 1.0)
    assert await anext(walk) == (A, ("a", 1))
    # While Faust delivers A's 1, the batch runner finds a record missing and reads the
    # partition again from 0; then Faust's fetch loop sets the read offset from A's 1
    # (faust.transport.consumer.Consumer._drain_messages). That, or A's 2 and 3 handed on
    # after the seek, would have the 0-3 fetched again dropped below the read offset.
    await seek(state, A, 0)
    assert state.sought == [(A, 0)] and state._read_offset[A] is None
    state._read_offset[A] = 1
    assert [m async for _, m in walk] == [("b", 10), ("b", 11)]
    assert state._read_offset[A] is None  # the seek's again
    # Queued for an un-read, which finds the position moved by the seek and leaves it.
    assert [rest for _, rest, _ in scheduled] == [{A: 2}]


async def test_a_seek_while_the_fetch_waits_leaves_the_partition_s_batch(
    scheduled: Scheduled,
) -> None:
    state = both_active()
    # Whether aiokafka made the seek before the fetch or after it, the walk cannot tell: B's
    # records are left, and the un-read reads them again if the fetch came after the seek.
    state.seek_while_fetching = (B, 10)
    handed = [m async for _, m in unread_module._handed_on(state, 1.0)]
    assert handed == [("a", 1), ("a", 2), ("a", 3)]
    assert [rest for _, rest, _ in scheduled] == [{B: 10}]


async def test_a_failed_seek_leaves_the_batch_and_the_read_offset_as_faust_set_it(
    scheduled: Scheduled,
) -> None:
    state = both_active()
    state.refuse_seeks = True
    walk = unread_module._handed_on(state, 1.0)
    assert await anext(walk) == (A, ("a", 1))
    with pytest.raises(RuntimeError):
        await seek(state, A, 0)
    state._read_offset[A] = 1
    assert [m async for _, m in walk] == [("b", 10), ("b", 11)]
    assert state._read_offset[A] == 1
    assert [rest for _, rest, _ in scheduled] == [{A: 2}]  # read again, from where it was
