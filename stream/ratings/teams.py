"""How a team or free-for-all match becomes a list of pairwise results for one player.

INVERSUS Deluxe describes three ways to push a team match through a two-player rating system:
- ``composite_opponent`` (the default, chosen on real doubles: docs/defaults.md): rated against
  the average of the opposing team.
- ``composite_team`` (the INVERSUS choice): average each team into a virtual player; the player
  is rated against a virtual opponent whose rating differs from the player's own by the gap
  between the opposing team and the player's team. A weak teammate lowers the team's
  expectation, so a loss beside them costs less.
- ``individual``: one result against every opposing player.
Free-for-all is N teams with ranks: the player gets one result per opposing team (lower rank
wins, equal ranks draw), all inside one rating period.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

from stream.ratings.skill import Result, Skill, SkillLike


class TeamStrategy(StrEnum):
    COMPOSITE_TEAM = "composite_team"
    COMPOSITE_OPPONENT = "composite_opponent"
    INDIVIDUAL = "individual"


def composite(members: Sequence[SkillLike]) -> SkillLike:
    """The virtual player of a team: mean rating, mean deviation and mean volatility."""
    if len(members) == 1:
        return members[0]
    n = len(members)
    vols = [m.volatility for m in members if m.volatility is not None]
    return Skill(
        sum(m.rating for m in members) / n,
        sum(m.deviation for m in members) / n,
        sum(vols) / len(vols) if vols else None,
    )


def score_against(my_rank: int, their_rank: int) -> float:
    """Lower rank is better; equal ranks draw."""
    if my_rank < their_rank:
        return 1.0
    if my_rank > their_rank:
        return 0.0
    return 0.5


def results_for(
    strategy: TeamStrategy,
    own: SkillLike,
    team_index: int,
    teams: Sequence[Sequence[SkillLike]],
    scores: Sequence[float],
) -> list[Result]:
    """The results that rate ``own`` (a member of ``teams[team_index]``).

    ``teams`` holds every participant's skill at match start; ``scores[u]`` is the player's score
    against team ``u`` (ignored for the player's own team).
    """
    results: list[Result] = []
    if strategy is TeamStrategy.INDIVIDUAL:
        for u, team in enumerate(teams):
            if u != team_index:
                s = scores[u]
                results.extend(Result(m.rating, m.deviation, s) for m in team)
        return results
    if strategy is TeamStrategy.COMPOSITE_OPPONENT:
        for u, team in enumerate(teams):
            if u != team_index:
                opp = composite(team)
                results.append(Result(opp.rating, opp.deviation, scores[u]))
        return results
    # The virtual opponent keeps the gap between the teams, measured from the player's own
    # rating. Written as opp + (own - mine) so that a one-player team (own is mine) meets the
    # opposing rating exactly, bit for bit, as in a plain 1v1.
    shift = own.rating - composite(teams[team_index]).rating
    for u, team in enumerate(teams):
        if u != team_index:
            opp = composite(team)
            results.append(Result(opp.rating + shift, opp.deviation, scores[u]))
    return results
