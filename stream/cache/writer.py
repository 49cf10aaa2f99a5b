"""Writes rating-changed results to the cache so that it never shows older state over newer.

Kafka is the source of truth and delivers at least once, possibly after newer messages (a
replay, a rebalance, two workers during a handover). So each write is conditional, decided on
the server by one Lua script: a player's hash and the mode's three sorted sets change only if
the incoming version is strictly higher than the stored one. Writing the same or an older
state again therefore changes nothing, which makes every write, and every retry, idempotent.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import redis.asyncio as aioredis

from stream.cache.codec import encode_fields, encode_float
from stream.cache.entry import MAX_COUNT, CachedRating, entry_problem
from stream.cache.keys import DEFAULT_LAYOUT, KeyLayout

__all__ = ["SCRIPT_VERSION", "WRITE_SCRIPT", "CacheWriter", "WriteResult"]

# Bump on any change to the script's behaviour. It is part of the script text, so a new version
# gets a new SHA and never runs as an old one cached on the server.
SCRIPT_VERSION = 2

# KEYS: player hash, by-rating, by-rank-points, by-conservative (KeyLayout.write_keys).
# ARGV: version, rating score, rank-points score, conservative score, player id,
#       then the hash's field/value pairs (codec.encode_fields, version among them).
# Versions are compared as Lua numbers (doubles): exact up to 2^53 changes per player. A stored
# version beyond MAX_COUNT was written by a forged record before the writer refused them: it is
# replaced, or the key could never change again.
WRITE_SCRIPT = f"""-- skillstream rating cache writer, script version {SCRIPT_VERSION}
local stored = redis.call('HGET', KEYS[1], 'version')
if stored then
  local current = tonumber(stored)
  if current == nil then
    return redis.error_reply('skillstream: stored version is not a number in ' .. KEYS[1])
  end
  if tonumber(ARGV[1]) <= current and current <= {MAX_COUNT} then
    return 0
  end
end
redis.call('HSET', KEYS[1], unpack(ARGV, 6))
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[5])
redis.call('ZADD', KEYS[3], ARGV[3], ARGV[5])
redis.call('ZADD', KEYS[4], ARGV[4], ARGV[5])
return 1
"""


@dataclass(frozen=True, slots=True)
class WriteResult:
    """What one ``write`` did: every input entry is counted once, as applied or as stale.

    ``stale`` counts entries that changed nothing: an equal or newer version was already
    cached, or a newer version of the same player came in the same batch.
    """

    applied: int
    stale: int


class CacheWriter:
    """Applies batches of ratings to the cache; used by the worker that consumes rating-changed.

    ``conservative_k`` sets the conservative board's score (rating - k * deviation). Every
    writer of one cache must use the same k; after changing it, entries keep their old score
    until their player's next change (rebuild the cache from Kafka to re-score everyone).
    """

    def __init__(
        self,
        redis: aioredis.Redis,
        layout: KeyLayout = DEFAULT_LAYOUT,
        conservative_k: float = 3.0,
    ) -> None:
        if not math.isfinite(conservative_k) or conservative_k < 0:
            raise ValueError(f"conservative_k must be finite and >= 0, got {conservative_k!r}")
        self.redis = redis
        self.layout = layout
        self.conservative_k = conservative_k
        self._script = redis.register_script(WRITE_SCRIPT)

    async def write(self, ratings: Sequence[CachedRating]) -> WriteResult:
        """Cache ``ratings``, each only if it is newer than what the cache holds.

        Of several entries for one (mode, player) only the highest version is sent (the first
        of equal versions). All script calls go in one non-transactional pipeline: one round
        trip, plus redis-py's SCRIPT EXISTS check, which loads the script after a server
        restart or SCRIPT FLUSH.

        Duplicates and replays: an entry whose version is not above the cached one is counted
        stale and changes nothing, so redelivered or out-of-order batches are harmless.

        Failure: redis exceptions (ConnectionError, TimeoutError, ResponseError, ...)
        propagate. Some entries may have been applied before the failure; the caller retries
        the whole batch, which is safe because applying an entry twice equals applying it once.
        ValueError, before anything is sent, for a provisional entry, a value no engine
        produces (non-finite or beyond the bounds of stream/cache/entry.py), or an id KeyLayout
        refuses.
        """
        newest: dict[tuple[str, str], CachedRating] = {}
        for entry in ratings:
            self.check(entry)
            key = (entry.mode, entry.player_id)
            kept = newest.get(key)
            if kept is None or entry.version > kept.version:
                newest[key] = entry
        if not newest:
            return WriteResult(applied=0, stale=0)
        # Keys and arguments first: a bad id raises before a pipeline exists.
        calls = [
            (self.layout.write_keys(entry.mode, entry.player_id), self._args(entry))
            for entry in newest.values()
        ]
        async with self.redis.pipeline(transaction=False) as pipe:
            for keys, args in calls:
                await self._script(keys=keys, args=args, client=pipe)
            replies = await pipe.execute()
        applied = sum(1 for reply in replies if int(reply) == 1)
        return WriteResult(applied=applied, stale=len(ratings) - applied)

    def check(self, entry: CachedRating) -> None:
        """ValueError if ``entry`` cannot be cached (what ``write`` refuses before sending)."""
        if entry.provisional or entry.version < 1:
            raise ValueError(
                f"only real rating changes can be cached (version >= 1, not provisional); "
                f"got version {entry.version} of {entry.player_id!r} in {entry.mode!r}"
            )
        problem = entry_problem(entry)
        if problem is not None:
            raise ValueError(f"{problem} ({entry.player_id!r} in {entry.mode!r})")
        self.layout.write_keys(entry.mode, entry.player_id)

    def _args(self, entry: CachedRating) -> list[str]:
        return [
            str(entry.version),
            encode_float(entry.rating),
            str(entry.rank_points),
            encode_float(entry.conservative(self.conservative_k)),
            entry.player_id,
            *encode_fields(entry),
        ]
