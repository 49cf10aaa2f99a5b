"""Who gets rated, and how, when a match ends: the quit rule shared by live and offline rating.

INVERSUS: a player who quits is scored a loss; the match of everyone else is cancelled (no
automatic win). A mode may instead give the others their normal result (``QuitPolicy.NORMAL``).
"""

from __future__ import annotations

from collections.abc import Collection
from enum import StrEnum

from stream.ratings.modeconfig import ModeConfig, QuitPolicy


class Outcome(StrEnum):
    WIN = "win"
    LOSS = "loss"
    DRAW = "draw"
    ABANDONED = "abandoned"
    TIMEOUT = "timeout"


def outcome_of(score: float) -> Outcome:
    """A score's label: in free-for-all, beating more teams than one lost to counts as a win."""
    if score > 0.5:
        return Outcome.WIN
    if score < 0.5:
        return Outcome.LOSS
    return Outcome.DRAW


def rated_players(
    mode: ModeConfig, teams: tuple[tuple[str, ...], ...], quitters: Collection[str]
) -> dict[str, float | None]:
    """Players to rate, each with a forced score (None: from the ranks). Omitted: cancelled."""
    if not quitters:
        return {pid: None for team in teams for pid in team}
    cancel = mode.quits is QuitPolicy.CANCEL
    rated: dict[str, float | None] = {}
    for team in teams:
        for pid in team:
            if pid in quitters:
                rated[pid] = 0.0
            elif not cancel:
                rated[pid] = None
    return rated
