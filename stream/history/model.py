"""What the history readers yield, and the one error they raise."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from stream.errors import UserError
from stream.ratings.parties import Parties
from stream.ratings.skill import PlayerStats


def play_order(started_at: float, match_id: str) -> tuple[float, str]:
    """The order a player's matches apply in, live and in ``skillstream replay
    --in-play-order``: by start, then match id (docs/event-time.md). Matches that start at the
    same instant have no order of their own; the match id gives one that both sides can apply."""
    return (started_at, match_id)


class HistoryMatch(NamedTuple):
    """One finished match read from an offline history.

    ``row`` is the line number as an editor shows it (the CSV header is line 1, so the first
    CSV match is line 2), kept so later stages can point users at the offending line.
    ``mode`` is None when the file does not say (a CSV without a ``mode`` column or with an
    empty cell); the caller picks the default mode. ``at`` is epoch seconds. ``ranks`` has one
    rank per team, lower is better, equal ranks are a draw. ``started_at`` (epoch seconds) is
    known only from a JSON-lines history whose events carry it; with it, ``replay
    --in-play-order`` orders by it and settles overlapping matches as the live pipeline does
    (:mod:`stream.ratings.settling`). ``parties``: the players who queued together, from a
    JSON-lines history whose events name them (stream.ratings.parties; None: none named).
    """

    row: int
    match_id: str
    mode: str | None
    at: float
    teams: tuple[tuple[str, ...], ...]
    ranks: tuple[int, ...]
    stats: Mapping[str, PlayerStats] | None
    quitters: frozenset[str]
    started_at: float | None = None
    parties: Parties | None = None


# A named tuple because replay builds one per CSV row: the reader makes it with one
# tuple.__new__ call, about a third of what a frozen dataclass costs, and it stays immutable.
new_history_match: Any = tuple.__new__


@dataclass(frozen=True, slots=True)
class SeedRating:
    """A starting rating for a player, e.g. carried over from a previous system.

    ``mode`` None means the seed applies to every mode; ``deviation`` and ``volatility`` None
    mean "the algorithm's default for a new player". ``games`` are the games the player already
    played before the seed; None when the seed does not say (replay then takes the player for
    established: stream.offline.seeding).
    """

    line: int
    player_id: str
    mode: str | None
    rating: float
    deviation: float | None
    volatility: float | None
    games: int | None = None


class HistoryError(UserError):
    """A history or seed file the readers cannot use; ``str()`` is the user-facing message.

    ``line`` is None for problems with the file as a whole (missing, empty, unknown format).
    """

    def __init__(self, path: str, line: int | None, reason: str) -> None:
        super().__init__(path, line, reason)
        self.path = path
        self.line = line
        self.reason = reason

    def __str__(self) -> str:
        if self.line is None:
            return f"{self.path}: {self.reason}"
        return f"{self.path} line {self.line}: {self.reason}"
