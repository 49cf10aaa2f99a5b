"""The rating cache as matchmakers read it: async (:class:`RatingCache`) and sync
(:class:`SyncRatingCache`), answering identically because both run the same plans
(queries.py) and differ only in how they send a pipeline.

Every method costs one round trip, whatever the number of players involved. Players the cache
does not know read as the mode's defaults, marked ``unknown``.

Failure: redis exceptions (ConnectionError, TimeoutError, ResponseError, ...) propagate; every
method only reads, so the caller may simply retry. CacheFormatError for a hash this code
cannot read (another schema). UnknownModeError, before anything is sent, when a method that
needs the mode's algorithm or defaults (get_many and the probabilities) gets a mode the modes
configuration rejects; ValueError for other bad arguments, also before anything is sent.

Connection options such as AUTH and TLS come with the URL given to ``from_url``:
``rediss://user:password@host:6380/0``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TypeVar

from redis import Redis
from redis.asyncio import Redis as AsyncRedis

from stream.cache.entry import CachedRating
from stream.cache.history import HistoryEntry
from stream.cache.keys import DEFAULT_LAYOUT, Board, KeyLayout
from stream.cache.queries import LeaderboardEntry, Plan, RatingQueries, Seasons
from stream.config.modes import Modes

__all__ = ["RatingCache", "SyncRatingCache"]

T = TypeVar("T")


class RatingCache:
    """Async reads for matchmakers (redis.asyncio). See the module docstring for failures."""

    def __init__(self, redis: AsyncRedis, modes: Modes, layout: KeyLayout = DEFAULT_LAYOUT) -> None:
        self.redis = redis
        self.queries = RatingQueries(modes, layout)

    @classmethod
    def from_url(cls, url: str, modes: Modes, prefix: str = DEFAULT_LAYOUT.prefix) -> RatingCache:
        """A cache on its own connection pool; close it with :meth:`aclose`."""
        return cls(AsyncRedis.from_url(url), modes, KeyLayout(prefix))

    async def aclose(self) -> None:
        """Close the Redis client (also one passed to the constructor)."""
        await self.redis.aclose()

    async def get_many(self, mode: str, player_ids: Iterable[str]) -> dict[str, CachedRating]:
        """Each distinct player's cached rating, in the order given; unknown players get the
        mode's defaults with ``unknown=True``, version 0 and 0 games."""
        return await self._run(self.queries.get_many(mode, player_ids))

    async def window(
        self, mode: str, rating: float, width: float, limit: int = 100
    ) -> list[tuple[str, float]]:
        """Up to ``limit`` players rated within ``rating`` ± ``width`` (inclusive), nearest to
        ``rating`` first (ties: lower rating, then player id). Widen ``width`` as a player's
        wait grows."""
        return await self._run(self.queries.window(mode, rating, width, limit))

    async def win_probability(self, mode: str, a: str, b: str) -> float:
        """Probability that player ``a`` beats ``b`` (a draw counted as half), from their
        cached ratings as of their last match."""
        return await self._run(self.queries.win_probability(mode, a, b))

    async def team_win_probability(
        self, mode: str, team_a: Sequence[str], team_b: Sequence[str]
    ) -> float:
        """Probability that ``team_a`` beats ``team_b``, each team as its composite player."""
        return await self._run(self.queries.team_win_probability(mode, team_a, team_b))

    async def match_quality(self, mode: str, team_a: Sequence[str], team_b: Sequence[str]) -> float:
        """A figure in (0, 1] to sort candidate matches by; higher is more even."""
        return await self._run(self.queries.match_quality(mode, team_a, team_b))

    async def top(
        self,
        mode: str,
        n: int,
        board: Board | str = Board.RANK_POINTS,
        season: int | None = None,
    ) -> list[LeaderboardEntry]:
        """The ``n`` highest entries of ``board`` ("rank_points", "conservative" or
        "rating"), rank 1 first: the current season's (``season`` None), or ``season``'s,
        its final standings once it is over (empty if they are no longer kept)."""
        return await self._run(self.queries.top(mode, n, board, season))

    async def around(
        self,
        mode: str,
        player_id: str,
        n: int,
        board: Board | str = Board.RANK_POINTS,
        season: int | None = None,
    ) -> list[LeaderboardEntry]:
        """The player's entry with up to ``n`` entries above and ``n`` below, highest first;
        an empty list if the player is not on the board (``season`` as in :meth:`top`)."""
        return await self._run(self.queries.around(mode, player_id, n, board, season))

    async def seasons(self, mode: str) -> Seasons:
        """The season being played in ``mode`` and the past ones whose standings are kept."""
        return await self._run(self.queries.seasons(mode))

    async def history(self, mode: str, player_id: str, n: int = 20) -> list[HistoryEntry]:
        """The player's last ``n`` rating changes in ``mode`` (at most as many as the writer
        keeps), newest first; empty for a player the cache does not know."""
        return await self._run(self.queries.history(mode, player_id, n))

    async def explanation(
        self, mode: str, player_id: str, match_id: str | None = None
    ) -> HistoryEntry | None:
        """The player's cached change by ``match_id`` (None: the latest), None when the cache
        does not keep it; ``stream.cache.history.worded(entry, player_id)`` words it for a
        support agent."""
        return await self._run(self.queries.explanation(mode, player_id, match_id))

    async def _run(self, plan: Plan[T]) -> T:
        if not plan.commands:
            return plan.decode([])
        async with self.redis.pipeline(transaction=False) as pipe:
            for command in plan.commands:
                pipe.execute_command(*command)
            replies = await pipe.execute()
        return plan.decode(replies)


class SyncRatingCache:
    """Blocking reads for matchmakers (redis.Redis); same methods and answers as RatingCache."""

    def __init__(self, redis: Redis, modes: Modes, layout: KeyLayout = DEFAULT_LAYOUT) -> None:
        self.redis = redis
        self.queries = RatingQueries(modes, layout)

    @classmethod
    def from_url(
        cls, url: str, modes: Modes, prefix: str = DEFAULT_LAYOUT.prefix
    ) -> SyncRatingCache:
        """A cache on its own connection pool; close it with :meth:`close`."""
        return cls(Redis.from_url(url), modes, KeyLayout(prefix))

    def close(self) -> None:
        """Close the Redis client (also one passed to the constructor)."""
        self.redis.close()

    def get_many(self, mode: str, player_ids: Iterable[str]) -> dict[str, CachedRating]:
        """See :meth:`RatingCache.get_many`."""
        return self._run(self.queries.get_many(mode, player_ids))

    def window(
        self, mode: str, rating: float, width: float, limit: int = 100
    ) -> list[tuple[str, float]]:
        """See :meth:`RatingCache.window`."""
        return self._run(self.queries.window(mode, rating, width, limit))

    def win_probability(self, mode: str, a: str, b: str) -> float:
        """See :meth:`RatingCache.win_probability`."""
        return self._run(self.queries.win_probability(mode, a, b))

    def team_win_probability(
        self, mode: str, team_a: Sequence[str], team_b: Sequence[str]
    ) -> float:
        """See :meth:`RatingCache.team_win_probability`."""
        return self._run(self.queries.team_win_probability(mode, team_a, team_b))

    def match_quality(self, mode: str, team_a: Sequence[str], team_b: Sequence[str]) -> float:
        """See :meth:`RatingCache.match_quality`."""
        return self._run(self.queries.match_quality(mode, team_a, team_b))

    def top(
        self,
        mode: str,
        n: int,
        board: Board | str = Board.RANK_POINTS,
        season: int | None = None,
    ) -> list[LeaderboardEntry]:
        """See :meth:`RatingCache.top`."""
        return self._run(self.queries.top(mode, n, board, season))

    def around(
        self,
        mode: str,
        player_id: str,
        n: int,
        board: Board | str = Board.RANK_POINTS,
        season: int | None = None,
    ) -> list[LeaderboardEntry]:
        """See :meth:`RatingCache.around`."""
        return self._run(self.queries.around(mode, player_id, n, board, season))

    def seasons(self, mode: str) -> Seasons:
        """See :meth:`RatingCache.seasons`."""
        return self._run(self.queries.seasons(mode))

    def history(self, mode: str, player_id: str, n: int = 20) -> list[HistoryEntry]:
        """See :meth:`RatingCache.history`."""
        return self._run(self.queries.history(mode, player_id, n))

    def explanation(
        self, mode: str, player_id: str, match_id: str | None = None
    ) -> HistoryEntry | None:
        """See :meth:`RatingCache.explanation`."""
        return self._run(self.queries.explanation(mode, player_id, match_id))

    def holds(self, mode: str) -> bool:
        """Whether the cache holds anything of ``mode``: its clock, which every write of the
        mode sets (one EXISTS)."""
        return bool(self.redis.exists(self.queries.layout.clock(mode)))

    def holds_player(self, mode: str, player_id: str) -> bool:
        """Whether the cache holds a rating of ``player_id`` in ``mode`` (one EXISTS)."""
        return bool(self.redis.exists(self.queries.layout.player(mode, player_id)))

    def modes_held(self, limit: int = 1000) -> list[str]:
        """The modes the cache holds (at most ``limit``, sorted): a SCAN for the modes' clocks,
        which walks the whole key space. For a message about a mode it does not hold, not for
        a matchmaker's path."""
        layout = self.queries.layout
        found: set[str] = set()
        for key in self.redis.scan_iter(match=layout.clock_pattern(), count=10_000):
            mode = layout.clock_mode(key.decode() if isinstance(key, bytes) else key)
            if mode is not None:
                found.add(mode)
                if len(found) >= limit:
                    break
        return sorted(found)

    def _run(self, plan: Plan[T]) -> T:
        if not plan.commands:
            return plan.decode([])
        with self.redis.pipeline(transaction=False) as pipe:
            for command in plan.commands:
                # redis-py leaves the sync pipeline's execute_command unannotated.
                pipe.execute_command(*command)  # type: ignore[no-untyped-call]
            replies = pipe.execute()
        return plan.decode(replies)
