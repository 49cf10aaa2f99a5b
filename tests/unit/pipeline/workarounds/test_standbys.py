"""stream/pipeline/workarounds/standbys.py: the memory store knows the changelog offset its
contents hold, keeps what it holds as a standby when a recovery ends, forgets whole what it no
longer holds, and Faust's recovery starts a newly active partition at that offset. A
never-started app's tables; the fail-over itself runs on the broker in `skillstream bench
recovery` and the multi-worker end-to-end tests (tests/e2e/test_backlog.py)."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import faust
import pytest
from faust.tables import recovery as recovery_module
from faust.tables.recovery import Recovery
from faust.types import TP
from faust_tables import raw_table
from hypothesis import given, settings
from hypothesis import strategies as st
from mode.utils.queues import FlowControlEvent, FlowControlQueue

from stream.config.stores import STORES
from stream.pipeline.workarounds import standbys, tablestore
from stream.pipeline.workarounds.standbys import GuardedRocksDBStore, StandbyMemoryStore

TOPIC = "standby-test-ratings-changelog"


@pytest.fixture
def table() -> Iterator[Any]:
    standbys.register()
    app = faust.App(
        "standby-test",
        broker="kafka://127.0.0.1:1",
        store=STORES["memory"].url,
        autodiscover=False,
    )
    yield raw_table(app, 3)


def _event(partition: int, offset: int, key: bytes, value: bytes | None) -> Any:
    message = SimpleNamespace(
        tp=TP(TOPIC, partition), partition=partition, offset=offset, key=key, value=value
    )
    return SimpleNamespace(message=message, key=key, value=value)


def _apply(table: Any, *events: Any) -> None:
    table.data.apply_changelog_batch(list(events), lambda k: k, lambda v: v)


def _assign(table: Any, assigned: set[int], revoked: frozenset[int] = frozenset()) -> None:
    """Faust's rebalance hook: the table's changelog partitions assigned here (active or
    standby), and those revoked."""
    tps = {TP(TOPIC, p) for p in assigned}
    gone = {TP(TOPIC, p) for p in revoked}
    asyncio.run(table.data.on_rebalance(tps, gone, tps - gone))


def test_the_workers_memory_store_is_the_standby_store(table: Any) -> None:
    assert STORES["memory"].url.startswith(f"{standbys.SCHEME}://")
    assert isinstance(table.data, StandbyMemoryStore)
    assert tablestore.persists(table) is True  # it is told the offsets it holds


def test_a_changelog_batch_moves_each_partitions_offset_to_its_last_record(table: Any) -> None:
    _assign(table, {0, 1})
    assert table.data.persisted_offset(TP(TOPIC, 0)) is None
    _apply(table, _event(0, 4, b"a", b"1"), _event(1, 9, b"b", b"2"), _event(0, 7, b"c", b"3"))
    _apply(table, _event(0, 5, b"a", b"1"))  # read again (Faust re-reads the offset it starts at)
    assert table.data.persisted_offset(TP(TOPIC, 0)) == 7
    assert table.data.persisted_offset(TP(TOPIC, 1)) == 9
    _apply(table, _event(1, 10, b"b", None))
    assert dict(table.data.data) == {b"a": b"1", b"c": b"3"}
    assert table.data.persisted_offset(TP(TOPIC, 1)) == 10


def test_the_workers_own_writes_and_offsets_reach_the_store(table: Any) -> None:
    _assign(table, {2})
    tablestore.write_partition(table, 2, {b"x": b"1", b"y": b"2"})
    tablestore.set_persisted(table, 2, 41)
    tablestore.write_partition(table, 2, {b"y": None})
    assert dict(table.data.data) == {b"x": b"1"}
    assert table.data.persisted_offset(TP(TOPIC, 2)) == 41


def test_a_recovery_keeps_active_and_standby_partitions_and_drops_the_rest(table: Any) -> None:
    _assign(table, {0, 1, 2})
    _apply(table, _event(0, 3, b"active", b"1"), _event(1, 8, b"standby", b"2"))
    tablestore.write_partition(table, 2, {b"gone": b"3"})
    tablestore.set_persisted(table, 2, 5)
    _apply(table, _event(2, 6, b"gone too", b"4"))
    asyncio.run(table.data.on_recovery_completed({TP(TOPIC, 0)}, {TP(TOPIC, 1)}))
    assert dict(table.data.data) == {b"active": b"1", b"standby": b"2"}
    assert table.data.persisted_offset(TP(TOPIC, 1)) == 8
    # Partition 2 is no longer held: its offset goes with its keys, so taken again it is read
    # from the changelog's start, not from an offset its dropped contents no longer match.
    assert table.data.persisted_offset(TP(TOPIC, 2)) is None


def test_fausts_recovery_starts_a_standby_that_turns_active_at_its_offset(table: Any) -> None:
    # The premise of the workaround: Faust's Recovery reads the store's persisted offset for a
    # partition it recovers, so a standby copy is continued, not read again from the start.
    _assign(table, {1})
    _apply(table, _event(1, 12, b"standby", b"2"))
    recovery = table.app.tables.recovery
    tp = TP(TOPIC, 1)
    recovery.add_active(table, tp)
    assert recovery.active_offsets[tp] == 12


def test_a_record_delivered_late_never_puts_an_old_value_back(table: Any) -> None:
    # The standby copy of partition 0 turns active; a record Faust's reader took from its
    # queue during the rebalance is applied from its buffer after the worker's own newer
    # write of the same key (seen as a match rated twice in `skillstream chaos --seed 7`).
    _assign(table, {0})
    _apply(table, _event(0, 20, b"p7", b"13 games"), _event(0, 21, b"checkpoint", b"at 21"))
    tablestore.write_partition(table, 0, {b"p7": b"14 games", b"checkpoint": b"at 25"})
    tablestore.set_persisted(table, 0, 25)
    _apply(table, _event(0, 20, b"p7", b"13 games"), _event(0, 21, b"checkpoint", b"at 21"))
    assert dict(table.data.data) == {b"p7": b"14 games", b"checkpoint": b"at 25"}
    assert table.data.persisted_offset(TP(TOPIC, 0)) == 25
    assert table.data.skipped_late == 2
    # What is newer than the store is applied, in order.
    _apply(table, _event(0, 25, b"p7", b"14 games"), _event(0, 26, b"p7", b"15 games"))
    assert table.data.data[b"p7"] == b"15 games"
    assert table.data.skipped_late == 2  # the offset the store holds is not late


def test_a_partition_no_longer_assigned_is_dropped_at_once_and_never_applied(table: Any) -> None:
    _assign(table, {0, 1})
    _apply(table, _event(0, 3, b"a", b"1"), _event(1, 4, b"b", b"2"))
    _assign(table, {0}, revoked=frozenset({1}))
    assert dict(table.data.data) == {b"a": b"1"}
    assert table.data.persisted_offset(TP(TOPIC, 1)) is None
    # Records of partition 1 delivered now would make a copy that is not a prefix of its
    # changelog, with an offset that says it is: not applied, nor the worker's own late writes.
    _apply(table, _event(1, 9, b"late", b"3"))
    tablestore.write_partition(table, 1, {b"own": b"4"})
    tablestore.set_persisted(table, 1, 10)
    assert dict(table.data.data) == {b"a": b"1"}
    assert table.data.persisted_offset(TP(TOPIC, 1)) is None
    assert table.data.skipped_other == 1


def test_a_record_of_another_tables_changelog_is_not_applied(table: Any) -> None:
    _assign(table, {0})
    other = SimpleNamespace(
        tp=TP("standby-test-pending-changelog", 0), partition=0, offset=5, key=b"k", value=b"v"
    )
    _apply(table, SimpleNamespace(message=other, key=b"k", value=b"v"))
    assert dict(table.data.data) == {}
    assert table.data.persisted_offset(TP(TOPIC, 0)) is None
    assert table.data.persisted_offset(TP("standby-test-pending-changelog", 0)) is None
    assert table.data.skipped_other == 1


def test_the_rocksdb_store_never_puts_an_old_value_or_offset_back(tmp_path: Path) -> None:
    standbys.register()
    app = faust.App(
        "standby-test",
        broker="kafka://127.0.0.1:1",
        store=STORES["rocksdb"].url,
        datadir=str(tmp_path),
        autodiscover=False,
    )
    rocks = raw_table(app, 3)
    store = rocks.data
    assert isinstance(store, GuardedRocksDBStore)
    _apply(rocks, _event(0, 20, b"p7", b"13 games"))
    with tablestore.as_event(tablestore.partition_event(0)):
        tablestore.write_partition(rocks, 0, {b"p7": b"14 games"})
    tablestore.set_persisted(rocks, 0, 25)
    _apply(rocks, _event(0, 20, b"p7", b"13 games"), _event(0, 26, b"p8", b"1 game"))
    assert store[b"p7"] == b"14 games"
    assert store[b"p8"] == b"1 game"
    assert store.persisted_offset(TP(TOPIC, 0)) == 26
    assert store.skipped_late == 1


KEYS = st.sampled_from([b"p1", b"p2", b"p3"])
VALUES = st.one_of(st.none(), st.binary(min_size=1, max_size=3))
STEPS = st.lists(
    st.one_of(
        st.tuples(st.just("read"), st.integers(1, 5)),
        st.tuples(st.just("own"), st.lists(st.tuples(KEYS, VALUES), min_size=1, max_size=3)),
        st.tuples(st.just("late"), st.integers(0, 1_000)),
    ),
    max_size=30,
)


@settings(max_examples=200, deadline=None)
@given(steps=STEPS, written=st.lists(st.tuples(KEYS, VALUES), max_size=12))
def test_whatever_arrives_late_the_store_is_its_changelog_up_to_its_offset(
    steps: list[tuple[str, Any]], written: list[tuple[bytes, bytes | None]]
) -> None:
    standbys.register()
    app = faust.App(
        "standby-test", broker="kafka://127.0.0.1:1", store=STORES["memory"].url, autodiscover=False
    )
    table: Any = raw_table(app, 1)
    _assign(table, {0})
    log = list(written)  # the changelog of partition 0, written by the previous owner
    read = 0  # how far the reader has delivered it
    for kind, arg in steps:
        if kind == "read" and read < len(log):
            batch = [_event(0, o, *log[o]) for o in range(read, min(read + arg, len(log)))]
            read += len(batch)
            _apply(table, *batch)
        elif kind == "own" and read == len(log):
            # The worker writes once it has read what there was (it is the active owner).
            changes = dict(arg)
            log.extend(changes.items())
            tablestore.write_partition(table, 0, changes)
            tablestore.set_persisted(table, 0, len(log) - 1)
            read = len(log)
        elif kind == "late" and read:
            offset = arg % read
            _apply(table, _event(0, offset, *log[offset]))
    held = table.data.persisted_offset(TP(TOPIC, 0))
    expected: dict[bytes, bytes] = {}
    for key, value in log[: (held if held is not None else -1) + 1]:
        if value is None:
            expected.pop(key, None)
        else:
            expected[key] = value
    assert dict(table.data.data) == expected


async def test_the_recovery_s_end_resumes_the_flow_keeping_only_the_changelog_queue() -> None:
    flow = FlowControlEvent(initially_suspended=True)
    changelog: FlowControlQueue[int] = FlowControlQueue(flow_control=flow, clear_on_resume=True)
    stream: FlowControlQueue[int] = FlowControlQueue(flow_control=flow, clear_on_resume=True)
    for n in range(3):
        changelog.put_nowait(n)
        stream.put_nowait(n)
    with standbys.changelog_records_kept(flow, changelog):
        flow.resume()  # as Faust's on_recovery_completed calls it
    assert flow.is_active()
    assert [changelog.get_nowait() for _ in range(3)] == [0, 1, 2]  # kept, in order
    assert stream.empty()  # cleared, as Faust clears it
    changelog.put_nowait(9)
    flow.suspend()
    flow.resume()
    assert changelog.empty()  # only inside are they kept
    assert standbys.resume_keeping(flow.resume, stream) == 0


def test_fausts_recovery_end_resumes_the_flow_where_the_records_are_kept() -> None:
    # The patch shadows app.flow_control.resume for on_recovery_completed: Faust must still
    # resume the flow there through it, or the records would be cleared again.
    standbys.register()
    source = inspect.getsource(recovery_module)
    body = source[source.index("    async def on_recovery_completed") :]
    body = body[: body.index("\n    async def ", 10)]
    assert "self.app.flow_control.resume()" in body
    assert getattr(Recovery.on_recovery_completed, "_skillstream_keeps", False)


def _recovery(standby: set[int], ends: dict[int, int], read: dict[int, int]) -> Any:
    """What standby_lag reads of Faust's Recovery: the standby partitions, the last offset of
    each changelog when the standbys started, and the last offset each has read."""
    return SimpleNamespace(
        standby_tps={TP(TOPIC, p) for p in standby},
        standby_highwaters={TP(TOPIC, p): o for p, o in ends.items()},
        standby_offsets={TP(TOPIC, p): o for p, o in read.items()},
    )


def test_standby_lag_counts_the_records_left_to_the_ends_the_copies_started_with() -> None:
    assert standbys.standby_lag(_recovery(set(), {}, {})) is None  # no standby partition
    assert standbys.standby_lag(_recovery({0, 1}, {0: 9}, {})) is None  # an end not read yet
    assert standbys.standby_lag(_recovery({0, 1}, {0: 9, 1: 4}, {0: 5})) == 4 + 5
    assert standbys.standby_lag(_recovery({0, 1}, {0: 9, 1: 4}, {0: 12, 1: 4})) == 0


def test_standbys_ready_is_said_once_per_assignment_once_caught_up(
    caplog: pytest.LogCaptureFixture,
) -> None:
    recovery = _recovery({0, 1}, {0: 9, 1: 4}, {0: 5, 1: 4})
    app = SimpleNamespace(
        consumer_generation_id=3, rebalancing=False, tables=SimpleNamespace(recovery=recovery)
    )
    watch = standbys.StandbyWatch()
    with caplog.at_level("INFO", logger="skillstream.worker"):
        assert watch.check(app) is False  # 4 records behind
        recovery.standby_offsets[TP(TOPIC, 0)] = 9
        app.rebalancing = True
        assert watch.check(app) is False  # not while the group rebalances
        app.rebalancing = False
        assert watch.check(app) is True
        assert watch.check(app) is False  # once
        app.consumer_generation_id = 4
        assert watch.check(app) is True  # the next assignment's
    assert caplog.messages.count(f"{standbys.STANDBYS_READY}: 2 partition(s)") == 2
