"""The Kafka client's per-attempt errors during an outage: one per logger and message per
window, the next one saying how many were held back; tracebacks always pass."""

from __future__ import annotations

import logging
import time

from stream.pipeline.logs import KAFKA_CLIENT_LOGGERS, RepeatFilter, quiet_kafka_client_repeats


def record(msg: str, *args: object, name: str = "aiokafka", exc: bool = False) -> logging.LogRecord:
    exc_info = (ValueError, ValueError("x"), None) if exc else None
    return logging.LogRecord(name, logging.ERROR, "client.py", 1, msg, args, exc_info)


def test_repeats_are_held_back_within_the_window_and_counted_after_it() -> None:
    held = RepeatFilter(window=0.05)
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
        assert sum(isinstance(f, RepeatFilter) for f in filters) == 1
