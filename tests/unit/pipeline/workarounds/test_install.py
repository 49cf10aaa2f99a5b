"""``workarounds.install``: every patch in place once however often it runs, with the values of
the latest settings."""

from __future__ import annotations

import logging
from typing import Any

from faust.tables.recovery import Recovery
from faust.transport.consumer import Consumer
from faust.transport.drivers import aiokafka as aiokafka_driver

from stream.config.settings import KafkaSettings, Settings
from stream.pipeline import workarounds
from stream.pipeline.workarounds.clientlogs import KAFKA_CLIENT_LOGGERS, KafkaClientFilter


def layers(method: Any) -> int:
    """How many wrappers a patched method has."""
    n = 0
    while hasattr(method, "__wrapped__"):
        method, n = method.__wrapped__, n + 1
    return n


def test_installing_twice_patches_once_and_keeps_the_latest_values() -> None:
    thread: Any = aiokafka_driver.AIOKafkaConsumerThread
    recovery: Any = Recovery
    # Every worker reads its changelogs' real ends: no setting turns the scan off.
    workarounds.install(Settings(kafka=KafkaSettings("kafka-a:9092")))
    workarounds.install(Settings(kafka=KafkaSettings("kafka-b:9092", fetch_max_wait_seconds=0.05)))
    assert layers(thread._create_worker_consumer) == 1
    assert layers(thread.seek_to_committed) == 1
    assert layers(thread.getmany) == layers(aiokafka_driver.Consumer.getmany) == 1
    assert layers(thread._fetch_records) == 1
    assert layers(recovery._build_highwaters) == 1
    assert layers(Consumer._new_offset) == layers(Consumer._add_gap) == 1
    assert layers(Consumer._filter_committable_offsets) == layers(Consumer._commit_offsets) == 1
    assert thread.skillstream_fetch_max_wait_ms == 50
    assert recovery.skillstream_end_scan[0] == "kafka-b:9092"
    for name in KAFKA_CLIENT_LOGGERS:
        filters = logging.getLogger(name).filters
        assert sum(isinstance(f, KafkaClientFilter) for f in filters) == 1
