"""The Redis rating cache matchmakers read; Kafka stays the source of truth.

Written by :class:`CacheWriter` with versioned, idempotent updates (never older state over
newer), read with :class:`RatingCache` (async) or :class:`SyncRatingCache`. Key layout in
keys.py, hash fields in codec.py.
"""

from stream.cache.codec import SCHEMA_VERSION, CacheFormatError
from stream.cache.entry import CachedRating
from stream.cache.history import HistoryEntry
from stream.cache.keys import DEFAULT_LAYOUT, Board, KeyLayout
from stream.cache.queries import LeaderboardEntry, Seasons, UnknownModeError
from stream.cache.reader import RatingCache, SyncRatingCache
from stream.cache.slots import key_slot
from stream.cache.writer import SCRIPT_VERSION, CacheWriter, WriteResult

__all__ = [
    "DEFAULT_LAYOUT",
    "SCHEMA_VERSION",
    "SCRIPT_VERSION",
    "Board",
    "CacheFormatError",
    "CacheWriter",
    "CachedRating",
    "HistoryEntry",
    "KeyLayout",
    "LeaderboardEntry",
    "RatingCache",
    "Seasons",
    "SyncRatingCache",
    "UnknownModeError",
    "WriteResult",
    "key_slot",
]
