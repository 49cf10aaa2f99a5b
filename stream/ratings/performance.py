"""Individual performance: a member's share of their side's score moves them within the side.

Opt-in per mode, for games whose per-player ``score`` is comparable between teammates (kills,
points, damage). After a team match each member rated from the result is moved by::

    points * (z - mean z of the side's members with stats)

where ``z = log2(their score per second / the side's mean score per second)``, bounded to
``limit`` doublings either way: centred on the side's mean ``z``, a member moves up for a rate
above the side's typical (geometric mean) one. The side's members move by amounts that sum
to zero (below): the side's result (who won) is never changed, only how it is shared out
within the side, and a player who outscored a teammate twice over gains ``points`` more than
them. Score per second, so a part-time player (stream.ratings.parttime) is compared at their
own rate; a negative score counts as none. A side of one, a match without stats, or a player
without them: no move. A forced loss (a quitter's, an abandonment) ignores the stats.

Why this form (docs/decisions.md and docs/defaults.md, "Individual performance"): on simulated
4v4 matches whose scores follow performance, the log loss of later predictions fell most for
3.5 to 10 points per doubling and less at 25; the bound keeps a score of 0, or a teammate who
did nothing, from moving anyone far. The moves of the members rated from the result add up to
zero unless a teammate's result was forced (a quitter's stats still count in the side's mean)
or a rating bound clipped one.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

from stream.ratings.ranges import Range, check_ranges
from stream.ratings.skill import PlayerStats

__all__ = ["PerformanceConfig", "performance_shift"]


@dataclass(frozen=True, slots=True)
class PerformanceConfig:
    """Per-mode parameters; ``points = 0`` (the default) switches the term off.

    ``points``: rating points a member gains within their side for each doubling of their score
    per second over the side's mean. ``limit``: the doublings counted at most, either way.
    """

    points: float = 0.0
    limit: float = 3.0

    RANGES: ClassVar[Mapping[str, Range]] = {
        "points": Range(
            0.0,
            100.0,
            "rating points per doubling of a member's score rate over their side's (0: off); "
            "on simulated 4v4 3.5 to 10 predicted best, 25 less well (docs/defaults.md)",
        ),
        "limit": Range(
            0.5, 10.0, "doublings counted at most: a score of 0 or an outlier stays bounded"
        ),
    }

    def __post_init__(self) -> None:
        check_ranges(self, self.RANGES)

    @property
    def active(self) -> bool:
        return self.points != 0.0


def performance_shift(
    config: PerformanceConfig,
    side: Sequence[str],
    stats: Mapping[str, PlayerStats] | None,
    player_id: str,
) -> float:
    """Rating points ``player_id`` moves within ``side`` (their team's line-up) for their share
    of its score (module docstring); 0 when the term is off or cannot apply."""
    if not config.active or not stats or len(side) < 2 or player_id not in stats:
        return 0.0
    rates = {}
    for pid in side:
        found = stats.get(pid)
        if found is not None and found.seconds > 0 and math.isfinite(found.score):
            rate = max(found.score, 0.0) / found.seconds
            # A score over a denormal number of seconds overflows: such a rate says nothing.
            if math.isfinite(rate):
                rates[pid] = rate
    if len(rates) < 2 or player_id not in rates:
        return 0.0
    mean = sum(rates.values()) / len(rates)
    if not 0.0 < mean < math.inf:
        return 0.0
    limit = config.limit
    floor = 2.0**-limit
    doublings = {pid: min(math.log2(max(rate / mean, floor)), limit) for pid, rate in rates.items()}
    centre = sum(doublings.values()) / len(doublings)
    return config.points * (doublings[player_id] - centre)
