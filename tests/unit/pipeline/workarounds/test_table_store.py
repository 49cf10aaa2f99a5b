"""stream/pipeline/workarounds/tablestore.py: the parts of Faust's tables and of aiokafka's
producer it reaches still exist with the meaning it gives them. A never-started app's tables
(memory store); the RocksDB store's persisted offset and the record-batch send are exercised on
the broker by the worker's restart tests."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import faust
import pytest
from aiokafka import AIOKafkaProducer
from faust.stores.rocksdb import Store as RocksDBStore

from stream.pipeline.workarounds import tablestore


@pytest.fixture
def table() -> Iterator[Any]:
    app = faust.App("table-store-test", broker="kafka://127.0.0.1:1", autodiscover=False)
    yield app.Table("ratings", default=None, partitions=2)


def test_the_store_is_the_tables_data_and_writing_it_sends_nothing(table: Any) -> None:
    store = tablestore.store_of(table)
    store[b"k"] = b"v"
    assert table.data is store
    assert dict(store.items()) == {b"k": b"v"}
    assert tablestore.persists(table) is False  # memory: recovered from the changelog


def test_the_changelog_topic_is_named_after_the_app_and_table(table: Any) -> None:
    assert tablestore.changelog_topic(table) == "table-store-test-ratings-changelog"


def test_a_persistent_store_still_takes_the_changelog_offset_it_holds() -> None:
    assert callable(getattr(RocksDBStore, "set_persisted_offset", None)), (
        "Faust's RocksDB store no longer has set_persisted_offset: revisit tablestore.py"
    )


def test_aiokafka_still_sends_whole_record_batches() -> None:
    for name in ("create_batch", "send_batch"):
        assert callable(getattr(AIOKafkaProducer, name, None)), (
            f"aiokafka's producer no longer has {name}: revisit tablestore.py"
        )
