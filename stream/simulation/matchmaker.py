"""The simulated matchmaker's own rating and how it splits a match's players into teams.

The matchmaker does not know true skill: it keeps an Elo rating per player, fed by the reported
results, and every newcomer enters at the population mean. Matches it forms are balanced on
that estimate, so they are as uneven as its errors: a newcomer who is weaker than the mean, a
player whose skill drifted, a team whose strength the mean rating misjudges.
"""

from __future__ import annotations

from collections.abc import Sequence


def elo_changes(ratings: Sequence[float], ranks: Sequence[int], k: float) -> list[float]:
    """The change of every member of each team, from the teams' mean ratings (Elo, 400 scale).

    Each team plays every other once; the changes are averaged over the opponents, so a
    free-for-all moves a rating as far as one duel of the same surprise.
    """
    count = len(ratings)
    changes = []
    for t in range(count):
        surprise = 0.0
        for u in range(count):
            if u != t:
                expected = 1.0 / (1.0 + 10.0 ** ((ratings[u] - ratings[t]) / 400.0))
                actual = 1.0 if ranks[t] < ranks[u] else 0.0 if ranks[t] > ranks[u] else 0.5
                surprise += actual - expected
        changes.append(k * surprise / (count - 1))
    return changes


def balance(
    group: Sequence[int], others: Sequence[int], estimates: Sequence[float], sizes: Sequence[int]
) -> list[list[int]]:
    """Teams of ``sizes`` players: ``group`` (a party) together in the first, the others spread.

    The others go best first, each to the team with room whose mean would be lowest if its
    empty places were filled with the match's mean estimate: for teams of equal size without a
    party this is the snake draft 0, 1, 1, 0, 0, 1, ...
    """
    players = [*group, *others]
    fill = sum(estimates[p] for p in players) / len(players)
    teams: list[list[int]] = [list(group)] + [[] for _ in sizes[1:]]
    sums = [sum(estimates[p] for p in group)] + [0.0] * (len(sizes) - 1)

    def projected_mean(t: int) -> float:
        return (sums[t] + (sizes[t] - len(teams[t])) * fill) / sizes[t]

    for player in sorted(others, key=lambda p: (-estimates[p], p)):
        open_teams = [t for t in range(len(sizes)) if len(teams[t]) < sizes[t]]
        team = min(open_teams, key=lambda t: (projected_mean(t), t))
        teams[team].append(player)
        sums[team] += estimates[player]
    return teams
