"""stream/pipeline/workarounds/standbys.py: the memory store knows the changelog offset its
contents hold, keeps what it holds as a standby when a recovery ends, forgets whole what it no
longer holds, and Faust's recovery starts a newly active partition at that offset. A
never-started app's tables; the fail-over itself runs on the broker in `skillstream bench
recovery` and the multi-worker end-to-end tests (tests/e2e/test_backlog.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import faust
import pytest
from faust.types import TP

from stream.config.stores import STORES
from stream.pipeline.workarounds import private, standbys, tablestore
from stream.pipeline.workarounds.standbys import StandbyMemoryStore

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
    yield app.Table(
        "ratings",
        default=None,
        key_type=bytes,
        value_type=bytes,
        schema=faust.Schema(key_serializer="raw", value_serializer="raw"),
        partitions=3,
    )


def _event(partition: int, offset: int, key: bytes, value: bytes | None) -> Any:
    message = SimpleNamespace(
        tp=TP(TOPIC, partition), partition=partition, offset=offset, key=key, value=value
    )
    return SimpleNamespace(message=message, key=key, value=value)


def _apply(table: Any, *events: Any) -> None:
    table.data.apply_changelog_batch(list(events), lambda k: k, lambda v: v)


def test_the_workers_memory_store_is_the_standby_store(table: Any) -> None:
    assert STORES["memory"].url.startswith(f"{standbys.SCHEME}://")
    assert isinstance(table.data, StandbyMemoryStore)
    assert tablestore.persists(table) is True  # it is told the offsets it holds


def test_a_changelog_batch_moves_each_partitions_offset_to_its_last_record(table: Any) -> None:
    assert table.data.persisted_offset(TP(TOPIC, 0)) is None
    _apply(table, _event(0, 4, b"a", b"1"), _event(1, 9, b"b", b"2"), _event(0, 7, b"c", b"3"))
    _apply(table, _event(0, 5, b"a", b"1"))  # read again (Faust re-reads the offset it starts at)
    assert table.data.persisted_offset(TP(TOPIC, 0)) == 7
    assert table.data.persisted_offset(TP(TOPIC, 1)) == 9
    _apply(table, _event(1, 10, b"b", None))
    assert dict(table.data.data) == {b"a": b"1", b"c": b"3"}
    assert table.data.persisted_offset(TP(TOPIC, 1)) == 10


def test_the_workers_own_writes_and_offsets_reach_the_store(table: Any) -> None:
    tablestore.write_partition(table, 2, {b"x": b"1", b"y": b"2"})
    tablestore.set_persisted(table, 2, 41)
    tablestore.write_partition(table, 2, {b"y": None})
    assert dict(table.data.data) == {b"x": b"1"}
    assert table.data.persisted_offset(TP(TOPIC, 2)) == 41


def test_a_recovery_keeps_active_and_standby_partitions_and_drops_the_rest(table: Any) -> None:
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
    _apply(table, _event(1, 12, b"standby", b"2"))
    recovery = table.app.tables.recovery
    tp = TP(TOPIC, 1)
    recovery.add_active(table, tp)
    assert recovery.active_offsets[tp] == 12


def test_the_standby_lag_counts_the_partitions_not_read_at_all_yet(table: Any) -> None:
    app = table.app
    assert private.standby_lag(app) == 0  # nothing assigned
    recovery = app.tables.recovery
    # Counters: assigned, not updated (Counter.update adds).
    recovery.standby_highwaters[TP(TOPIC, 0)] = 99
    recovery.standby_highwaters[TP(TOPIC, 1)] = 50
    recovery.standby_offsets[TP(TOPIC, 0)] = -1
    recovery.standby_offsets[TP(TOPIC, 1)] = 40
    # Faust's own standby_remaining leaves partition 0 out (nothing read yet): 10.
    assert private.standby_lag(app) == 100 + 10
    recovery.standby_offsets[TP(TOPIC, 0)] = 99
    recovery.standby_offsets[TP(TOPIC, 1)] = 50
    assert private.standby_lag(app) == 0
