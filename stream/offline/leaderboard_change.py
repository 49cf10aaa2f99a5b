"""How a leaderboard would change: the final ratings of one replay against another's.

What `skillstream replay --leaderboard-change` prints before a re-rate with a new modes file or
a batch of corrections is applied: per mode, how many players move and by how much, and the new
top of the board with each player's place and score before. Pure: two sets of final states in,
figures and lines out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from stream.ratings.skill import PlayerState

__all__ = ["BOARDS", "ModeChange", "change_lines", "leaderboard_changes"]

# The boards of the cache (stream/cache): what each ranks by.
BOARDS = ("rank_points", "rating", "conservative")
CONSERVATIVE_K = 3.0


@dataclass(frozen=True, slots=True)
class Placed:
    """A player on one board: 1-based place and score; None when not on it."""

    place: int | None
    score: float | None


@dataclass(frozen=True, slots=True)
class ModeChange:
    """One mode's board before and after: players on each side, how many ratings moved (by
    more than half a point), the mean and largest move, and the new top with its old places."""

    mode: str
    players_before: int
    players_after: int
    moved: int
    mean_move: float
    largest_move: float
    top: list[tuple[str, Placed, Placed]]


def score(state: PlayerState, board: str) -> float:
    if board == "rank_points":
        return float(state.rank_points)
    if board == "rating":
        return state.rating
    return state.rating - CONSERVATIVE_K * state.deviation


def leaderboard_changes(
    before: Mapping[str, Mapping[str, PlayerState]],
    after: Mapping[str, Mapping[str, PlayerState]],
    board: str = "rank_points",
    top: int = 20,
) -> list[ModeChange]:
    """Every mode of either side, by name. Places rank by score from the top, then player id,
    as the cache's boards do."""
    changes = []
    for mode in sorted(set(before) | set(after)):
        old, new = before.get(mode, {}), after.get(mode, {})
        old_places = _places(old, board)
        new_order = sorted(new, key=lambda p: (-score(new[p], board), p))
        moves = [abs(new[p].rating - old[p].rating) for p in new if p in old]
        gone = [p for p in old if p not in new]
        moved = sum(1 for m in moves if m > 0.5) + len(gone) + sum(1 for p in new if p not in old)
        listed = []
        for place, pid in enumerate(new_order[:top], start=1):
            was = old_places.get(pid)
            before_place = (
                Placed(None, None) if was is None else Placed(was, score(old[pid], board))
            )
            listed.append((pid, before_place, Placed(place, score(new[pid], board))))
        changes.append(
            ModeChange(
                mode,
                len(old),
                len(new),
                moved,
                sum(moves) / len(moves) if moves else 0.0,
                max(moves, default=0.0),
                listed,
            )
        )
    return changes


def change_lines(changes: list[ModeChange], board: str) -> list[str]:
    """The changes as a table per mode, for people."""
    lines: list[str] = []
    for change in changes:
        lines.append(
            f"mode {change.mode}: {change.players_after:,} players ({change.players_before:,} "
            f"before); {change.moved:,} change (mean move {change.mean_move:.1f} points, "
            f"largest {change.largest_move:.1f})"
        )
        lines.append(f"  {'new':>5} {'old':>5}  {'player':<24} {board + ' before -> after':>30}")
        for pid, old, new in change.top:
            was = "-" if old.place is None else str(old.place)
            before = "-" if old.score is None else f"{old.score:.1f}"
            lines.append(f"  {new.place:>5} {was:>5}  {pid:<24} {before:>14} -> {new.score:<13.1f}")
    return lines


def _places(table: Mapping[str, PlayerState], board: str) -> dict[str, int]:
    order = sorted(table, key=lambda p: (-score(table[p], board), p))
    return {pid: place for place, pid in enumerate(order, start=1)}
