"""The cache feed as a service of its own, started and stopped beside the rating app by
`skillstream worker` (SKILLSTREAM_CACHE_WRITER=worker).

It runs in its own consumer group, so a Redis outage never holds the rating agents back, and
the rating app knows nothing of it: the worker's metrics read :attr:`CacheFeedService.stats`.

Failure: the feed retries Redis and Kafka by itself (stream/cache/feed.py); a feed that does
not stop within 15 s when the worker stops is logged and left. Replay: the feed commits after
Redis has a batch; a batch redone is applied idempotently (the writer keeps the newest).
"""

from __future__ import annotations

import asyncio
import logging

import mode

from stream.cache.feed import CacheFeed, FeedStats, feed_from_settings
from stream.config.settings import Settings

__all__ = ["CacheFeedService"]

# The worker's own logger: these lines are part of the worker's periodic report.
log = logging.getLogger("skillstream.worker")

REPORT_SECONDS = 10.0
STOP_SECONDS = 15.0


class CacheFeedService(mode.Service):
    """Runs :func:`feed_from_settings`'s feed while the service runs."""

    def __init__(self, settings: Settings) -> None:
        super().__init__()
        self.settings = settings
        self.feed: CacheFeed | None = None
        self._task: asyncio.Future[None] | None = None

    @property
    def stats(self) -> FeedStats | None:
        """The running feed's figures; None before it starts."""
        return None if self.feed is None else self.feed.stats

    async def on_start(self) -> None:
        feed = self.feed = feed_from_settings(self.settings)
        self._task = asyncio.ensure_future(feed.run())

    async def on_stop(self) -> None:
        if self.feed is None or self._task is None:
            return
        self.feed.stop()
        try:
            await asyncio.wait_for(self._task, STOP_SECONDS)
        except Exception:
            log.exception("cache feed did not stop cleanly")
        await self.feed.writer.redis.aclose()

    @mode.Service.timer(REPORT_SECONDS)
    async def report(self) -> None:
        stats = self.stats
        if stats is None:
            return
        log.info(
            "cache: written %d, stale %d, errors %d, lag %d rating changes (%.1f s)",
            stats.written,
            stats.stale,
            stats.errors,
            stats.lag_records,
            stats.lag_seconds(),
        )
