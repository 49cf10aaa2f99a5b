"""How a started match ends for one player, by event time: the rule the live pipeline and
``skillstream replay`` share (docs/event-time.md, "How each rule meets a backlog").

Three things can settle a player's match, each at an event time:
- its result, at the finish;
- abandonment, a grace period after the player started a newer match (the *superseding*
  start; the match is then scored at that start, as a loss);
- a timeout, the mode's timeout after the match's own start.

The earliest of them decides; on a tie the result wins, then abandonment. Because it compares
event times only, the outcome is the same whatever order a worker reads the events in: a result
read before the abandonment was decided but timed after it still loses to it, as it would if it
had been read later. A match whose result is not known is decided by abandonment or timeout only
once event time (``now``) has passed that deadline.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from enum import Enum
from typing import NamedTuple


class Settled(Enum):
    RESULT = "result"
    ABANDONED = "abandoned"
    TIMEOUT = "timeout"


class Fate(NamedTuple):
    """How the match ends for the player, and the event time its rating carries."""

    how: Settled
    at: float


def fate(
    started_at: float,
    finished_at: float | None,
    superseded_at: float | None,
    *,
    grace_seconds: float,
    timeout_seconds: float,
    now: float | None = None,
) -> Fate | None:
    """The player's fate in a match started at ``started_at``; None: not decided yet.

    ``finished_at``: the result's time (None: no result known). ``superseded_at``: the start of
    the player's next match in the order of play (None: none known). ``now``: how far event
    time has certainly progressed (None: unknown), which a decision without a result waits for.
    """
    timeout_at = started_at + timeout_seconds
    # (decision time, precedence on a tie, fate)
    first = (timeout_at, 2, Fate(Settled.TIMEOUT, timeout_at))
    if superseded_at is not None:
        first = min(
            first, (superseded_at + grace_seconds, 1, Fate(Settled.ABANDONED, superseded_at))
        )
    if finished_at is not None:
        first = min(first, (finished_at, 0, Fate(Settled.RESULT, finished_at)))
    decided_at, _, result = first
    if finished_at is None and (now is None or now < decided_at):
        return None
    return result


def may_be_superseded(started_at: float, finished_at: float, grace_seconds: float) -> bool:
    """Whether a newer start of a player could still abandon a match with this result: only
    one before ``finished_at - grace_seconds`` can, and every newer start is at or after
    ``started_at``. False for every match shorter than the grace period."""
    return started_at < finished_at - grace_seconds


def superseding_starts(
    matches: Iterable[tuple[str, float, Sequence[Sequence[str]]]],
) -> dict[tuple[str, str], float]:
    """For (match id, start, teams) in the order of play, each (player, match id) whose player
    has a later match: that match's start (what the live pipeline's abandon request carries)."""
    last: dict[str, str] = {}
    superseded: dict[tuple[str, str], float] = {}
    for match_id, started_at, teams in matches:
        for team in teams:
            for player_id in team:
                previous = last.get(player_id)
                if previous is not None:
                    superseded[(player_id, previous)] = started_at
                last[player_id] = match_id
    return superseded
