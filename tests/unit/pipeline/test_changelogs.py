"""stream/pipeline/changelogs.py: held table writes are read at once, coalesce per key until the
flush, reach the store only once sent, and survive a failed flush under newer writes.

The writes are held on a real (never started) Faust table with its memory store; sending to the
broker is covered end to end by the worker's restart and chaos tests."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import faust
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream.pipeline import changelogs
from stream.pipeline.batches import Message
from stream.pipeline.changelogs import TableWrites
from stream.pipeline.checkpoints import AgentInputs, Checkpoints
from stream.protocol.checkpoints import checkpoint_key, decode_checkpoint


class Event:
    """Stands for a Faust event (the store takes the current event from it)."""


@pytest.fixture
def table() -> Iterator[Any]:
    app = faust.App("changelogs-test", broker="kafka://127.0.0.1:1", autodiscover=False)
    yield app.Table("t", default=None, partitions=2)


def test_reads_see_held_writes_over_the_store(table: Any) -> None:
    table.data[b"a"] = b"stored"
    table.data[b"b"] = b"stored"
    writes = TableWrites(table)
    writes.hold(0, {b"a": b"new", b"c": b"created", b"b": None}, Event())
    assert writes.get(b"a") == b"new"
    assert writes[b"c"] == b"created"
    assert writes.get(b"b") is None and b"b" not in writes
    with pytest.raises(KeyError):
        writes[b"b"]
    assert dict(writes.items()) == {b"a": b"new", b"c": b"created"}
    assert len(writes) == 2
    # Nothing reached the store yet.
    assert dict(table.data.items()) == {b"a": b"stored", b"b": b"stored"}


def test_versions_of_a_key_coalesce_and_a_record_created_and_deleted_leaves_nothing(
    table: Any,
) -> None:
    table.data[b"kept"] = b"v0"
    writes = TableWrites(table)
    event = Event()
    writes.hold(1, {b"kept": b"v1", b"brief": b"p1"}, event)
    writes.hold(1, {b"kept": b"v2"}, event)
    writes.hold(1, {b"brief": None, b"kept": b"v3"}, event)
    assert writes.take() == {1: {b"kept": b"v3"}}


def test_a_deleted_stored_record_sends_its_tombstone(table: Any) -> None:
    table.data[b"old"] = b"v"
    writes = TableWrites(table)
    writes.hold(0, {b"old": None}, Event())
    by_partition = writes.take()
    assert by_partition == {0: {b"old": None}}
    writes.sent(by_partition, {0: 7})
    assert b"old" not in table.data
    assert b"old" not in writes


def test_sent_writes_reach_the_store_and_reads_stay_the_same_meanwhile(table: Any) -> None:
    writes = TableWrites(table)
    writes.hold(0, {b"a": b"1"}, Event())
    writes.hold(1, {b"b": b"2"}, Event())
    by_partition = writes.take()
    assert by_partition == {0: {b"a": b"1"}, 1: {b"b": b"2"}}
    # Being sent: still read, not yet in the store.
    assert writes.get(b"a") == b"1" and b"a" not in table.data
    # A batch deletes a record whose creation is being sent: its tombstone must follow.
    writes.hold(0, {b"a": None}, Event())
    writes.sent(by_partition, {0: 0, 1: 0})
    assert table.data[b"a"] == b"1" and table.data[b"b"] == b"2"
    assert writes.get(b"a") is None
    assert writes.take() == {0: {b"a": None}}


def test_a_failed_flush_holds_its_writes_again_under_newer_ones(table: Any) -> None:
    writes = TableWrites(table)
    writes.hold(0, {b"a": b"1", b"b": b"1"}, Event())
    writes.take()
    writes.hold(0, {b"a": b"2"}, Event())
    writes.failed()
    assert dict(table.data.items()) == {}
    assert writes.take() == {0: {b"a": b"2", b"b": b"1"}}


def test_dropping_revoked_partitions_keeps_the_others(table: Any) -> None:
    writes = TableWrites(table)
    writes.hold(0, {b"a": b"1"}, Event())
    writes.hold(1, {b"b": b"1"}, Event())
    writes.drop([1])
    assert writes.take() == {0: {b"a": b"1"}}


Op = tuple[bytes, bytes | None]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.lists(
            st.tuples(
                st.sampled_from([b"k1", b"k2", b"k3"]),
                st.one_of(st.none(), st.sampled_from([b"x", b"y"])),
            ),
            max_size=6,
        ),
        max_size=8,
    ),
    st.lists(st.sampled_from(["flush", "fail", "none"]), min_size=8, max_size=8),
)
def test_reads_always_match_writing_through_and_the_store_ends_equal(
    batches: list[list[Op]], flushes: list[str]
) -> None:
    # Whatever the batches and whichever flushes fail, reads equal a table written through at
    # once, and after a last successful flush the store equals it too.
    app = faust.App("changelogs-prop", broker="kafka://127.0.0.1:1", autodiscover=False)
    table = app.Table("t", default=None, partitions=2)
    writes = TableWrites(table)
    expected: dict[bytes, bytes] = {}
    event = Event()
    for batch, flush in zip(batches, flushes, strict=False):
        changes: dict[int, dict[bytes, bytes | None]] = {}
        for key, value in batch:
            # A key lives on one partition, as in the pipeline's tables.
            changes.setdefault(key[-1] % 2, {})[key] = value
        for partition, part in changes.items():
            writes.hold(partition, part, event)
            for key, value in part.items():
                if value is None:
                    expected.pop(key, None)
                else:
                    expected[key] = value
        if flush != "none":
            by_partition = writes.take()
            if flush == "flush":
                writes.sent(by_partition, {})
            else:
                writes.failed()
        assert dict(writes.items()) == expected
    writes.sent(writes.take(), {})
    assert dict(table.data.items()) == expected


async def test_every_batch_a_flush_sends_ends_with_its_checkpoint_and_no_reader_sees_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """BufferedTables.flush: each changelog partition's batch ends with the checkpoint of the
    offsets chosen (stream/pipeline/checkpoints.py), every table of an agent whose inputs moved
    gets one, the store takes it like any record, and iterating the table never shows it."""
    app = faust.App("changelogs-checkpoints", broker="kafka://127.0.0.1:1", autodiscover=False)
    ratings = app.Table("ratings", default=None, partitions=2)
    pending = app.Table("pending", default=None, partitions=2)
    sent: list[tuple[str, dict[int, list[bytes]]]] = []

    async def send(app: Any, topic: str, by_partition: Any) -> dict[int, int]:
        sent.append((topic, {p: list(changes) for p, changes in by_partition.items()}))
        return {p: 0 for p in by_partition}

    monkeypatch.setattr(changelogs, "send_record_batches", send)
    agents = Checkpoints([AgentInputs("players", ("pc",), ("ratings", "pending"))])
    agents.started({("pc", 0): 3, ("pc", 1): 5})
    tables = changelogs.BufferedTables(
        app, {"ratings": ratings, "pending": pending}, checkpoints=agents
    )
    await tables.write("ratings", 0, {b'["a","1v1"]': b"r"}, Message("pc", 0, 3, None, None, b""))
    assert await tables.flush({("pc", 0): 4})
    assert [(topic.split("-")[-2], parts) for topic, parts in sent] == [
        ("ratings", {0: [b'["a","1v1"]', checkpoint_key(0)]}),
        ("pending", {0: [checkpoint_key(0)]}),  # its agent's input moved: checkpointed too
    ]
    assert decode_checkpoint(ratings.data[checkpoint_key(0)]) == {"pc": 4}
    assert list(tables.contents("ratings")) == [b'["a","1v1"]']
    sent.clear()
    # A flush before a revocation commits nothing: what it sends ends with the last commit's.
    await tables.write("pending", 1, {b'"b"': b"p"}, Message("pc", 1, 5, None, None, b""))
    assert await tables.flush()
    assert [(topic.split("-")[-2], parts) for topic, parts in sent] == [
        ("ratings", {}),
        ("pending", {1: [b'"b"', checkpoint_key(1)]}),
    ]
    assert decode_checkpoint(pending.data[checkpoint_key(1)]) == {"pc": 5}
