"""Part-time play: the share of a match each participant played, from their stats.

A match may say how long each player played (``stats[player].seconds``). A player's share is
their seconds over the longest anyone in the match played: the match's length as the fleet
measured it, in the same units as the seconds themselves. The match's own start and finish
are not used: a start is often dated at the queue's pop or the lobby (every player would then
look part-time), a finish-only producer sends no start at all, and replay reads the same
stats the live worker gets, so both compute the same shares (docs/decisions.md, "Part-time
play").

Only team matches (a side of two or more) are read so: in a duel or a free-for-all a player's
seconds are more often their result than their presence (a race's time, a battle royale's
survival), and a player who leaves one is a quitter.

A share is bounded below by :data:`MIN_SHARE` (a player credited with a second of a half-hour
match still belongs to the match, and a side is never empty) and above by 1. A player the stats
leave out counts as having played as long as the longest listed (so list every player, or
at least one who played the whole match). When every participant's share is 1 the match has no
part-time play and :func:`played_shares` says None: the engine then rates it exactly as a match
without stats, bit for bit (the shared histories carry no stats).

How the shares are used (stream.ratings.teams): a side's size for the size edge is the sum of
its shares, and a player's result carries their share of its information (``Result.share``);
the composite strategies average a side's ratings by share, ``shared`` takes the
share-weighted means and sums, and ``individual`` meets each opposing player at their own
rating with the result scaled by that player's share too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from stream.ratings.skill import PlayerStats

__all__ = ["MIN_SHARE", "Shares", "played_shares"]

# The smallest share a participant counts for: below it a result would carry next to no
# information and a side of such players would have no strength at all.
MIN_SHARE = 0.05

# Per team, per member (in the line-up's order): the share of the match they played.
Shares = tuple[tuple[float, ...], ...]


def played_shares(
    teams: Sequence[Sequence[str]], stats: Mapping[str, PlayerStats] | None
) -> Shares | None:
    """Each participant's share of the match (module docstring), or None when nobody played
    less than the whole of it (no stats, no seconds, or everyone's seconds equal) or the match
    has no team (every side one player)."""
    if not stats or all(len(team) == 1 for team in teams):
        return None
    longest = 0.0
    for team in teams:
        for pid in team:
            found = stats.get(pid)
            if found is not None and found.seconds > longest:
                longest = found.seconds
    if not longest > 0.0:
        return None
    partial = False
    shares: list[tuple[float, ...]] = []
    for team in teams:
        row: list[float] = []
        for pid in team:
            found = stats.get(pid)
            if found is None or not found.seconds < longest:
                row.append(1.0)
                continue
            partial = True
            row.append(max(found.seconds / longest, MIN_SHARE))
        shares.append(tuple(row))
    return tuple(shares) if partial else None
