"""Individual performance (stream/ratings/performance.py and its use in the engine): a
member's share of their side's score moves them within the side, bounded, the side's total
unchanged, off unless the mode says so."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream.config.modes import ModesError, parse_modes
from stream.ratings.engine import MatchView, rate_match, rate_player
from stream.ratings.explain import Explanation, describe, explain
from stream.ratings.modeconfig import ModeConfig
from stream.ratings.performance import PerformanceConfig, performance_shift
from stream.ratings.ranges import ConfigError
from stream.ratings.skill import PlayerState, PlayerStats

SIDE = ("a", "b", "c")


def stats(**scores: tuple[float, float]) -> dict[str, PlayerStats]:
    return {pid: PlayerStats(score, seconds) for pid, (score, seconds) in scores.items()}


def test_a_member_who_doubles_the_others_rate_gains_within_the_side() -> None:
    # Rates 2, 1, 1 a second: log2 of each over the mean (4/3), centred: 2/3, -1/3, -1/3.
    config = PerformanceConfig(points=3.0)
    found = stats(a=(1200.0, 600.0), b=(600.0, 600.0), c=(300.0, 300.0))
    moves = [performance_shift(config, SIDE, found, p) for p in SIDE]
    assert moves == pytest.approx([2.0, -1.0, -1.0], abs=1e-12)


def test_no_move_when_off_alone_or_without_stats() -> None:
    found = stats(a=(10.0, 60.0), b=(20.0, 60.0))
    assert performance_shift(PerformanceConfig(), ("a", "b"), found, "a") == 0.0
    on = PerformanceConfig(points=5.0)
    assert performance_shift(on, ("a",), found, "a") == 0.0
    assert performance_shift(on, ("a", "b"), None, "a") == 0.0
    assert performance_shift(on, ("a", "b", "c"), found, "c") == 0.0
    # Only one member with stats: nobody to compare with.
    assert performance_shift(on, ("a", "z"), found, "a") == 0.0
    # Nobody scored: no share to give out.
    assert performance_shift(on, ("a", "b"), stats(a=(0.0, 60.0), b=(-5.0, 60.0)), "a") == 0.0


def test_a_score_of_nothing_is_bounded_by_the_limit() -> None:
    config = PerformanceConfig(points=10.0, limit=2.0)
    found = stats(a=(0.0, 600.0), b=(1e9, 600.0))
    # a: floored at 2 doublings below the mean, b: capped at 2 above... less the centre.
    low = performance_shift(config, ("a", "b"), found, "a")
    high = performance_shift(config, ("a", "b"), found, "b")
    assert low == pytest.approx(-high)
    assert -2 * 2.0 * 10.0 <= low < 0.0 < high <= 2 * 2.0 * 10.0


@settings(max_examples=300, deadline=None)
@given(
    scores=st.lists(
        st.tuples(st.floats(-100.0, 1e6), st.floats(1.0, 3600.0)), min_size=2, max_size=8
    ),
    points=st.floats(0.1, 100.0),
    limit=st.floats(0.5, 10.0),
)
def test_the_sides_moves_add_up_to_nothing_and_stay_bounded(
    scores: list[tuple[float, float]], points: float, limit: float
) -> None:
    side = tuple(f"p{i}" for i in range(len(scores)))
    found = {p: PlayerStats(s, t) for p, (s, t) in zip(side, scores, strict=True)}
    config = PerformanceConfig(points=points, limit=limit)
    moves = [performance_shift(config, side, found, p) for p in side]
    assert abs(math.fsum(moves)) <= 1e-9 * points * len(side)
    assert all(abs(m) <= 2 * limit * points + 1e-9 for m in moves)
    # Direction: a higher score rate never moves a member less.
    order = sorted(range(len(side)), key=lambda i: max(scores[i][0], 0.0) / scores[i][1])
    ranked = [moves[i] for i in order]
    assert all(x <= y + 1e-9 for x, y in itertools.pairwise(ranked))


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"points": -1.0}, "points must be"),
        ({"points": 200.0}, "points must be"),
        ({"limit": 0.0}, "limit must be"),
    ],
)
def test_the_settings_are_checked(table: dict[str, float], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        PerformanceConfig(**table)


def test_a_zonestats_mode_refuses_it_with_one_line() -> None:
    data = {"modes": {"z": {"algorithm": "zonestats", "performance": {"points": 3.0}}}}
    with pytest.raises(ModesError, match=r"\[modes.z.performance\] zonestats rates from the"):
        parse_modes(data, "m.toml")


# --- in the engine ------------------------------------------------------------------------


def mode(points: float) -> ModeConfig:
    return parse_modes({"modes": {"m": {"performance": {"points": points}}}}).get("m")


STATES = {
    p: PlayerState(r, 110.0, 0.06, games=40, last_played=0.0)
    for p, r in zip("abcdef", (1500.0, 1520.0, 1480.0, 1510.0, 1490.0, 1530.0), strict=True)
}
TEAMS = (("a", "b", "c"), ("d", "e", "f"))
SCORES = stats(a=(900.0, 600.0), b=(300.0, 600.0), c=(300.0, 600.0), d=(5.0, 600.0), e=(5.0, 600.0))


def test_the_side_moves_as_without_it_and_shares_it_by_score() -> None:
    view = MatchView(TEAMS, (0, 1), 100.0, SCORES)
    plain = rate_match(mode(0.0), view, STATES)
    scored = rate_match(mode(4.0), view, STATES)
    for team in TEAMS:
        total = sum(scored[p].state.rating - plain[p].state.rating for p in team)
        assert total == pytest.approx(0.0, abs=1e-9)
    # a tripled b's and c's rate: more of the win; f has no stats and moves as without it.
    assert scored["a"].state.rating > plain["a"].state.rating
    assert scored["b"].state.rating < plain["b"].state.rating
    assert scored["f"].state == plain["f"].state
    assert scored["a"].performance == pytest.approx(
        4.0 * (math.log2(1.8) - math.log2(1.8 * 0.6**2) / 3)
    )
    assert scored["d"].state == plain["d"].state  # d and e scored alike: no move


def test_a_forced_loss_ignores_the_scores() -> None:
    view = MatchView(TEAMS, (1, 0), 100.0, SCORES)
    forced = rate_player(mode(4.0), "a", STATES["a"], view, STATES, forced_score=0.0)
    assert forced.performance == 0.0
    assert forced.state == rate_player(mode(0.0), "a", STATES["a"], view, STATES, 0.0).state


def test_the_move_is_explained_after_the_step() -> None:
    m = mode(4.0)
    view = MatchView(TEAMS, (0, 1), 100.0, SCORES)
    update = rate_match(m, view, STATES)["b"]
    why = explain(m, STATES["b"], update, 100.0)
    assert why.performance == update.performance < 0.0
    assert why.step is not None
    change = update.state.rating - STATES["b"].rating
    assert why.step * (why.score - why.expected) + why.performance == pytest.approx(change)
    assert Explanation.from_json(why.to_json()) == why
    words = " ".join(
        describe(why, player_id="b", match_id="m", outcome="win", before=None, after=(1.0, 1.0))
    )
    assert f"below their side's typical one: {why.performance:+.1f} points within" in words
