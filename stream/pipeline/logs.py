"""Structured logs: one JSON object per line (SKILLSTREAM_LOG_FORMAT=json), for log shippers.

Fields: ``ts`` (ISO-8601 UTC), ``level``, ``logger``, ``message``, and, when the call passes
them in ``extra``, the ids that let an operator follow one event: ``match_id``, ``player_id``,
``topic``, ``partition``, ``offset``, ``reason``. Exceptions go to ``exc`` as text. Secrets are
never passed to log calls (settings are logged redacted).
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

import orjson

CONTEXT_FIELDS = ("match_id", "player_id", "topic", "partition", "offset", "reason")


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
