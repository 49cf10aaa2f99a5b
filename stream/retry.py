"""Logging a failure that is retried until it works: one warning when it starts, one when it
ends, never one per attempt.

Shared by the rating agents' sends and batches (stream/pipeline/) and the cache feed
(stream/cache/). It only logs: the caller retries, and nothing here raises.
"""

from __future__ import annotations

import logging
import time

log = logging.getLogger("skillstream.worker")


class Outage:
    """One warning when sends start failing, one when they work again; never one per try."""

    def __init__(self, what: str, logger: logging.Logger = log) -> None:
        self.what = what
        self.log = logger
        self.since: float | None = None
        self.failures = 0

    def failed(self, error: object, exc: BaseException | None = None) -> None:
        """Count a failure; the first of an outage is logged (with ``exc``'s traceback)."""
        self.failures += 1
        if self.since is None:
            self.since = time.monotonic()
            self.log.warning(
                "%s: %s; retrying with backoff until it works", self.what, error, exc_info=exc
            )

    def recovered(self) -> None:
        if self.since is not None:
            self.log.warning(
                "%s: working again after %.1f s (%d failed attempts)",
                self.what,
                time.monotonic() - self.since,
                self.failures,
            )
            self.since = None
            self.failures = 0
