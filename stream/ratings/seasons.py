"""Seasons: a mode's schedule in event time, and the soft reset a player meets at a boundary.

A season is numbered by how many season starts lie at or before a moment: 0 before the first
start (no season yet), 1 from the first start, and so on. Starts are fixed dates (``starts``)
and, when ``period_days`` is set, a new season every that many days after the last fixed date::

    schedule = SeasonsConfig(starts=(1_767_225_600.0,), period_days=91.0)  # 2026-01-01 UTC
    schedule.season_of(1_767_225_600.0 + 100 * 86_400.0)  # 2: the second season
    schedule.start_of(2)  # 1_767_225_600.0 + 91 * 86_400.0

The reset is derived, never stored: a state last played in an earlier season than the match
meets :func:`soft_reset` before it is used (:func:`stream.ratings.engine.season_entered`), the
same way inactivity is applied, so it costs O(1) per player, nothing for players who never come
back, and is the same live and in replay. The reset state is dated at the season's start, which
makes a second reset in the same season a no-op (idempotence); a player who skipped several
seasons is reset once, as their inactivity already counts the whole absence.

Pure: numbers in, numbers out; no clock (times are epoch seconds given by the caller).
"""

from __future__ import annotations

import bisect
import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from stream.ratings.ranges import ConfigError, Range, check_ranges, require
from stream.ratings.skill import PlayerState, SkillLike

_SECONDS_PER_DAY = 86_400.0
# Epoch seconds of the year 9999: the latest time an event may carry.
_LATEST = 253_402_300_799.0


@dataclass(frozen=True, slots=True)
class SeasonsConfig:
    """A mode's season schedule and its soft-reset policy.

    ``starts``: fixed season starts, epoch seconds, strictly increasing (at least one).
    ``period_days``: 0 for fixed dates only; otherwise a new season every this many days after
    the last fixed start. ``deviation_reset``: the fraction of the way from the player's
    deviation to the unrated one that a reset moves it (0 keeps it, 1 makes the player as
    uncertain as a new one). ``rank_points_kept``: the fraction of Rank Points a reset keeps
    (0 resets them to zero, 0.5 compresses them by half, 1 keeps them).
    """

    starts: tuple[float, ...] = ()
    period_days: float = 0.0
    deviation_reset: float = 0.5
    rank_points_kept: float = 0.0
    # Derived once: the period in seconds (0: none) and the last fixed start.
    period_seconds: float = field(init=False, repr=False, compare=False)
    _last: float = field(init=False, repr=False, compare=False)
    # The season last looked up by crossed(), as (start, end, number): nearly every match falls
    # in the season of the one before, and two comparisons are cheaper than season_of().
    _recent: list[tuple[float, float, int]] = field(init=False, repr=False, compare=False)

    RANGES: ClassVar[Mapping[str, Range]] = {
        "period_days": Range(
            0.0, 3650.0, "days per season after the last fixed start (0: fixed dates only)"
        ),
        "deviation_reset": Range(
            0.0, 1.0, "the fraction of the way back to a new player's deviation (0: none)"
        ),
        "rank_points_kept": Range(
            0.0, 1.0, "the fraction of Rank Points a season keeps (0: reset to zero)"
        ),
    }

    def __post_init__(self) -> None:
        check_ranges(self, self.RANGES)
        starts = self.starts
        require(len(starts) > 0, "starts", "must hold at least one season start")
        for start in starts:
            if isinstance(start, bool) or not isinstance(start, int | float):
                raise ConfigError("starts", f"must be times, got {start!r}")
            require(0.0 <= start <= _LATEST, "starts", f"must lie in years 1970 to 9999: {start}")
        require(
            all(a < b for a, b in itertools.pairwise(starts)),
            "starts",
            "must be in increasing order, each after the one before",
        )
        # A period shorter than a minute would make a season of nothing; 0 means no period.
        require(
            self.period_days == 0.0 or self.period_days * _SECONDS_PER_DAY >= 60.0,
            "period_days",
            "must be 0 (no period) or at least a minute",
        )
        object.__setattr__(self, "period_seconds", self.period_days * _SECONDS_PER_DAY)
        object.__setattr__(self, "_last", starts[-1])
        object.__setattr__(self, "_recent", [(0.0, 0.0, 0)])

    def season_of(self, at: float) -> int:
        """The season ``at`` falls in: 0 before the first start, else the number of starts at or
        before it. ``season_of(start_of(n)) == n`` for every season, exactly."""
        last = self._last
        if at < last:
            return bisect.bisect_right(self.starts, at)
        fixed = len(self.starts)
        period = self.period_seconds
        if period == 0.0:
            return fixed
        season = fixed + math.floor((at - last) / period)
        # The division may round across a boundary: settle on the start_of() arithmetic.
        if at < self.start_of(season):
            season -= 1
        elif at >= self.start_of(season + 1):
            season += 1
        return season

    def start_of(self, season: int) -> float:
        """When ``season`` (at least 1) starts; ValueError for season 0 or a season past the
        fixed dates when there is no period."""
        fixed = len(self.starts)
        if 1 <= season <= fixed:
            return self.starts[season - 1]
        if season > fixed and self.period_seconds > 0.0:
            return self._last + (season - fixed) * self.period_seconds
        raise ValueError(f"season {season} has no start")

    def crossed(self, last_played: float, at: float) -> float | None:
        """The start of ``at``'s season if ``last_played`` lies before it (a boundary was crossed
        since the player last played), else None. A match older than the state crosses none."""
        start, end, season = self._recent[0]
        if not start <= at < end:
            season = self.season_of(at)
            if season == 0:
                return None
            start = self.start_of(season)
            end = self._end_of(season)
            self._recent[0] = (start, end, season)
        return start if last_played < start else None

    def _end_of(self, season: int) -> float:
        """When ``season`` ends: the next start, or never."""
        try:
            return self.start_of(season + 1)
        except ValueError:
            return math.inf


def soft_reset(
    config: SeasonsConfig, state: PlayerState, skill: SkillLike, unrated: float, start: float
) -> PlayerState:
    """``state`` entering the season that begins at ``start``: ``skill`` (the state's skill with
    its inactivity up to ``start`` applied) with its deviation moved ``deviation_reset`` of the
    way to ``unrated``, Rank Points scaled by ``rank_points_kept`` (rounded down), and dated at
    ``start`` so that the same season never resets it again. Games are kept: a reset player is
    not a new one."""
    deviation = skill.deviation
    deviation += (unrated - deviation) * config.deviation_reset
    # Rounding may not carry the deviation past the unrated one.
    if (unrated - deviation) * (unrated - skill.deviation) < 0.0:
        deviation = unrated
    points = math.floor(state.rank_points * config.rank_points_kept)
    return PlayerState(skill.rating, deviation, skill.volatility, points, state.games, start)
