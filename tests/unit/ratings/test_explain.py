"""Why a rating moved (stream.ratings.explain): the terms against the published formulas, each
term present exactly when it acted, the compact form's round trip and the wording."""

from __future__ import annotations

import math

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from stream.ratings.elo import EloConfig
from stream.ratings.engine import MatchView, rate_match, rate_player, season_entered
from stream.ratings.experience import ExperienceConfig
from stream.ratings.explain import Explanation, describe, explain
from stream.ratings.glicko1 import Glicko1Config
from stream.ratings.glicko2 import CENTER, SCALE, Glicko2Config
from stream.ratings.modeconfig import ModeConfig
from stream.ratings.seasons import SeasonsConfig
from stream.ratings.skill import PlayerState
from stream.ratings.teams import TeamStrategy

DAY = 86400.0
T0 = 1_700_000_000.0
GLICKO2 = ModeConfig("ranked")
FRESH = PlayerState(1500.0, 350.0, 0.06)


def duel(at: float = T0, ranks: tuple[int, int] = (0, 1)) -> MatchView:
    return MatchView((("a",), ("b",)), ranks, at)


def g(phi: float) -> float:
    return 1.0 / math.sqrt(1.0 + 3.0 * phi * phi / math.pi**2)


def test_the_published_glicko2_game_explained() -> None:
    # Two fresh 1500/350 players, a wins: 1662.3109 (skillratings, Glickman's example values).
    # Expected 0.5, scored 1: the 162.31 points are half a unit of surprise at 324.62 a unit.
    update = rate_match(GLICKO2, duel(), {"a": FRESH, "b": FRESH})["a"]
    why = explain(GLICKO2, FRESH, update, T0)
    assert why.expected == update.expected_score == 0.5
    assert why.score == 1.0
    assert why.step == pytest.approx(2 * 162.3109, abs=2e-4)
    assert (why.reset, why.inactive, why.offset, why.bound, why.correction) == (None,) * 5


@given(
    mine=st.floats(1000.0, 2000.0),
    theirs=st.floats(1000.0, 2000.0),
    my_dev=st.floats(40.0, 350.0),
    their_dev=st.floats(40.0, 350.0),
    ranks=st.sampled_from([(0, 1), (1, 0), (0, 0)]),
)
def test_the_glicko2_step_is_the_published_formula(
    mine: float, theirs: float, my_dev: float, their_dev: float, ranks: tuple[int, int]
) -> None:
    """mu' = mu + phi'^2 g(phi_j) (s - E): one unit of surprise is worth SCALE phi'^2 g(phi_j),
    always positive (a better result than expected never lowers a rating)."""
    a = PlayerState(mine, my_dev, 0.06, 0, 10, T0)
    b = PlayerState(theirs, their_dev, 0.06, 0, 10, T0)
    update = rate_match(GLICKO2, duel(ranks=ranks), {"a": a, "b": b})["a"]
    why = explain(GLICKO2, a, update, T0)
    assert why.score == {(0, 1): 1.0, (1, 0): 0.0, (0, 0): 0.5}[ranks]
    # The expected score the update used: the opponent's uncertainty only (Glickman's E).
    e = 1.0 / (1.0 + math.exp(-g(their_dev / SCALE) * (mine - theirs) / SCALE))
    assert why.expected == pytest.approx(e, rel=1e-12)
    if why.step is None:
        assert abs(why.score - e) <= 1e-9
        return
    phi = update.state.deviation / SCALE
    assert why.bound is None
    assert why.step == pytest.approx(SCALE * phi * phi * g(their_dev / SCALE), rel=1e-9)
    assert why.step > 0.0
    assert update.state.rating == pytest.approx(
        mine + why.step * (why.score - why.expected), abs=1e-9
    )


@given(gap=st.floats(-600.0, 600.0), ranks=st.sampled_from([(0, 1), (1, 0), (0, 0)]))
# Found by CI: a draw 1e-6 points apart, a surprise of 1e-9 and a step of 32.00007.
@example(gap=1e-06, ranks=(0, 0))
def test_an_elo_step_is_its_largest_change(gap: float, ranks: tuple[int, int]) -> None:
    elo = ModeConfig("elo", algorithm=EloConfig())
    a, b = PlayerState(1500.0 + gap, 0.0, None, 0, 3, T0), PlayerState(1500.0, 0.0, None, 0, 3, T0)
    update = rate_match(elo, duel(ranks=ranks), {"a": a, "b": b})["a"]
    why = explain(elo, a, update, T0)
    if why.step is not None:
        assert why.step == pytest.approx(32.0, rel=1e-6)


def test_inactivity_is_a_term_only_after_time_away() -> None:
    away = PlayerState(1600.0, 60.0, 0.06, 0, 30, T0 - 200 * DAY)
    recent = PlayerState(1600.0, 60.0, 0.06, 0, 30, T0 - 60.0)
    b = PlayerState(1500.0, 60.0, 0.06, 0, 30, T0)
    for state, grew in ((away, True), (recent, False)):
        update = rate_match(GLICKO2, duel(), {"a": state, "b": b})["a"]
        why = explain(GLICKO2, state, update, T0)
        assert (why.inactive is not None) is grew
        if grew:
            assert why.inactive == update.own.deviation > state.deviation


def test_a_season_reset_is_a_term_when_the_match_is_in_a_later_season() -> None:
    seasons = SeasonsConfig(starts=(T0 - 10 * DAY,), period_days=30.0, deviation_reset=0.5)
    mode = ModeConfig("s", seasons=seasons)
    last_season = PlayerState(1800.0, 60.0, 0.06, 4000, 30, T0 - 20 * DAY)
    this_season = PlayerState(1800.0, 60.0, 0.06, 4000, 30, T0 - 5 * DAY)
    b = PlayerState(1500.0, 60.0, 0.06, 0, 30, T0)
    for state, reset in ((last_season, True), (this_season, False)):
        update = rate_match(mode, duel(), {"a": state, "b": b})["a"]
        why = explain(mode, state, update, T0)
        if reset:
            entered = season_entered(mode, state, T0)
            assert why.reset == (entered.rating, entered.deviation)
            assert entered.deviation > state.deviation
        else:
            assert why.reset is None


def test_a_newcomers_offset_is_a_term() -> None:
    term = ExperienceConfig(debut_offset=-300.0, games_scale=8.0)
    mode = ModeConfig("x", experience=term)
    veteran = PlayerState(1500.0, 350.0, 0.06, 0, 200, T0)
    update = rate_player(mode, "a", None, duel(), {"b": veteran})
    why = explain(mode, None, update, T0)
    assert why.offset == -300.0
    # Met 300 points weaker than the stored rating says, a newcomer is expected to lose.
    assert why.expected < 0.5 and why.step is not None and why.step > 0.0


def test_a_rating_stopped_by_the_bound_says_so() -> None:
    narrow = ModeConfig("n", algorithm=Glicko2Config(min_rating=-0.5, max_rating=0.5))
    top = CENTER + 0.5 * SCALE
    a, b = PlayerState(top, 200.0, 0.06, 0, 10, T0), PlayerState(top, 200.0, 0.06, 0, 10, T0)
    won = rate_match(narrow, duel(), {"a": a, "b": b})
    assert explain(narrow, a, won["a"], T0).bound == "high"
    assert explain(narrow, b, won["b"], T0).bound is None


finite = st.floats(-1e6, 1e6)


@given(
    score=st.floats(0.0, 1.0),
    expected=st.floats(0.0, 1.0),
    step=st.none() | finite,
    reset=st.none() | st.tuples(finite, st.floats(0.0, 1e6)),
    inactive=st.none() | st.floats(0.0, 1e6),
    offset=st.none() | finite,
    bound=st.sampled_from([None, "low", "high"]),
    correction=st.none() | st.text(max_size=40),
)
def test_the_compact_form_reads_back_as_written(
    score: float,
    expected: float,
    step: float | None,
    reset: tuple[float, float] | None,
    inactive: float | None,
    offset: float | None,
    bound: str | None,
    correction: str | None,
) -> None:
    why = Explanation(score, expected, step, reset, inactive, offset, bound, correction)
    assert Explanation.from_json(why.to_json()) == why


def test_the_wording_for_a_support_agent() -> None:
    why = Explanation(score=1.0, expected=0.5, step=324.62, inactive=120.4, offset=-150.0)
    lines = describe(
        why,
        player_id="alice",
        match_id="m-7",
        outcome="win",
        before=(1500.0, 100.0),
        after=(1662.3, 290.3),
    )
    assert lines == [
        "Before match m-7 (a win), alice was rated 1500 (uncertainty 100).",
        "Time without playing raised the uncertainty to 120, which makes this match count for "
        "more.",
        "With few games played, they are taken to play 150 points below their rating, so "
        "results against them are expected accordingly.",
        "They were expected to score 0.50 (1 = win, 0.5 = draw, 0 = loss) and scored 1.00.",
        "At their and their opponents' uncertainty, each unit of surprise was worth 325 points: "
        "+0.50 x 325 = +162.3.",
        "After it: 1662 (uncertainty 290).",
    ]


def test_an_abandonment_and_an_expected_result_are_worded() -> None:
    lines = describe(
        Explanation(score=0.0, expected=0.0, step=None),
        player_id="bob",
        match_id="m-8",
        outcome="abandoned",
        before=(1500.0, 100.0),
        after=(1500.0, 99.0),
    )
    assert lines[0] == "Before match m-8 (abandoned: scored as a loss), bob was rated 1500 " + (
        "(uncertainty 100)."
    )
    assert "The result was what was expected, so the match moved no rating." in lines


@given(
    strategy=st.sampled_from(
        [TeamStrategy.COMPOSITE_OPPONENT, TeamStrategy.INDIVIDUAL, TeamStrategy.SHARED]
    ),
    algorithm=st.sampled_from([Glicko2Config(), Glicko1Config(), EloConfig()]),
    sizes=st.tuples(st.integers(1, 4), st.integers(1, 4)),
    ratings=st.lists(st.floats(1200.0, 1800.0), min_size=8, max_size=8),
    ranks=st.sampled_from([(0, 1), (1, 0), (0, 0)]),
)
def test_in_any_team_match_the_change_is_the_step_times_the_surprise(
    strategy: TeamStrategy,
    algorithm: Glicko2Config | Glicko1Config | EloConfig,
    sizes: tuple[int, int],
    ratings: list[float],
    ranks: tuple[int, int],
) -> None:
    """Uneven sides, every team strategy, every pairwise algorithm: the terms add up to the
    change, and a result better than expected never costs rating (step >= 0)."""
    mode = ModeConfig("t", algorithm=algorithm, teams=strategy)
    names = [f"p{i}" for i in range(sum(sizes))]
    teams = (tuple(names[: sizes[0]]), tuple(names[sizes[0] :]))
    deviation = 0.0 if isinstance(algorithm, EloConfig) else 120.0
    volatility = 0.06 if isinstance(algorithm, Glicko2Config) else None
    rated = zip(names, ratings[: len(names)], strict=True)
    states = {p: PlayerState(r, deviation, volatility, 0, 10, T0) for p, r in rated}
    match = MatchView(teams, ranks, T0)
    for pid, update in rate_match(mode, match, states).items():
        why = explain(mode, states[pid], update, T0)
        if why.step is None:
            continue
        assert why.step >= 0.0
        assert update.state.rating == pytest.approx(
            states[pid].rating + why.step * (why.score - why.expected), abs=1e-7
        )
