"""Structured logs: one JSON object per line (SKILLSTREAM_LOG_FORMAT=json), for log shippers.

Fields: ``ts`` (ISO-8601 UTC), ``level``, ``logger``, ``message``, and, when the call passes
them in ``extra``, the ids that let an operator follow one event: ``match_id``, ``player_id``,
``topic``, ``partition``, ``offset``, ``reason``. Exceptions go to ``exc`` as text. Secrets are
never passed to log calls (settings are logged redacted).
"""

from __future__ import annotations

import logging
import time
from datetime import UTC, datetime
from typing import Any

import orjson

CONTEXT_FIELDS = ("match_id", "player_id", "topic", "partition", "offset", "reason")

# The Kafka client's loggers that repeat one line per attempt while a broker is unreachable.
KAFKA_CLIENT_LOGGERS = (
    "aiokafka",
    "aiokafka.conn",
    "aiokafka.consumer.fetcher",
    "aiokafka.consumer.group_coordinator",
    "aiokafka.producer.sender",
)
REPEAT_WINDOW_SECONDS = 60.0


class RepeatFilter(logging.Filter):
    """Lets one record per logger and message template through per window; the next one that
    passes says how many were held back. Tracebacks always pass.

    During an outage the worker's ``outages.OutageFilter`` drops the clients' records outright;
    this filter is what holds them back before the worker is ready and outside outages."""

    def __init__(self, window: float = REPEAT_WINDOW_SECONDS) -> None:
        super().__init__()
        self.window = window
        self._last: dict[tuple[str, str], float] = {}
        self._held: dict[tuple[str, str], int] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info:
            return True
        key = (record.name, str(record.msg))
        now = time.monotonic()
        if now - self._last.get(key, -self.window) < self.window:
            self._held[key] = self._held.get(key, 0) + 1
            return False
        self._last[key] = now
        held = self._held.pop(key, 0)
        if held:
            record.msg = f"{record.msg} ({held} like it in the last {self.window:g} s not shown)"
        return True


def quiet_kafka_client_repeats() -> None:
    """Install :class:`RepeatFilter` on the Kafka client's loggers (once per process): during
    an outage the services log their own line when it starts and when it ends, and the
    client's per-attempt errors would bury them."""
    for name in KAFKA_CLIENT_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, RepeatFilter) for f in logger.filters):
            logger.addFilter(RepeatFilter())


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name in CONTEXT_FIELDS:
            value = record.__dict__.get(name)
            if value is not None:
                entry[name] = value
        if record.exc_info:
            entry["exc"] = self.formatException(record.exc_info)
        return orjson.dumps(entry, default=str).decode()


def logging_config(level: str, log_format: str) -> dict[str, Any] | None:
    """A ``logging.config.dictConfig`` for the worker; None keeps Faust's own (text) format."""
    if log_format != "json":
        return None
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": JsonFormatter}},
        "handlers": {
            "default": {
                "class": "logging.StreamHandler",
                "formatter": "json",
                "stream": "ext://sys.stdout",
            }
        },
        "root": {"level": level.upper(), "handlers": ["default"]},
    }
