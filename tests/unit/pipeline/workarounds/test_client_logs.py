"""stream/pipeline/workarounds/clientlogs.py: the Kafka clients' records held back during an
outage the watch reports (the first one about a lost connection starts it), and otherwise one
per logger and message per window, the next one saying how many were held back; tracebacks
always pass."""

from __future__ import annotations

import logging
import sys
import time

import pytest

from stream.config.settings import KafkaSettings, Settings
from stream.pipeline.kafkawatch import KafkaWatch
from stream.pipeline.workarounds.clientlogs import (
    KAFKA_CLIENT_LOGGERS,
    KafkaClientFilter,
    quiet_kafka_client_repeats,
    watch_outages,
)


def record(msg: str, *args: object, name: str = "aiokafka", exc: bool = False) -> logging.LogRecord:
    exc_info = (ValueError, ValueError("x"), None) if exc else None
    return logging.LogRecord(name, logging.ERROR, "client.py", 1, msg, args, exc_info)


def test_repeats_are_held_back_within_the_window_and_counted_after_it() -> None:
    held = KafkaClientFilter(window=0.05)
    connect = 'Unable connect to "%s:%s": %s'
    assert held.filter(record(connect, "h", 1, "refused"))
    # Other arguments, same template: a repeat.
    assert not held.filter(record(connect, "h", 1, "refused again"))
    assert not held.filter(record(connect, "h", 2, "refused"))
    # Another template or another logger is not.
    assert held.filter(record("Unable to update metadata from %s", [1]))
    assert held.filter(record(connect, "h", 1, "x", name="aiokafka.conn"))
    # A traceback always passes.
    assert held.filter(record(connect, "h", 1, "refused", exc=True))

    time.sleep(0.06)
    later = record(connect, "h", 1, "refused")
    assert held.filter(later)
    assert later.getMessage().endswith("(2 like it in the last 0.05 s not shown)")


def test_installing_twice_adds_one_filter_per_logger() -> None:
    quiet_kafka_client_repeats()
    quiet_kafka_client_repeats()
    for name in KAFKA_CLIENT_LOGGERS:
        filters = logging.getLogger(name).filters
        assert sum(isinstance(f, KafkaClientFilter) for f in filters) == 1


def entry(name: str, level: int, message: str) -> logging.LogRecord:
    return logging.LogRecord(name, level, __file__, 1, message, (), None)


REFUSED = "Unable connect to node with id 1: [Errno 111] Connection refused"


def test_the_first_connection_error_reports_the_outage_and_the_rest_are_dropped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    watch = KafkaWatch(Settings(kafka=KafkaSettings("kafka-1:9092")))
    # No repeat window: this test is about the outage part alone.
    kept = KafkaClientFilter(window=0, watch=watch).filter
    caplog.set_level(logging.INFO, logger="skillstream.worker")
    assert kept(entry("aiokafka.consumer.fetcher", logging.WARNING, "fetch slow")) is True
    assert kept(entry("aiokafka.conn", logging.ERROR, REFUSED)) is False
    assert watch.down
    for name in ("aiokafka.cluster", "aiokafka.consumer.group_coordinator", "faust.transport"):
        assert kept(entry(name, logging.ERROR, "anything at all")) is False
    # The worker's own lines and the clients' debug lines pass during the outage.
    assert kept(entry("skillstream.worker", logging.ERROR, "dead-lettered")) is True
    assert kept(entry("aiokafka.conn", logging.DEBUG, REFUSED)) is True
    watch.back()
    watch.back()
    assert not watch.down
    assert kept(entry("aiokafka.consumer.fetcher", logging.WARNING, "fetch slow")) is True
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2
    lost = "Kafka at kafka-1:9092 (KAFKA_BOOTSTRAP_SERVERS) stopped answering (Unable connect"
    assert lines[0].startswith(lost)
    assert lines[1].startswith("Kafka at kafka-1:9092 answers again after")


def with_traceback(error: Exception) -> logging.LogRecord:
    failed = entry("aiokafka.producer.sender", logging.ERROR, "send failed")
    try:
        raise error
    except Exception:
        failed.exc_info = sys.exc_info()
    return failed


def test_a_connection_error_in_a_traceback_counts_too() -> None:
    watch = KafkaWatch(Settings())
    assert KafkaClientFilter(watch=watch).filter(with_traceback(ValueError("a bug"))) is True
    assert not watch.down
    assert (
        KafkaClientFilter(watch=watch).filter(with_traceback(ConnectionResetError("reset")))
        is False
    )
    assert watch.down


def test_a_record_passed_on_its_logger_is_not_judged_again_on_the_handler() -> None:
    client_filter = KafkaClientFilter()
    first = record("Heartbeat failed: %s", "x")
    # The same record seen twice (on its logger, then on a root handler) passes both times...
    assert client_filter.filter(first) and client_filter.filter(first)
    # ...and still counts once: the next record like it is the repeat.
    assert not client_filter.filter(record("Heartbeat failed: %s", "y"))


def test_the_watch_uses_the_one_filter_of_the_process() -> None:
    handler = logging.NullHandler()
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        watch = KafkaWatch(Settings())
        attached = watch_outages(watch)
        assert attached is quiet_kafka_client_repeats()
        assert attached.watch is watch and attached in handler.filters
    finally:
        root.removeHandler(handler)
        attached.watch = None


def test_outside_an_outage_only_the_loggers_known_to_repeat_are_held_back() -> None:
    client_filter = KafkaClientFilter()
    for name in ("faust.transport.consumer", "aiokafka.consumer.consumer"):
        assert client_filter.filter(record("Waiting for %s", "x", name=name))
        assert client_filter.filter(record("Waiting for %s", "x", name=name))
