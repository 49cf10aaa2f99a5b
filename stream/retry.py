"""Retrying a failure until it works: one backoff policy and one outage log for every loop.

The rating agents' batches and sends (stream/pipeline/) and the cache feed's Kafka and Redis
loops (stream/cache/) retry the same way: after a failure they wait :class:`Backoff` (0.1 s,
doubling to 5 s, back to 0.1 s after a success) and try again; :class:`Outage` logs one warning
when the failures start and one when they end, never one per attempt. Nothing here raises or
retries by itself: the caller's loop does, with these two.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

log = logging.getLogger("skillstream.worker")

FIRST_DELAY_SECONDS = 0.1
MAX_DELAY_SECONDS = 5.0


class Backoff:
    """The delay before the next attempt: ``first`` doubling up to ``cap``; :meth:`reset`
    after a success."""

    def __init__(self, first: float = FIRST_DELAY_SECONDS, cap: float = MAX_DELAY_SECONDS) -> None:
        self.first = first
        self.cap = cap
        self.delay = first

    def next(self) -> float:
        """The delay to wait now; the one after it doubles."""
        delay = self.delay
        self.delay = min(delay * 2, self.cap)
        return delay

    def reset(self) -> None:
        self.delay = self.first

    async def wait(self, stop: asyncio.Event | None = None) -> None:
        """Sleep the next delay, or less if ``stop`` is set meanwhile."""
        delay = self.next()
        if stop is None:
            await asyncio.sleep(delay)
            return
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(stop.wait(), delay)


class Outage:
    """One warning when attempts start failing, one when they work again; never one per try.

    ``what`` names the failing thing in both lines; ``start`` and ``end`` replace the lines'
    wording (``{what}``, ``{error}``; ``{seconds}``, ``{failures}``) where a documented line
    must stay word for word.
    """

    def __init__(
        self,
        what: str,
        logger: logging.Logger = log,
        *,
        start: str = "{what}: {error}; retrying with backoff until it works",
        end: str = "{what}: working again after {seconds:.1f} s ({failures} failed attempts)",
    ) -> None:
        self.what = what
        self.log = logger
        self.start = start
        self.end = end
        self.since: float | None = None
        self.failures = 0

    def failed(self, error: object, exc: BaseException | None = None) -> None:
        """Count a failure; the first of an outage is logged (with ``exc``'s traceback)."""
        self.failures += 1
        if self.since is None:
            self.since = time.monotonic()
            self.log.warning(self.start.format(what=self.what, error=error), exc_info=exc)

    def recovered(self) -> None:
        if self.since is not None:
            seconds = time.monotonic() - self.since
            self.log.warning(
                self.end.format(what=self.what, seconds=seconds, failures=self.failures)
            )
            self.since = None
            self.failures = 0
