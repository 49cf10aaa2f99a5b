"""How a match is decided: each player's performance, each team's, and the finishing order.

A player's performance is their true skill plus Gumbel noise of scale 400/ln 10. The Gumbel
choice keeps the Elo curve exact where the rating systems assume it: the better of two such
performances wins with probability 1 / (1 + 10 ** (-gap / 400)), and the finishing order of
single players is Plackett-Luce with weights 10 ** (skill / 400).

A team's performance is the mean of its members' performances, pulled towards the best of them
by ``carry`` (one strong player carries a team further than the mean says), plus
``extra_player_edge`` per player above the match's mean team size. With part-time play the
mean is weighted by each member's share of the match and a team's size is the sum of the
shares: a side missing a player for half the match is half a player smaller.

A member of a party that queued together (``party_probability``) performs ``party_edge``
above their skill in that match: stream.simulation.core adds it to their drawn performance,
the same as drawing at skill plus edge, so the team's mean (and its best, for ``carry``) sees
it like any other points, and a side's edge grows with its partied share.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

# The logistic scale of the Elo/Glicko curve.
PERFORMANCE_SCALE = 400.0 / math.log(10.0)


def performance(skill: float, rng: random.Random) -> float:
    """One match's performance of a player of true skill ``skill``."""
    u = rng.random() or 5e-324  # random() may return 0.0, whose log is undefined
    return skill - PERFORMANCE_SCALE * math.log(-math.log(u))


def team_performance(
    performances: Sequence[float],
    carry: float,
    edge_per_player: float,
    mean_size: float,
    shares: Sequence[float] | None = None,
) -> float:
    """A team's performance (module docstring). ``shares``: each member's share of the match
    (part-time play): the mean is weighted by them and the team's size is their sum (then
    ``mean_size`` is the match's mean of those sums)."""
    if shares is None:
        mean = math.fsum(performances) / len(performances)
        size = float(len(performances))
    else:
        size = math.fsum(shares)
        mean = math.fsum(p * w for p, w in zip(performances, shares, strict=True)) / size
    return mean + carry * (max(performances) - mean) + edge_per_player * (size - mean_size)


def finishing_order(team_performances: Sequence[float]) -> list[int]:
    """Team indices best first (ties, which have probability zero, by index)."""
    return sorted(range(len(team_performances)), key=lambda i: (-team_performances[i], i))
