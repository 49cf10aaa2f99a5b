"""The naive Faust app's rating step: Glicko-2 for one game, as the yardstick rates a 1v1."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from stream.bench.naive_faust import CONFIG, rate_1v1
from stream.ratings import glicko2
from stream.ratings.skill import Skill

ratings = st.floats(1200.0, 1800.0)
deviations = st.floats(40.0, 350.0)


@given(ratings, deviations, ratings, deviations)
def test_the_winner_gains_what_the_loser_would_by_swapping(
    ra: float, da: float, rb: float, db: float
) -> None:
    a, b = Skill(ra, da, 0.06), Skill(rb, db, 0.06)
    won_a, lost_b = rate_1v1(a, b, 1.0)
    lost_b2, won_a2 = rate_1v1(b, a, 0.0)
    assert won_a.rating > a.rating and lost_b.rating < b.rating
    assert (won_a, lost_b) == (won_a2, lost_b2)


def test_two_new_players_move_apart_symmetrically() -> None:
    new = glicko2.initial(CONFIG)
    winner, loser = rate_1v1(new, new, 1.0)
    assert winner.rating - 1500.0 == 1500.0 - loser.rating > 100.0
    drawn_a, drawn_b = rate_1v1(new, new, 0.5)
    assert drawn_a.rating == drawn_b.rating == 1500.0
