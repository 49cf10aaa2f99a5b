"""A running worker's Kafka outages: one log line when the brokers stop answering, one when they
answer again, and the clients' per-attempt errors held back in between.

aiokafka logs every failed connect, metadata refresh, fetch and heartbeat (about 20 lines a
second with the broker down, tracebacks for some), and logs nothing at all when the broker
hangs without closing its connections. So the worker watches for itself: :class:`KafkaWatch`
probes the brokers every few seconds, and the Kafka clients' log filter
(stream/pipeline/workarounds/clientlogs.py), attached to the watch, reports the first connection
error of an outage through it and drops the clients' warnings and errors until a probe
succeeds. The worker never exits for an outage: Faust's clients reconnect by themselves, and
the batches in hand wait for their sends (see app.py).

Failure: a probe that fails marks the outage; nothing here raises into the worker.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from stream.config.settings import Settings
from stream.pipeline.workarounds.clientlogs import watch_outages
from stream.reachability import UnreachableError, check_kafka

log = logging.getLogger("skillstream.worker")

PROBE_SECONDS = 5.0


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
            self.settings.kafka.bootstrap_servers,
            reason,
        )

    def back(self) -> None:
        if self.down_since is None:
            return
        seconds = time.monotonic() - self.down_since
        self.down_since = None
        log.warning(
            "Kafka at %s answers again after %.0f s", self.settings.kafka.bootstrap_servers, seconds
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
        watch_outages(self)
        while True:
            await asyncio.sleep(self.probe_seconds)
            await self.probe()

    def attach(self, app: Any) -> None:
        """Run with the Faust app's worker (a task: started when the worker is ready)."""
        app.task(self.run)
