"""How fast a mode's skills drift, learned: each player's sensitivity to it.

A Glicko-2 deviation grows with time, ``phi^2 += sigma^2 * days / period_days``: the drift the
algorithm allows for between two matches. How fast true skills really move is a property of
the population (esports rosters and metagames change in weeks, tennis careers in years), so a
mode that learns its population learns its drift period (``period_days``;
stream.ratings.population). Its evidence is the same as every learned value's: how the
log-likelihood of the results would change with it. A drift changes a prediction through both
players' ratings, which it moved at every update since their first match, and through their
deviations then. So each player carries two numbers in their state: the derivatives, with
respect to the log of the drift (the log of the period's reciprocal), of their rating
(``drift_slope``, points) and of their squared deviation (``variance_slope``, points squared).

Both are carried forward by differentiating each update numerically: the update is computed a
second time from every participant moved a small step :data:`STEP` along their slopes
(:func:`drifted`: the rating by ``drift_slope``, the squared deviation by its slope, which grows
during inactivity by as much as the inactivity grew it, since that growth is proportional to the
drift), and the difference of the two results over the step is the new pair of slopes. So every
term of the algorithm's step is in it (the opponents' deviations, the volatility), not an
approximation of some. The algorithm computes the second update with the first
(``rate_twin``): Glicko-2 moves the first's volatility by the implicit function's first-order
step rather than searching again, which is cheaper and free of the search's tolerance. A
newcomer starts at 0; so does a state that is reset (a season, an operator's adjustment, a
start from another mode). Pure functions: the live player partitions
and replay compute the same numbers from the same states.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from stream.ratings.skill import PlayerState, Skill, SkillLike

# The step, in log drift, of the numerical derivatives: small enough that the update is linear
# over it, large enough that a rating's change stays far above its rounding (1e-3 of a
# 10-point slope is 0.01 point, against rounding at 1e-13 of 1500).
STEP = 1e-3
# A deviation this close to the mode's largest counts as held there (float rounding): more
# drift would not grow it.
_AT_LARGEST = 1.0 - 1e-9


def drifted(
    state: PlayerState | None, skill: SkillLike, largest: float, step: float = STEP
) -> SkillLike:
    """``skill``, a player's as a match is played (inactivity applied since ``state``, their
    stored state; None: a newcomer, who has no slope), ``step`` along the log drift: the rating
    moved by ``drift_slope``, the squared deviation by its slope then (the stored slope plus
    the inactivity's growth; 0 at the mode's ``largest`` deviation). ``skill`` itself when
    nothing moves."""
    if state is None:
        return skill
    move = drift_move(state, skill.deviation, largest, step)
    if move is None:
        return skill
    return Skill(skill.rating + move[0], move[1], skill.volatility)


def drift_move(
    state: PlayerState, deviation: float, largest: float, step: float = STEP
) -> tuple[float, float] | None:
    """:func:`drifted` in floats, for a player whose skill as played has ``deviation``: (what
    the rating moves by, the moved deviation), or None when nothing moves. A duel moves each
    player twice, as they meet the other and as they are rated, by the same amounts."""
    square = deviation * deviation
    if deviation >= largest * _AT_LARGEST:
        d_square = 0.0
    else:
        growth = square - state.deviation * state.deviation
        d_square = state.variance_slope + (growth if growth > 0.0 else 0.0)
    slope = state.drift_slope
    if d_square == 0.0 and slope == 0.0:
        return None
    # A slope so negative that the step would leave no deviation (only an unlikely state
    # written by hand) moves it to half instead.
    moved = square + step * d_square
    quarter = 0.25 * square
    # max(moved, quarter), written out: the same value, NaN included.
    return step * slope, math.sqrt(quarter if quarter > moved else moved)


def drifted_teams(
    teams: Sequence[Sequence[str]],
    states: Mapping[str, PlayerState],
    skills: Sequence[Sequence[SkillLike]],
    largest: float,
) -> list[list[SkillLike]] | None:
    """:func:`drifted` for every participant (``skills``: as played, team by team), or None
    when nobody moves (a match of newcomers)."""
    moved = False
    out: list[list[SkillLike]] = []
    for team, team_skills in zip(teams, skills, strict=True):
        row: list[SkillLike] = []
        for pid, skill in zip(team, team_skills, strict=True):
            found = drifted(states.get(pid), skill, largest)
            moved = moved or found is not skill
            row.append(found)
        out.append(row)
    return out if moved else None


def slopes_between(after: SkillLike, moved: SkillLike) -> tuple[float, float]:
    """``(drift_slope, variance_slope)`` of an update: ``after`` its result, ``moved`` the same
    update's result from the inputs :data:`STEP` along the log drift."""
    return (
        (moved.rating - after.rating) / STEP,
        (moved.deviation * moved.deviation - after.deviation * after.deviation) / STEP,
    )
