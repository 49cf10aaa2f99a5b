"""stream/pipeline/storeaudit.py on the local broker, for both stores: a kept store equal to its
changelog passes; a value changed behind the changelog's back, and a store claiming more than the
changelog holds, are logged as errors and counted."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import faust
import pytest
from aiokafka import AIOKafkaProducer
from faust.types import TP
from faust_tables import raw_table

from stream.config.stores import STORES
from stream.local.stack import LocalStack
from stream.pipeline.storeaudit import audit, snapshot
from stream.pipeline.workarounds import standbys, tablestore
from stream.pipeline.workarounds.standbys import StandbyMemoryStore

TOPIC = "audit-test-ratings-changelog"
LOGS = {0: [(b"p1", b"a"), (b"p2", b"b"), (b"p1", b"c")], 1: [(b"p3", b"x")]}


@pytest.fixture(params=["memory", "rocksdb"])
def table(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Any]:
    standbys.register()
    app = faust.App(
        "audit-test",
        broker="kafka://127.0.0.1:1",
        store=STORES[request.param].url,
        datadir=str(tmp_path),
        autodiscover=False,
    )
    yield raw_table(app, 2)


def _recovered() -> tuple[set[TP], list[Any]]:
    """The store's assignment and the changelog records a recovery of LOGS gives it."""
    events = []
    for partition, records in LOGS.items():
        for offset, (key, value) in enumerate(records):
            message = SimpleNamespace(
                tp=TP(TOPIC, partition), partition=partition, offset=offset, key=key, value=value
            )
            events.append(SimpleNamespace(message=message, key=key, value=value))
    return {TP(TOPIC, p) for p in LOGS}, events


async def test_kept_partitions_are_compared_with_their_changelogs(
    table: Any, caplog: pytest.LogCaptureFixture
) -> None:
    tps, events = _recovered()
    if isinstance(table.data, StandbyMemoryStore):
        await table.data.on_rebalance(tps, set(), tps)
    table.data.apply_changelog_batch(events, lambda k: k, lambda v: v)
    with LocalStack() as stack:
        producer = AIOKafkaProducer(bootstrap_servers=stack.bootstrap_servers)
        await producer.start()
        try:
            for partition, records in LOGS.items():
                for key, value in records:
                    await producer.send_and_wait(TOPIC, value, key=key, partition=partition)
        finally:
            await producer.stop()
        servers = stack.bootstrap_servers

        copies = snapshot({"ratings": table.data})
        assert [(c.partition, c.offset, dict(c.contents)) for c in copies] == [
            (0, 2, {b"p1": b"c", b"p2": b"b"}),
            (1, 0, {b"p3": b"x"}),
        ]
        with caplog.at_level(logging.INFO, logger="skillstream.worker"):
            assert await audit(servers, {}, copies) == 0
        assert "store audit: 2 kept partition(s) compared, 0 differ, 0 given up" in caplog.text

        # A value the changelog never held, and a store that says it holds offset 5 of a
        # changelog that ends at 0: both errors, both counted.
        with tablestore.as_event(tablestore.partition_event(0)):
            tablestore.write_partition(table, 0, {b"p2": b"z"})
        table.data.set_persisted_offset(TP(TOPIC, 1), 5)
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="skillstream.worker"):
            assert await audit(servers, {}, snapshot({"ratings": table.data})) == 2
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert errors == [
        "store audit: ratings[0] at changelog offset 2 differs from its changelog in 1 key(s),"
        " e.g. b'p2'",
        "store audit: the changelog of ratings[1] at changelog offset 5 ends before that offset",
    ]
