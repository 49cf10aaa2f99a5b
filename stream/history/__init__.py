"""Streaming readers for offline match histories and seed ratings (``replay``, ``evaluate``)."""

from stream.history.model import HistoryError, HistoryMatch, SeedRating, play_order
from stream.history.reader import read_history
from stream.history.seeds import read_seed_ratings

__all__ = [
    "HistoryError",
    "HistoryMatch",
    "SeedRating",
    "play_order",
    "read_history",
    "read_seed_ratings",
]
