"""Who a ban's refund undoes (stream.corrections.effects.refund_for, asked by replay and by a
re-rating worker's player side alike): the banned player and every player whose side placed
below theirs, in the ban's mode and window; nobody else."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from stream.corrections.effects import Refund, refund_for
from stream.corrections.fields import Audit

AUDIT = Audit("ban-1", "ops", 0.0, "aimbot")
REFUND = Refund("x", "ranked", 100.0, 200.0, 3, AUDIT)
# Three sides, free-for-all: x's side second.
TEAMS = (("a", "b"), ("x", "y"), ("c",))
RANKS = (0, 1, 2)


def who(teams: tuple[tuple[str, ...], ...], ranks: tuple[int, ...], at: float = 150.0) -> set[str]:
    return {
        p
        for team in teams
        for p in team
        if refund_for([REFUND], "ranked", p, teams, ranks, at) is not None
    }


def test_the_banned_and_the_sides_they_beat_are_refunded() -> None:
    assert who(TEAMS, RANKS) == {"x", "c"}
    # A draw with the banned side is kept; first, they beat every other side.
    assert who(TEAMS, (1, 1, 1)) == {"x"}
    assert who(TEAMS, (2, 0, 1)) == {"x", "a", "b", "c"}


def test_outside_the_window_or_the_mode_or_without_the_banned_nobody_is() -> None:
    assert who(TEAMS, RANKS, at=99.9) == set()
    assert who(TEAMS, RANKS, at=200.0) == set()
    assert who(TEAMS, RANKS, at=100.0) == {"x", "c"}
    assert refund_for([REFUND], "casual", "c", TEAMS, RANKS, 150.0) is None
    assert who((("a",), ("c",)), (0, 1)) == set()


def test_the_first_refund_in_the_files_order_is_the_one_said() -> None:
    later = Refund("y", "ranked", 0.0, 1000.0, 9, Audit("ban-2", "ops", 0.0, "boosting"))
    assert refund_for([REFUND, later], "ranked", "c", TEAMS, RANKS, 150.0) is REFUND
    assert refund_for([later, REFUND], "ranked", "c", TEAMS, RANKS, 150.0) is later
    assert refund_for([REFUND, later], "ranked", "y", TEAMS, RANKS, 150.0) is later


@given(
    st.lists(st.integers(0, 3), min_size=2, max_size=5),
    st.integers(0, 4),
)
def test_teammates_are_never_refunded_and_a_refund_is_decided_by_rank_alone(
    ranks: list[int], banned_side: int
) -> None:
    teams = tuple((f"p{i}", f"q{i}") for i in range(len(ranks)))
    side = banned_side % len(ranks)
    refund = Refund(f"p{side}", "m", 0.0, 10.0, 1, AUDIT)
    for i, team in enumerate(teams):
        for p in team:
            found = refund_for([refund], "m", p, teams, ranks, 5.0) is not None
            if p == refund.player:
                assert found
            elif i == side:
                assert not found
            else:
                assert found == (ranks[i] > ranks[side])
