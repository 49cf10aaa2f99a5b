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
    parties: Sequence[Sequence[int]],
    solo: Sequence[int],
    estimates: Sequence[float],
    sizes: Sequence[int],
) -> list[list[int]]:
    """Teams of ``sizes`` players: party i (at most one per team) in team i, the solo spread.

    The solo players go best first, each to the team with room whose mean would be lowest if
    its empty places were filled with the match's mean estimate: for teams of equal size
    without parties this is the snake draft 0, 1, 1, 0, 0, 1, ...
    """
    teams: list[list[int]] = [
        list(parties[t]) if t < len(parties) else [] for t in range(len(sizes))
    ]
    players = [p for team in teams for p in team] + list(solo)
    fill = sum(estimates[p] for p in players) / len(players)
    sums = [sum(estimates[p] for p in team) for team in teams]

    def projected_mean(t: int) -> float:
        return (sums[t] + (sizes[t] - len(teams[t])) * fill) / sizes[t]

    for player in sorted(solo, key=lambda p: (-estimates[p], p)):
        open_teams = [t for t in range(len(sizes)) if len(teams[t]) < sizes[t]]
        team = min(open_teams, key=lambda t: (projected_mean(t), t))
        teams[team].append(player)
        sums[team] += estimates[player]
    return teams
