"""The Faust adapter at a seek to the commits (stream/pipeline/app.py ``_sought``): once the
assignment's tables are recovered, each input starts where its tables' checkpoints say, said
in one line and counted; an input whose records to read again are gone is refused (paused,
never processed or committed, the worker not ready); before recovery, the commits stand.

On a worker's app never started (its tables' stores written directly, Faust's recovery state
set as its recovery leaves it); the seek itself: workarounds/test_committed_patch.py, the
real broker: tests/integration/pipeline/test_changelog_lost.py."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from aiokafka import TopicPartition
from faust.types import TP

from stream.config.settings import CacheSettings, Settings
from stream.pipeline.app import Pipeline, build_worker
from stream.pipeline.health import readiness
from stream.protocol.checkpoints import checkpoint_key, encode_checkpoint

PC = "restart-player-commands"


@pytest.fixture
def pipeline() -> Pipeline:
    return build_worker(Settings(app_id="restart", cache=CacheSettings(writer="off"), partitions=2))


def recovered(pipeline: Pipeline, ends: dict[str, int]) -> None:
    """The recovery read each table's changelog partition 0 up to ``ends`` (its highwater: the
    last offset; -1: empty), and the rebalance is complete."""
    highwaters: Any = pipeline.app.tables.recovery.active_highwaters  # type: ignore[attr-defined]
    for table, last in ends.items():
        highwaters[TP(pipeline.settings.changelog_topic(table), 0)] = last
    pipeline.recovered()


def test_an_input_starts_at_its_tables_oldest_checkpoint_said_and_counted(
    pipeline: Pipeline, caplog: pytest.LogCaptureFixture
) -> None:
    pipeline.rating_table.data[checkpoint_key(0)] = encode_checkpoint({PC: 40})
    pipeline.pending_table.data[checkpoint_key(0)] = encode_checkpoint({PC: 52})
    recovered(pipeline, {"ratings": 9, "pending": 9})
    tp = TopicPartition(PC, 0)
    with caplog.at_level(logging.WARNING, logger="skillstream.worker"):
        lowered = pipeline._sought({tp: 52}, {tp: 0})
    assert lowered == {tp: 40}
    assert pipeline.positions.position(PC, 0) == 40
    lines = [r.getMessage() for r in caplog.records if r.name == "skillstream.worker"]
    assert lines == [
        "restored behind the committed offsets: table ratings[0] holds "
        f"{PC}[0] up to offset 40, committed at 52; reading {PC}[0] again from 40"
    ]
    assert pipeline.metrics.totals()["tables_restored_behind{ratings}"] == 1


def test_an_input_whose_records_to_read_again_are_gone_is_refused(pipeline: Pipeline) -> None:
    pipeline.rating_table.data[checkpoint_key(0)] = encode_checkpoint({PC: 40})
    pipeline.pending_table.data[checkpoint_key(0)] = encode_checkpoint({PC: 52})
    recovered(pipeline, {"ratings": 9, "pending": 9})
    paused: list[Any] = []
    pipeline.app.consumer.pause_partitions = paused.extend  # type: ignore[method-assign,assignment]
    tp = TopicPartition(PC, 0)
    assert pipeline._sought({tp: 52}, {tp: 45}) == {}  # the log starts at 45 now
    assert paused == [TP(PC, 0)]
    assert pipeline.refused == {(PC, 0)}
    # Never processed, never committed: no position, no checkpoint taken as read.
    assert pipeline.positions.position(PC, 0) is None
    state = readiness(pipeline.app, pipeline.refused)
    assert state["ready"] is False and state["refused_partitions"] == [f"{PC}[0]"]
    # The partition gone to another worker: no longer this one's to refuse.
    pipeline.forget_partitions([0])
    assert pipeline.refused == set()


def test_before_the_tables_are_recovered_the_commits_stand(pipeline: Pipeline) -> None:
    pipeline.rating_table.data[checkpoint_key(0)] = encode_checkpoint({PC: 40})
    tp = TopicPartition(PC, 0)
    assert pipeline._sought({tp: 52}, {tp: 0}) == {}
    assert pipeline.positions.position(PC, 0) == 52
