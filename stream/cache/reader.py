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

import functools
from collections.abc import Callable, Coroutine
from typing import Any, Concatenate, ParamSpec, TypeVar

from redis import Redis
from redis.asyncio import Redis as AsyncRedis

from stream.cache.keys import DEFAULT_LAYOUT, KeyLayout
from stream.cache.queries import Plan, RatingQueries
from stream.config.modes import Modes

__all__ = ["RatingCache", "SyncRatingCache"]

T = TypeVar("T")
P = ParamSpec("P")
R = TypeVar("R", bound=Callable[..., Any])
# A read as RatingQueries plans it: the queries, then the method's own arguments.
Query = Callable[Concatenate[RatingQueries, P], Plan[T]]


def _awaited(query: Query[P, T]) -> Callable[Concatenate[RatingCache, P], Coroutine[Any, Any, T]]:
    """A RatingCache method answering ``query``'s plan: its signature and docstring."""

    async def read(cache: RatingCache, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return await cache._run(query(cache.queries, *args, **kwargs))

    return _named(read, query, "RatingCache")


def _blocking(query: Query[P, T]) -> Callable[Concatenate[SyncRatingCache, P], T]:
    """A SyncRatingCache method answering ``query``'s plan: its signature and docstring."""

    def read(cache: SyncRatingCache, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return cache._run(query(cache.queries, *args, **kwargs))

    return _named(read, query, "SyncRatingCache")


def _named(method: R, query: Callable[..., Any], owner: str) -> R:
    # help() shows the query's docstring and parameters (through __wrapped__), under the
    # method's own name.
    functools.update_wrapper(method, query, assigned=("__name__", "__doc__"))
    method.__qualname__ = f"{owner}.{query.__name__}"
    return method


class RatingCache:
    """Async reads for matchmakers (redis.asyncio). See the module docstring for failures; each
    read's docstring is its plan's (:class:`~stream.cache.queries.RatingQueries`)."""

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

    get_many = _awaited(RatingQueries.get_many)
    window = _awaited(RatingQueries.window)
    win_probability = _awaited(RatingQueries.win_probability)
    team_win_probability = _awaited(RatingQueries.team_win_probability)
    match_quality = _awaited(RatingQueries.match_quality)
    top = _awaited(RatingQueries.top)
    around = _awaited(RatingQueries.around)
    seasons = _awaited(RatingQueries.seasons)
    history = _awaited(RatingQueries.history)
    explanation = _awaited(RatingQueries.explanation)

    async def _run(self, plan: Plan[T]) -> T:
        """``plan``'s answer, its commands sent in one pipeline (none: no round trip)."""
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

    get_many = _blocking(RatingQueries.get_many)
    window = _blocking(RatingQueries.window)
    win_probability = _blocking(RatingQueries.win_probability)
    team_win_probability = _blocking(RatingQueries.team_win_probability)
    match_quality = _blocking(RatingQueries.match_quality)
    top = _blocking(RatingQueries.top)
    around = _blocking(RatingQueries.around)
    seasons = _blocking(RatingQueries.seasons)
    history = _blocking(RatingQueries.history)
    explanation = _blocking(RatingQueries.explanation)

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
        """``plan``'s answer, its commands sent in one pipeline (none: no round trip)."""
        if not plan.commands:
            return plan.decode([])
        with self.redis.pipeline(transaction=False) as pipe:
            for command in plan.commands:
                # redis-py leaves the sync pipeline's execute_command unannotated.
                pipe.execute_command(*command)  # type: ignore[no-untyped-call]
            replies = pipe.execute()
        return plan.decode(replies)
