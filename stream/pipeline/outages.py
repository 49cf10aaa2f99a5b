"""A running worker's Kafka outages: one log line when the brokers stop answering, one when they
answer again, and the clients' per-attempt errors held back in between.

aiokafka logs every failed connect, metadata refresh, fetch and heartbeat (about 20 lines a
second with the broker down, tracebacks for some), and logs nothing at all when the broker
hangs without closing its connections. So the worker watches for itself: :class:`KafkaWatch`
probes the brokers every few seconds, and :class:`OutageFilter`, on the log handlers, reports
the first connection error of an outage through the watch and drops the Kafka clients'
warnings and errors until a probe succeeds. The worker never exits for an outage: Faust's
clients reconnect by themselves, and the batches in hand wait for their sends (see app.py).

The two filters divide the work: :class:`OutageFilter` (here, on the handlers) drops the
clients' records for as long as the watch says Kafka is down; ``logs.RepeatFilter`` (on the
clients' loggers, installed at start) shows any one client message at most once a minute, which
covers what the watch cannot see: the time before the worker is ready (table recovery), and
repeats that are not about a lost connection.

Failure: a probe that fails marks the outage; nothing here raises into the worker.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from stream.config.settings import Settings
from stream.pipeline.reachability import KAFKA_UNREACHABLE, UnreachableError, check_kafka

log = logging.getLogger("skillstream.worker")

PROBE_SECONDS = 5.0
# Loggers of the Kafka clients whose records an outage multiplies.
CLIENT_LOGGERS = ("aiokafka", "faust.transport")
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


class KafkaWatch:
    """Whether this worker's Kafka answers; logs each change once."""

    def __init__(self, settings: Settings, probe_seconds: float = PROBE_SECONDS) -> None:
        self.settings = settings
        self.probe_seconds = probe_seconds
        self.down_since: float | None = None

    @property
    def down(self) -> bool:
        return self.down_since is not None

    def lost(self, reason: str, since: float | None = None) -> None:
        """Start an outage (``since``: when it was first seen, monotonic; default now)."""
        if self.down_since is not None:
            return
        self.down_since = time.monotonic() if since is None else since
        log.warning(
            "Kafka at %s (KAFKA_BOOTSTRAP_SERVERS) stopped answering (%s); retrying, with "
            "the Kafka clients' errors held back until it answers",
            self.settings.bootstrap_servers,
            reason,
        )

    def back(self) -> None:
        if self.down_since is None:
            return
        seconds = time.monotonic() - self.down_since
        self.down_since = None
        log.warning(
            "Kafka at %s answers again after %.0f s", self.settings.bootstrap_servers, seconds
        )

    async def probe(self) -> None:
        """One probe: metadata from the brokers within the connect timeout."""
        started = time.monotonic()
        try:
            await check_kafka(self.settings, quiet=False)
        except UnreachableError as exc:
            self.lost(exc.reason, since=started)
        else:
            self.back()

    async def run(self) -> None:
        """Filter the log handlers, then probe for as long as the worker runs."""
        install(OutageFilter(self))
        while True:
            await asyncio.sleep(self.probe_seconds)
            await self.probe()

    def attach(self, app: Any) -> None:
        """Run with the Faust app's worker (a task: started when the worker is ready)."""
        app.task(self.run)


class OutageFilter(logging.Filter):
    """Drops the Kafka clients' warnings and errors during an outage; the first record about a
    lost connection starts the outage (so it is reported before the next probe)."""

    def __init__(self, watch: KafkaWatch) -> None:
        super().__init__()
        self.watch = watch

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING or not record.name.startswith(CLIENT_LOGGERS):
            return True
        if self.watch.down:
            return False
        failure = record.exc_info[1] if record.exc_info else None
        text = record.getMessage()
        if isinstance(failure, KAFKA_UNREACHABLE) or any(w in text for w in CONNECTION_WORDS):
            self.watch.lost(record.getMessage())
            return False
        return True


def install(outage_filter: OutageFilter) -> None:
    """Put the filter on every handler of the root logger (where Faust's and the JSON logging
    send records): a filter on a logger would miss its children's records."""
    for handler in logging.getLogger().handlers:
        if outage_filter not in handler.filters:
            handler.addFilter(outage_filter)
