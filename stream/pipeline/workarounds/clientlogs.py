"""One filter for the Kafka clients' log records: held back during an outage, and at most one
of any client message per window otherwise.

What: aiokafka logs every failed connect, metadata refresh, fetch and heartbeat (about 20 lines
a second with the broker down, tracebacks for some), and logs nothing at all when a broker
hangs without closing its connections; Faust's transport adds its own repeats.

Why: during an outage the services log their own line when it starts and when it ends
(stream/pipeline/kafkawatch.py, ``KafkaWatch``), and the clients' per-attempt errors buried them.
:class:`KafkaClientFilter` does both jobs:
- with a watch attached (the worker's and the cache writer's ``KafkaWatch``), a client warning
  or error about a lost connection starts the outage through the watch (so it is reported
  before the next probe), and every client warning or error is dropped until the watch says
  Kafka answers again;
- otherwise (before the worker is ready, during table recovery, and for repeats that are not
  about a lost connection) one record per logger and message template of the loggers that
  repeat (:data:`KAFKA_CLIENT_LOGGERS`) passes per window; the next one that passes says how
  many were held back. Tracebacks always pass.

Where: :func:`quiet_kafka_client_repeats` puts one filter on the clients' loggers at start; the
watch puts the same filter on the root logger's handlers too (where Faust's and the JSON
logging send records), because a filter on a logger misses its children's records. A record
the filter passed once is not judged again on its way to the handlers.

Upstream: none found (searched 2026-11-25); aiokafka logs per attempt by design.

Written for faust-streaming 0.15.3, aiokafka 0.14.0, mode-streaming 0.7.1: the logger names and
the connection words below are theirs. tests/unit/pipeline/workarounds/test_client_logs.py.

Failure: nothing here raises into the caller; a record the filter cannot judge passes.
"""

from __future__ import annotations

import logging
import time
from typing import Protocol

from stream.reachability import KAFKA_UNREACHABLE

__all__ = [
    "CLIENT_LOGGERS",
    "KAFKA_CLIENT_LOGGERS",
    "KafkaClientFilter",
    "OutageWatch",
    "quiet_kafka_client_repeats",
    "watch_outages",
]

# Loggers (and their children) of the Kafka clients whose records an outage multiplies.
CLIENT_LOGGERS = ("aiokafka", "faust.transport")
# The client's loggers that repeat one line per attempt while a broker is unreachable: the
# filter sits on these from the start.
KAFKA_CLIENT_LOGGERS = (
    "aiokafka",
    "aiokafka.conn",
    "aiokafka.consumer.fetcher",
    "aiokafka.consumer.group_coordinator",
    "aiokafka.producer.sender",
)
REPEAT_WINDOW_SECONDS = 60.0
# What the clients' records about a lost connection say (aiokafka 0.14, faust-streaming 0.15).
CONNECTION_WORDS = (
    "Unable connect",
    "Unable to update metadata",
    "Unable to request metadata",
    "KafkaConnectionError",
    "NodeNotReadyError",
    "RequestTimedOutError",
    "KafkaTimeoutError",
    "Connection at",
    "coordinator dead",
    "Coordinator Request failed",
    "Heartbeat send request failed",
)
# Marks a record this filter passed, so it is not judged twice (logger, then handler).
_PASSED = "skillstream_client_log_passed"


class OutageWatch(Protocol):
    """What the filter needs of a watch: whether Kafka is down, and a way to say it is."""

    @property
    def down(self) -> bool: ...

    def lost(self, reason: str, since: float | None = None) -> None: ...


class KafkaClientFilter(logging.Filter):
    """Holds the Kafka clients' records back during an outage the watch reports, and lets one
    record per logger and message template through per window otherwise."""

    def __init__(
        self, window: float = REPEAT_WINDOW_SECONDS, watch: OutageWatch | None = None
    ) -> None:
        super().__init__()
        self.window = window
        self.watch = watch
        self._last: dict[tuple[str, str], float] = {}
        self._held: dict[tuple[str, str], int] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        if record.__dict__.get(_PASSED) is self:
            return True
        if not record.name.startswith(CLIENT_LOGGERS):
            return True
        if self._outage_holds(record) or self._repeat_holds(record):
            return False
        record.__dict__[_PASSED] = self
        return True

    def _outage_holds(self, record: logging.LogRecord) -> bool:
        watch = self.watch
        if watch is None or record.levelno < logging.WARNING:
            return False
        if watch.down:
            return True
        failure = record.exc_info[1] if record.exc_info else None
        text = record.getMessage()
        if isinstance(failure, KAFKA_UNREACHABLE) or any(w in text for w in CONNECTION_WORDS):
            watch.lost(text)
            return True
        return False

    def _repeat_holds(self, record: logging.LogRecord) -> bool:
        # Only the loggers known to repeat: Faust's transport logs lines worth seeing each time.
        if record.exc_info or record.name not in KAFKA_CLIENT_LOGGERS:
            return False
        key = (record.name, str(record.msg))
        now = time.monotonic()
        if now - self._last.get(key, -self.window) < self.window:
            self._held[key] = self._held.get(key, 0) + 1
            return True
        self._last[key] = now
        held = self._held.pop(key, 0)
        if held:
            record.msg = f"{record.msg} ({held} like it in the last {self.window:g} s not shown)"
        return False


def quiet_kafka_client_repeats() -> KafkaClientFilter:
    """Put the process's one :class:`KafkaClientFilter` on the Kafka client's loggers (created
    on the first call, found on the first logger after it) and return it."""
    first = logging.getLogger(KAFKA_CLIENT_LOGGERS[0])
    found = [f for f in first.filters if isinstance(f, KafkaClientFilter)]
    client_filter = found[0] if found else KafkaClientFilter()
    for name in KAFKA_CLIENT_LOGGERS:
        logger = logging.getLogger(name)
        if client_filter not in logger.filters:
            logger.addFilter(client_filter)
    return client_filter


def watch_outages(watch: OutageWatch) -> KafkaClientFilter:
    """Attach ``watch`` to the process's filter and put it on every handler of the root logger
    too, so the children of the clients' loggers are held back during an outage as well."""
    client_filter = quiet_kafka_client_repeats()
    client_filter.watch = watch
    for handler in logging.getLogger().handlers:
        if client_filter not in handler.filters:
            handler.addFilter(client_filter)
    return client_filter
