"""Where the rating cache keeps what: one hash per player and mode, three sorted sets per mode.

``<prefix>:{<mode>}:player:<player_id>``  HASH: the player's cached rating (see codec.py)
``<prefix>:{<mode>}:by-rating``           ZSET: score = rating (skill windows)
``<prefix>:{<mode>}:by-rank-points``      ZSET: score = rank points (leaderboard)
``<prefix>:{<mode>}:by-conservative``     ZSET: score = rating - k * deviation (leaderboard)
``<prefix>:{<mode>}:history:<player_id>`` LIST: the player's last rating changes, newest first
``<prefix>:{<mode>}:by-last-played``      ZSET: score = event time (ms) of each boarded player's
                                          last match (who leaves the boards when inactive)
``<prefix>:{<mode>}:clock``               STRING: the newest event time (ms) written in the mode
``<prefix>:{<mode>}:season``              STRING: the season the three boards above belong to
``<prefix>:{<mode>}:seasons``             ZSET: the past seasons whose final standings are kept
``<prefix>:{<mode>}:season:<n>:by-...``   ZSET: season n's final standings, one per board

The three boards are the current season's (every player's, in a mode without seasons); a
season's boards are renamed to its ``season:<n>`` keys when the first event of a later season
arrives (docs/seasons.md).

Every key of a mode carries the hash tag ``{<mode>}``, so on Redis Cluster they all live in one
slot and the writer's single Lua script may update a player's hash and the mode's three sorted
sets atomically. The price: one mode's keys cannot be spread over several shards, so a mode is
bounded by one node's memory and throughput; the cluster scales out across modes.

Inside the tag the mode is percent-encoded (``%`` -> ``%25``, ``{`` -> ``%7B``, ``}`` -> ``%7D``):
a ``}`` in a mode would otherwise end the tag early and scatter the mode over several slots,
and escaping ``%`` too keeps the encoding one-to-one, so two modes never share keys. Player ids
need no escaping: Redis takes the first ``{`` and the first ``}`` after it, both of which are
ours, and the player id is always the key's last part. The prefix may not contain braces,
since a brace there would become the tag.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from enum import StrEnum

__all__ = [
    "DEFAULT_LAYOUT",
    "MAX_ID_LENGTH",
    "Board",
    "KeyLayout",
    "check_id",
    "escape_mode",
    "unescape_mode",
]

# Mode and player ids are capped like the events that carry them (rating-changed schema).
MAX_ID_LENGTH = 128

_ESCAPES = str.maketrans({"%": "%25", "{": "%7B", "}": "%7D"})


class Board(StrEnum):
    """A mode's sorted sets a leaderboard or skill window can read."""

    RANK_POINTS = "rank_points"
    CONSERVATIVE = "conservative"
    RATING = "rating"


def check_id(value: object, what: str) -> str:
    """``value`` if it is a usable mode or player id; ValueError saying why not otherwise."""
    if not isinstance(value, str):
        raise ValueError(f"{what} must be a string, got {type(value).__name__}")
    if not value:
        raise ValueError(f"{what} is empty")
    if len(value) > MAX_ID_LENGTH:
        raise ValueError(f"{what} is longer than {MAX_ID_LENGTH} characters")
    return value


def escape_mode(mode: str) -> str:
    """The mode as it appears inside the hash tag: no braces, and one-to-one."""
    return mode.translate(_ESCAPES)


def unescape_mode(escaped: str) -> str:
    """The mode :func:`escape_mode` gave ``escaped`` for (every ``%`` it writes starts one of
    its three escapes)."""
    return escaped.replace("%7B", "{").replace("%7D", "}").replace("%25", "%")


@dataclass(frozen=True, slots=True)
class KeyLayout:
    """Key names for one deployment; ``prefix`` keeps several deployments on one server apart."""

    prefix: str = "skillstream"

    def __post_init__(self) -> None:
        if not isinstance(self.prefix, str) or not self.prefix:
            raise ValueError("key prefix must be a non-empty string")
        if "{" in self.prefix or "}" in self.prefix:
            raise ValueError(f"key prefix {self.prefix!r} must not contain '{{' or '}}'")

    def mode_base(self, mode: str) -> str:
        """``<prefix>:{<escaped mode>}``: what every key of ``mode`` starts with."""
        return f"{self.prefix}:{{{escape_mode(check_id(mode, 'mode'))}}}"

    def player(self, mode: str, player_id: str) -> str:
        return f"{self.mode_base(mode)}:player:{check_id(player_id, 'player_id')}"

    def population(self, mode: str) -> str:
        """A learning mode's population as the workers rate with it (stream/cache/population.py)."""
        return f"{self.mode_base(mode)}:population"

    def by_rating(self, mode: str) -> str:
        return f"{self.mode_base(mode)}:by-rating"

    def by_rank_points(self, mode: str) -> str:
        return f"{self.mode_base(mode)}:by-rank-points"

    def by_conservative(self, mode: str) -> str:
        return f"{self.mode_base(mode)}:by-conservative"

    def board(self, mode: str, board: Board | str) -> str:
        """The sorted set behind ``board``; ValueError for a board that does not exist."""
        try:
            which = Board(board)
        except ValueError:
            choices = ", ".join(b.value for b in Board)
            raise ValueError(f"unknown board {board!r}; one of {choices}") from None
        if which is Board.RANK_POINTS:
            return self.by_rank_points(mode)
        if which is Board.CONSERVATIVE:
            return self.by_conservative(mode)
        return self.by_rating(mode)

    def history(self, mode: str, player_id: str) -> str:
        return f"{self.mode_base(mode)}:history:{check_id(player_id, 'player_id')}"

    def season(self, mode: str) -> str:
        """The current season's number (absent: the mode's events carry no season)."""
        return f"{self.mode_base(mode)}:season"

    def seasons(self, mode: str) -> str:
        """The past seasons whose final standings are kept (member and score: the number)."""
        return f"{self.mode_base(mode)}:seasons"

    def past_board(self, mode: str, season: int, board: Board | str) -> str:
        """Season ``season``'s final standings on ``board``; ValueError as :meth:`board`."""
        head, tails = self.past_boards(mode)
        index = (self.by_rating(mode), self.by_rank_points(mode), self.by_conservative(mode))
        return f"{head}{season}{tails[index.index(self.board(mode, board))]}"

    def past_boards(self, mode: str) -> tuple[str, tuple[str, str, str]]:
        """How a past season's standings are named: the head before the season's number and
        the tails after it, one per board in :meth:`mode_keys`' order (by-rating,
        by-rank-points, by-conservative). The writer's scripts name past seasons' keys from
        these (their number is only known there), so the layout is written here only."""
        base = self.mode_base(mode)
        current = (self.by_rating(mode), self.by_rank_points(mode), self.by_conservative(mode))
        tails = tuple(key[len(base) :] for key in current)
        return f"{base}:season:", (tails[0], tails[1], tails[2])

    def past_boards_argument(self, mode: str) -> str:
        """:meth:`past_boards` as the writer's scripts take it: one JSON array of strings."""
        head, tails = self.past_boards(mode)
        return json.dumps([head, *tails])

    def clock(self, mode: str) -> str:
        """The newest event time written in ``mode``: set by every write, so its presence says
        the cache holds the mode."""
        return f"{self.mode_base(mode)}:clock"

    def clock_pattern(self) -> str:
        """A SCAN pattern matching every mode's clock (the prefix's glob characters escaped)."""
        prefix = "".join(f"\\{c}" if c in "*?[]\\" else c for c in self.prefix)
        return f"{prefix}:{{*}}:clock"

    def clock_mode(self, key: str) -> str | None:
        """The mode whose clock ``key`` is, or None for a key that is no mode's clock (a
        player id may end in ``}:clock``; an escaped mode holds no brace)."""
        head, tail = f"{self.prefix}:{{", "}:clock"
        if not (key.startswith(head) and key.endswith(tail)):
            return None
        escaped = key[len(head) : -len(tail)]
        if not escaped or "{" in escaped or "}" in escaped:
            return None
        return unescape_mode(escaped)

    def write_keys(self, mode: str, player_id: str) -> tuple[str, ...]:
        """Every key a write of the player's rating may change (past seasons' standings
        aside): hash, by-rating, by-rank-points, by-conservative, history, by-last-played,
        season, seasons, clock."""
        hash_key, history = self.player_keys(mode, player_id)
        rating, points, conservative, *rest = self.mode_keys(mode)
        return (hash_key, rating, points, conservative, history, *rest)

    def mode_keys(self, mode: str) -> tuple[str, ...]:
        """The writer script's first KEYS, shared by every player of the mode: by-rating,
        by-rank-points, by-conservative, by-last-played, season, seasons, clock."""
        base = self.mode_base(mode)
        return (
            self.by_rating(mode),
            self.by_rank_points(mode),
            self.by_conservative(mode),
            f"{base}:by-last-played",
            f"{base}:season",
            f"{base}:seasons",
            self.clock(mode),
        )

    def player_keys(self, mode: str, player_id: str) -> tuple[str, str]:
        """The writer script's two KEYS per player after :meth:`mode_keys`: hash, history."""
        base = self.mode_base(mode)
        player = check_id(player_id, "player_id")
        return f"{base}:player:{player}", f"{base}:history:{player}"


DEFAULT_LAYOUT = KeyLayout()
