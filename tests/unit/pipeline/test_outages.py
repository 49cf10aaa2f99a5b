"""The worker's outage log: one line when Kafka stops answering, one when it is back, the
Kafka clients' warnings and errors dropped in between, everything else untouched."""

from __future__ import annotations

import logging
import sys

import pytest
from failing_servers import closed_port

from stream.config.settings import Settings
from stream.pipeline.outages import KafkaWatch, OutageFilter


def record(name: str, level: int, message: str) -> logging.LogRecord:
    return logging.LogRecord(name, level, __file__, 1, message, (), None)


REFUSED = "Unable connect to node with id 1: [Errno 111] Connection refused"


def test_the_first_connection_error_reports_the_outage_and_the_rest_are_dropped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    watch = KafkaWatch(Settings(bootstrap_servers="kafka-1:9092"))
    kept = OutageFilter(watch).filter
    caplog.set_level(logging.INFO, logger="skillstream.worker")
    assert kept(record("aiokafka.consumer.fetcher", logging.WARNING, "fetch slow")) is True
    assert kept(record("aiokafka.conn", logging.ERROR, REFUSED)) is False
    assert watch.down
    for name in ("aiokafka.cluster", "aiokafka.consumer.group_coordinator", "faust.transport"):
        assert kept(record(name, logging.ERROR, "anything at all")) is False
    # The worker's own lines and the clients' debug lines pass during the outage.
    assert kept(record("skillstream.worker", logging.ERROR, "dead-lettered")) is True
    assert kept(record("aiokafka.conn", logging.DEBUG, REFUSED)) is True
    watch.back()
    watch.back()
    assert not watch.down
    assert kept(record("aiokafka.consumer.fetcher", logging.WARNING, "fetch slow")) is True
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2
    lost = "Kafka at kafka-1:9092 (KAFKA_BOOTSTRAP_SERVERS) stopped answering (Unable connect"
    assert lines[0].startswith(lost)
    assert lines[1].startswith("Kafka at kafka-1:9092 answers again after")


def with_traceback(error: Exception) -> logging.LogRecord:
    entry = record("aiokafka.producer.sender", logging.ERROR, "send failed")
    try:
        raise error
    except Exception:
        entry.exc_info = sys.exc_info()
    return entry


def test_a_connection_error_in_a_traceback_counts_too() -> None:
    watch = KafkaWatch(Settings())
    assert OutageFilter(watch).filter(with_traceback(ValueError("a bug"))) is True
    assert not watch.down
    assert OutageFilter(watch).filter(with_traceback(ConnectionResetError("reset"))) is False
    assert watch.down


async def test_a_probe_of_a_closed_port_starts_an_outage_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    port = closed_port()
    watch = KafkaWatch(Settings(bootstrap_servers=f"127.0.0.1:{port}", connect_timeout_seconds=2))
    caplog.set_level(logging.INFO, logger="skillstream.worker")
    await watch.probe()
    await watch.probe()
    assert watch.down
    ours = [r.getMessage() for r in caplog.records if r.name == "skillstream.worker"]
    assert ours == [
        f"Kafka at 127.0.0.1:{port} (KAFKA_BOOTSTRAP_SERVERS) stopped answering (no broker "
        "accepted a connection); retrying, with the Kafka clients' errors held back until it "
        "answers"
    ]
