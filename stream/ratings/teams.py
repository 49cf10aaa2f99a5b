"""How a team or free-for-all match becomes a list of pairwise results for one player.

INVERSUS Deluxe describes three ways to push a team match through a two-player rating system:
- ``composite_opponent`` (chosen on real doubles: docs/defaults.md): rated against the average
  of the opposing team, as if the whole result were the player's alone.
- ``composite_team`` (the INVERSUS choice): average each team into a virtual player; the player
  is rated against a virtual opponent whose rating differs from the player's own by the gap
  between the opposing team and the player's team. A weak teammate lowers the team's
  expectation, so a loss beside them costs less.
- ``individual``: one result against every opposing player.

Two more share a match's information among the team:
- ``shared`` (TrueSkill / Weng-Lin style): a team performs at its members' mean rating, and the
  players' performances vary independently, so the mean of ``n`` of them varies by ``1/sqrt(n)``
  of one player's (the gap between two teams counts ``sqrt(2 n_a n_b / (n_a + n_b))`` times a
  1v1 gap: :func:`team_scale`). The team's uncertainty is its members' together, and the result
  rates each member by their share of the team: one result whose weight is the member's part of
  the team's logit, so an uncertain member (whose deviation is large) moves most and a settled
  one little, and fourteen players of a 7v7 no longer each take a 1v1-sized update.
- ``auto`` (the built-in default): ``composite_opponent`` while a mode's teams mostly stay
  together from one match to the next (professional rosters, parties), ``shared`` while they are
  mostly reshuffled (pickup games); the share is learned from the mode's own history
  (:mod:`stream.ratings.population`). It is resolved to one of the two before rating.

Uneven sides: a side with more players is stronger by ``size_edge * log2(n_mine / n_theirs)``
rating points (:func:`size_advantage`): ``size_edge`` points for twice as many players, about
a third of it for 5 against 4. Every strategy adds it to the gap it rates and predicts from.

Free-for-all is N teams with ranks: the player gets one result per opposing team (lower rank
wins, equal ranks draw), all inside one rating period.

Part-time play (stream.ratings.parttime): with each member's share of the match, a side's
size for the size edge is the sum of its shares (a side missing a player for half the match
is weaker by ``size_edge * log2(n / (n - 0.5))``), and every result of a part-time player
carries their share of its information (``Result.share``). The composite strategies average
a side's ratings and deviations by share; ``individual`` scales each result by the opponent's
share too; ``shared`` compares the share-weighted means (its spread that of the share-weighted
sums) and keeps each member's part of the logit at ``scale / n`` (the line-up's counts): the
player's share scales what they take from the result, not how the result is predicted.
Without shares nothing here changes, bit for bit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from enum import StrEnum

from stream.ratings.parttime import Shares
from stream.ratings.skill import Result, Skill, SkillLike


class TeamStrategy(StrEnum):
    COMPOSITE_TEAM = "composite_team"
    COMPOSITE_OPPONENT = "composite_opponent"
    INDIVIDUAL = "individual"
    SHARED = "shared"
    AUTO = "auto"


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


def size_advantage(size_edge: float, mine: float, theirs: float) -> float:
    """Rating points a side of ``mine`` players gains over an equal side of ``theirs``."""
    if mine == theirs or size_edge == 0.0:
        return 0.0
    return size_edge * math.log2(mine / theirs)


def team_scale(mine: int, theirs: int) -> float:
    """How many 1v1 gaps a gap between the two teams' mean ratings counts for (``shared``):
    each team's mean performance varies by 1/sqrt(size) of a player's."""
    if mine == theirs:
        return math.sqrt(mine)
    return math.sqrt(2.0 * mine * theirs / (mine + theirs))


def results_for(
    strategy: TeamStrategy,
    own: SkillLike,
    team_index: int,
    teams: Sequence[Sequence[SkillLike]],
    scores: Sequence[float],
    size_edge: float = 0.0,
    shares: Shares | None = None,
    own_share: float = 1.0,
    taken: float | None = None,
) -> list[Result]:
    """The results that rate ``own`` (a member of ``teams[team_index]``).

    ``teams`` holds every participant's skill at match start, ``own`` itself for the player;
    ``scores[u]`` is the player's score against team ``u`` (ignored for the player's own team).
    ``strategy`` is never ``auto``: the caller resolves it first. ``shares``: each
    participant's share of the match (None: everyone played all of it), ``own_share`` the
    player's own and ``taken`` the share of the result they take (None: ``own_share``; a
    forced loss is taken whole) (:func:`part_time_results`).
    """
    if shares is not None:
        return part_time_results(
            strategy, own, own_share, team_index, teams, shares, scores, size_edge, taken
        )
    results: list[Result] = []
    mine = teams[team_index]
    n = len(mine)
    if strategy is TeamStrategy.SHARED:
        return _shared(own, team_index, teams, scores, size_edge)
    if strategy is TeamStrategy.INDIVIDUAL:
        for u, team in enumerate(teams):
            if u != team_index:
                s = scores[u]
                edge = size_advantage(size_edge, n, len(team))
                results.extend(Result(m.rating - edge, m.deviation, s) for m in team)
        return results
    if strategy is TeamStrategy.COMPOSITE_OPPONENT:
        for u, team in enumerate(teams):
            if u != team_index:
                opp = composite(team)
                edge = size_advantage(size_edge, n, len(team))
                results.append(Result(opp.rating - edge, opp.deviation, scores[u]))
        return results
    if strategy is not TeamStrategy.COMPOSITE_TEAM:
        raise ValueError(f"the team strategy {strategy.value!r} is resolved before rating")
    # The virtual opponent keeps the gap between the teams, measured from the player's own
    # rating. Written as opp + (own - mine) so that a one-player team (own is mine) meets the
    # opposing rating exactly, bit for bit, as in a plain 1v1.
    shift = own.rating - composite(mine).rating
    for u, team in enumerate(teams):
        if u != team_index:
            opp = composite(team)
            edge = size_advantage(size_edge, n, len(team))
            results.append(Result(opp.rating + shift - edge, opp.deviation, scores[u]))
    return results


def _shared(
    own: SkillLike,
    team_index: int,
    teams: Sequence[Sequence[SkillLike]],
    scores: Sequence[float],
    size_edge: float,
) -> list[Result]:
    """``shared``: against each opposing team, one result of weight ``scale / n_mine``.

    The team logit is ``scale * (mean_mine - mean_theirs + advantage)``; the player's rating
    enters it with the coefficient ``scale / n_mine`` (the result's weight). Written as one
    opponent the algorithm meets with that weight, its rating is ``own - n_mine * gap``, that
    is ``n_mine * (mean_theirs - advantage) - sum(teammates)``, and its deviation the spread of
    everyone else's part of the gap, ``n_mine`` times the deviation of that part; a one-player
    team meets the plain opposing player, bit for bit.
    """
    mine = teams[team_index]
    n = len(mine)
    # The teammates' part: the team's sums less the player's own entry.
    mates_sum = sum(m.rating for m in mine) - own.rating
    mates_var = max(sum(m.deviation * m.deviation for m in mine) - own.deviation**2, 0.0)
    results: list[Result] = []
    for u, team in enumerate(teams):
        if u == team_index:
            continue
        k = len(team)
        edge = size_advantage(size_edge, n, k)
        if n == 1 and k == 1:
            results.append(Result(team[0].rating - edge, team[0].deviation, scores[u]))
            continue
        theirs = composite(team).rating
        their_var = sum(m.deviation * m.deviation for m in team)
        spread = math.sqrt(mates_var + (n / k) ** 2 * their_var)
        rating = n * (theirs - edge) - mates_sum
        results.append(Result(rating, spread, scores[u], team_scale(n, k) / n))
    return results


def team_pair(
    strategy: TeamStrategy,
    team_a: Sequence[SkillLike],
    team_b: Sequence[SkillLike],
    size_edge: float = 0.0,
    shares: tuple[Sequence[float], Sequence[float]] | None = None,
) -> tuple[SkillLike, SkillLike]:
    """Two virtual players whose 1v1 is the match between the teams as ``strategy`` sees it:
    what win probabilities and match quality are computed from.

    The composite strategies: each team's composite player, team ``a`` moved by its size
    advantage. ``shared``: the gap between the mean ratings (with the advantage) and each team's
    deviation of the mean, both times :func:`team_scale`; only the gap counts, so team ``b``
    sits at 0. ``shares``: both teams' members' shares of the match (part-time play).
    """
    if shares is not None:
        return _part_time_pair(strategy, team_a, team_b, size_edge, *shares)
    advantage = size_advantage(size_edge, len(team_a), len(team_b))
    if strategy is TeamStrategy.SHARED and (len(team_a) > 1 or len(team_b) > 1):
        scale = team_scale(len(team_a), len(team_b))
        a = composite(team_a).rating + advantage
        b = composite(team_b).rating
        spread_a = math.sqrt(sum(m.deviation * m.deviation for m in team_a)) / len(team_a)
        spread_b = math.sqrt(sum(m.deviation * m.deviation for m in team_b)) / len(team_b)
        return Skill(scale * (a - b), scale * spread_a), Skill(0.0, scale * spread_b)
    a_skill = composite(team_a)
    if advantage != 0.0:
        a_skill = Skill(a_skill.rating + advantage, a_skill.deviation, a_skill.volatility)
    return a_skill, composite(team_b)


def _weighted(members: Sequence[SkillLike], shares: Sequence[float]) -> Skill:
    """:func:`composite` with each member weighted by their share of the match."""
    total = sum(shares)
    vols = [
        (m.volatility, w) for m, w in zip(members, shares, strict=True) if m.volatility is not None
    ]
    vol_total = sum(w for _, w in vols)
    return Skill(
        sum(m.rating * w for m, w in zip(members, shares, strict=True)) / total,
        sum(m.deviation * w for m, w in zip(members, shares, strict=True)) / total,
        sum(v * w for v, w in vols) / vol_total if vols else None,
    )


def part_time_results(
    strategy: TeamStrategy,
    own: SkillLike,
    own_share: float,
    team_index: int,
    teams: Sequence[Sequence[SkillLike]],
    shares: Shares,
    scores: Sequence[float],
    size_edge: float,
    taken: float | None = None,
) -> list[Result]:
    """:func:`results_for` with part-time play: the opposing sides at their members' ratings
    averaged by share, the size edge between the sides' summed shares, and every result
    carrying ``taken`` of its information (None: ``own_share``, the player's weight in their
    own side; ``individual``: times the opponent's share)."""
    take = own_share if taken is None else taken
    if strategy is TeamStrategy.SHARED:
        return _shared_part_time(own, own_share, take, team_index, teams, shares, scores, size_edge)
    mine = sum(shares[team_index])
    shift = 0.0
    if strategy is TeamStrategy.COMPOSITE_TEAM:
        shift = own.rating - _weighted(teams[team_index], shares[team_index]).rating
    elif strategy not in (TeamStrategy.COMPOSITE_OPPONENT, TeamStrategy.INDIVIDUAL):
        raise ValueError(f"the team strategy {strategy.value!r} is resolved before rating")
    results: list[Result] = []
    for u, team in enumerate(teams):
        if u == team_index:
            continue
        edge = size_advantage(size_edge, mine, sum(shares[u]))
        if strategy is TeamStrategy.INDIVIDUAL:
            results.extend(
                Result(m.rating - edge, m.deviation, scores[u], 1.0, take * w)
                for m, w in zip(team, shares[u], strict=True)
            )
            continue
        opp = _weighted(team, shares[u])
        results.append(Result(opp.rating + shift - edge, opp.deviation, scores[u], 1.0, take))
    return results


def _shared_part_time(
    own: SkillLike,
    own_share: float,
    take: float,
    team_index: int,
    teams: Sequence[Sequence[SkillLike]],
    shares: Shares,
    scores: Sequence[float],
    size_edge: float,
) -> list[Result]:
    """``shared`` with part-time play: the team logit is ``scale * (M_mine - M_theirs +
    advantage)`` with ``M`` the means weighted by share and the advantage at the summed shares;
    the player meets one opponent per opposing team with the whole-match weight ``scale / n``
    (``n`` the line-up's count), rated so that the result's logit is the team logit, and takes
    ``take`` of the result (module docstring); ``own_share`` is their weight in their side."""
    mine = teams[team_index]
    mine_shares = shares[team_index]
    n = len(mine)
    total = sum(mine_shares)
    # The side's share-weighted sum less the player's own part, and its variance likewise.
    mates_sum = sum(m.rating * w for m, w in zip(mine, mine_shares, strict=True))
    mates_sum -= own.rating * own_share
    mates_var = max(_spread(mine, mine_shares) ** 2 - (own.deviation * own_share) ** 2, 0.0)
    results: list[Result] = []
    for u, team in enumerate(teams):
        if u == team_index:
            continue
        their_shares = shares[u]
        k = len(team)
        their_total = sum(their_shares)
        edge = size_advantage(size_edge, total, their_total)
        theirs = sum(m.rating * w for m, w in zip(team, their_shares, strict=True)) / their_total
        their_var = _spread(team, their_shares) ** 2
        # logit = (scale / n) * (own - rating): rating = own - n * (M_mine - theirs + edge).
        ratio = n / total
        rating = own.rating - ratio * (own.rating * own_share + mates_sum) + n * (theirs - edge)
        spread = math.sqrt(ratio * ratio * mates_var + (n / their_total) ** 2 * their_var)
        results.append(Result(rating, spread, scores[u], team_scale(n, k) / n, take))
    return results


def _part_time_pair(
    strategy: TeamStrategy,
    team_a: Sequence[SkillLike],
    team_b: Sequence[SkillLike],
    size_edge: float,
    shares_a: Sequence[float],
    shares_b: Sequence[float],
) -> tuple[SkillLike, SkillLike]:
    """:func:`team_pair` with part-time play: each side at its share-weighted means, the size
    edge between the summed shares; ``shared`` scaled by the line-ups' counts."""
    total_a, total_b = sum(shares_a), sum(shares_b)
    advantage = size_advantage(size_edge, total_a, total_b)
    a = _weighted(team_a, shares_a)
    b = _weighted(team_b, shares_b)
    if strategy is TeamStrategy.SHARED:
        scale = team_scale(len(team_a), len(team_b))
        spread_a = _spread(team_a, shares_a) / total_a
        spread_b = _spread(team_b, shares_b) / total_b
        gap = a.rating + advantage - b.rating
        return Skill(scale * gap, scale * spread_a), Skill(0.0, scale * spread_b)
    return Skill(a.rating + advantage, a.deviation, a.volatility), b


def _spread(members: Sequence[SkillLike], shares: Sequence[float]) -> float:
    """The deviation of a side's share-weighted sum of ratings."""
    return math.sqrt(sum((m.deviation * w) ** 2 for m, w in zip(members, shares, strict=True)))
