"""A mode whose newcomers start from another mode: the player's rating there, less certain.

When a game opens a new queue (a 2v2 beside the 1v1 ladder, a new season's mode), its players
are not strangers: FAForever initialises a new leaderboard from the player's global rating,
the mean as it is and the deviation widened by 150 up to 250 (on its scale of 500 for a new
player), unless it is wider already (FAForever/server issues 596 and 724). Here the same rule,
scale-free: ``deviation_added`` and ``deviation_cap`` are fractions of the mode's new-player
deviation (FAForever's 150/500 and 250/500 by default).

The started state keeps the source's ``games`` (the player is not new to the game: the
experience term and ``provisional`` follow their real experience) and ``last_played`` (the
engine applies the inactivity since, with this mode's algorithm), and takes Rank Points at its
functional rating, as a seeded player does. Pure: live and replay call :func:`started_from`
on the same source state (the player's latest in the source mode before the match, in the
order of play), so both start the player alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from stream.ratings.ranges import Range, check_ranges, require
from stream.ratings.rank_points import to_points
from stream.ratings.skill import PlayerState

if TYPE_CHECKING:  # the mode holds its StartConfig: imported for the annotation only
    from stream.ratings.modeconfig import ModeConfig

__all__ = ["StartConfig", "started_from", "starting_state"]


@dataclass(frozen=True, slots=True)
class StartConfig:
    """``from_mode``: the mode whose rating a newcomer to this mode starts from (a player
    without a rating there starts as anyone new). The deviation: the source's plus
    ``deviation_added``, at most ``deviation_cap`` (both fractions of a new player's
    deviation in this mode), or the source's when it is wider than the cap already."""

    from_mode: str
    deviation_added: float = 0.3
    deviation_cap: float = 0.5

    RANGES: ClassVar[Mapping[str, Range]] = {
        "deviation_added": Range(
            0.0, 1.0, "of a new player's deviation added to the source's (FAForever: 0.3)"
        ),
        "deviation_cap": Range(
            0.0,
            1.0,
            "of a new player's deviation: the widest a started deviation gets (FAForever: 0.5)",
            low_open=True,
        ),
    }

    def __post_init__(self) -> None:
        check_ranges(self, self.RANGES)
        require(
            isinstance(self.from_mode, str) and bool(self.from_mode.strip()),
            "from_mode",
            "must name the mode newcomers start from",
        )


def started_from(mode: ModeConfig, source: PlayerState) -> PlayerState:
    """The state a newcomer to ``mode`` (whose ``start`` is set) starts with, from their
    ``source`` state in ``mode.start.from_mode``."""
    start = mode.start
    assert start is not None, "started_from() is for a mode that starts from another"
    initial = mode.initial
    unrated = initial.deviation
    cap = start.deviation_cap * unrated
    deviation = source.deviation
    if deviation <= cap:
        deviation = min(deviation + start.deviation_added * unrated, cap)
    # Never less certain than a new player, never below what the algorithm allows.
    deviation = min(deviation, unrated)
    volatility = initial.volatility
    if volatility is not None and source.volatility is not None:
        volatility = source.volatility
    return starting_state(
        mode, source.rating, deviation, volatility, source.games, source.last_played
    )


def starting_state(
    mode: ModeConfig,
    rating: float,
    deviation: float,
    volatility: float | None,
    games: int,
    last_played: float | None,
) -> PlayerState:
    """A state a player starts a mode with (a seed, a start from another mode): the values
    held to the bounds the engine is proven finite on (the algorithm's limits: Glicko-2's
    rating, deviation and volatility bounds, Glicko-1's smallest deviation, +-1e6 for any
    rating), Rank Points at its functional rating."""
    rating, deviation, volatility = mode.algorithm.limits.held(rating, deviation, volatility)
    rules = mode.rank_points
    points = to_points(rules, rating - rules.confidence_z * deviation, mode.rating_bounds)
    return PlayerState(rating, deviation, volatility, round(points), games, last_played)
