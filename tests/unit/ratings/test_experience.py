"""The experience term: its curve, the engine's use of it, the replay's predictions, the keys."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream.config.modes import Modes, ModesError, parse_modes
from stream.history import HistoryMatch
from stream.offline.replayer import Replayer
from stream.ratings.elo import EloConfig
from stream.ratings.engine import MatchView, rate_duel, rate_match, rate_player
from stream.ratings.experience import ExperienceConfig, effective_skill
from stream.ratings.glicko1 import Glicko1Config
from stream.ratings.glicko2 import Glicko2Config
from stream.ratings.modeconfig import ModeConfig
from stream.ratings.skill import PlayerState, Skill
from stream.ratings.teams import TeamStrategy

T0 = 1_700_000_000.0
TERM = ExperienceConfig(debut_offset=-200.0, games_scale=4.0, provisional_games=5)
OFF = ExperienceConfig()
ALGORITHMS = (Glicko2Config(), Glicko1Config(), EloConfig())

games_counts = st.integers(0, 200)
offsets = st.floats(-400.0, 400.0, allow_nan=False)
scales = st.floats(0.25, 50.0, allow_nan=False)
ratings = st.floats(1000.0, 2000.0, allow_nan=False)
scores_a = st.sampled_from([0.0, 0.5, 1.0])


def mode(term: ExperienceConfig, algorithm: object = None, name: str = "m") -> ModeConfig:
    chosen = Glicko2Config() if algorithm is None else algorithm
    assert isinstance(chosen, Glicko2Config | Glicko1Config | EloConfig)
    return ModeConfig(name, chosen, TeamStrategy.COMPOSITE_OPPONENT, experience=term)


# --- the curve ---------------------------------------------------------------------------------


def test_offset_at_debut_and_after() -> None:
    assert TERM.offset(0) == -200.0
    assert TERM.offset(4) == pytest.approx(-200.0 / math.e)
    assert TERM.offset(40) == pytest.approx(-200.0 * math.exp(-10.0))


def test_off_by_default_and_when_debut_offset_is_zero() -> None:
    assert not ExperienceConfig().active
    assert ExperienceConfig().offset(0) == 0.0
    assert ModeConfig("x", Glicko2Config()).experience == OFF


@given(offsets, scales, games_counts)
def test_offset_shrinks_towards_zero_and_keeps_its_sign(debut: float, scale: float, g: int) -> None:
    term = ExperienceConfig(debut_offset=debut, games_scale=scale)
    now, later = term.offset(g), term.offset(g + 1)
    assert abs(later) <= abs(now) <= abs(debut)
    assert now * debut >= 0.0 and later * debut >= 0.0


def test_provisional_below_the_threshold_only() -> None:
    assert [TERM.provisional(g) for g in range(7)] == [True] * 5 + [False] * 2
    assert not ExperienceConfig(provisional_games=0).provisional(0)


@pytest.mark.parametrize(
    ("kwargs", "word"),
    [
        ({"games_scale": 0.0}, "games_scale"),
        ({"games_scale": -1.0}, "games_scale"),
        ({"debut_offset": math.inf}, "debut_offset"),
        ({"debut_offset": math.nan}, "debut_offset"),
        ({"provisional_games": -1}, "provisional_games"),
        ({"provisional_games": 2.5}, "provisional_games"),
    ],
)
def test_bad_parameters_are_refused_by_name(kwargs: dict[str, float], word: str) -> None:
    with pytest.raises(ValueError, match=word):
        ExperienceConfig(**kwargs)  # type: ignore[arg-type]


def test_effective_skill_adds_the_offset_for_the_games() -> None:
    skill = Skill(1600.0, 80.0, 0.06)
    assert effective_skill(TERM, skill, 0) == Skill(1400.0, 80.0, 0.06)
    assert effective_skill(OFF, skill, 0) == skill


# --- the engine --------------------------------------------------------------------------------


def duel(
    winner: PlayerState | None, loser: PlayerState | None, m: ModeConfig
) -> tuple[float, float]:
    a, b = rate_duel(m, winner, loser, 1.0, T0)
    return a.state.rating, b.state.rating


@pytest.mark.parametrize("algorithm", ALGORITHMS, ids=lambda a: a.name)
def test_two_newcomers_meet_as_without_the_term(algorithm: object) -> None:
    # Equal offsets cancel: the published fresh-player results hold with the term on.
    on = duel(None, None, mode(TERM, algorithm))
    off = duel(None, None, mode(OFF, algorithm))
    assert on == pytest.approx(off, abs=1e-9)


@pytest.mark.parametrize("algorithm", ALGORITHMS, ids=lambda a: a.name)
def test_a_newcomer_beating_a_veteran_gains_more_and_the_veteran_loses_more(
    algorithm: object,
) -> None:
    start = mode(OFF, algorithm).algorithm.initial()
    veteran = PlayerState(start.rating, start.deviation, start.volatility, 0, 50, T0)
    newcomer_on, veteran_on = duel(None, veteran, mode(TERM, algorithm))
    newcomer_off, veteran_off = duel(None, veteran, mode(OFF, algorithm))
    # The newcomer was expected to play 200 points below: the win surprised more.
    assert newcomer_on > newcomer_off
    assert veteran_on < veteran_off


@pytest.mark.parametrize("algorithm", ALGORITHMS, ids=lambda a: a.name)
def test_a_veteran_beating_a_newcomer_gains_less(algorithm: object) -> None:
    start = mode(OFF, algorithm).algorithm.initial()
    veteran = PlayerState(start.rating, start.deviation, start.volatility, 0, 50, T0)
    veteran_on, newcomer_on = duel(veteran, None, mode(TERM, algorithm))
    veteran_off, newcomer_off = duel(veteran, None, mode(OFF, algorithm))
    assert veteran_on < veteran_off
    assert newcomer_on > newcomer_off


def test_the_stored_rating_has_no_offset_in_it() -> None:
    # A newcomer who plays exactly as expected against an equal newcomer keeps the plain rating:
    # the offset is used, never stored.
    m = mode(TERM)
    match = MatchView((("a",), ("b",)), (0, 0), T0)
    updates = rate_match(m, match, {})
    assert updates["a"].state.rating == pytest.approx(1500.0, abs=1e-9)
    assert updates["a"].expected_score == pytest.approx(0.5)


def test_expected_score_counts_the_offsets() -> None:
    m = mode(TERM)
    veteran = PlayerState(1500.0, 100.0, 0.06, 0, 50, T0)
    match = MatchView((("new",), ("vet",)), (0, 1), T0)
    update = rate_player(m, "new", None, match, {"vet": veteran})
    assert update.expected_score < 0.5
    assert rate_player(mode(OFF), "new", None, match, {"vet": veteran}).expected_score == 0.5


@settings(deadline=None, max_examples=100)
@given(st.sampled_from(ALGORITHMS), games_counts, games_counts, ratings, ratings, scores_a)
def test_team_match_rated_the_same_by_every_member_and_replay(
    algorithm: object, games_a: int, games_b: int, ra: float, rb: float, score: float
) -> None:
    # Rating twice from the same states gives the same bytes (idempotent redelivery), and the
    # live per-player call equals the replay's whole-match call.
    m = mode(TERM, algorithm)
    start = m.algorithm.initial()
    states = {
        "a": PlayerState(ra, start.deviation, start.volatility, 0, games_a, T0 - 10.0),
        "b": PlayerState(rb, start.deviation, start.volatility, 0, games_b, T0 - 10.0),
        "c": PlayerState(1500.0, start.deviation, start.volatility, 0, 3, T0 - 10.0),
    }
    ranks = (0, 1) if score == 1.0 else (1, 0) if score == 0.0 else (0, 0)
    match = MatchView((("a", "c"), ("b",)), ranks, T0)
    whole = rate_match(m, match, states)
    for pid in ("a", "b", "c"):
        alone = rate_player(m, pid, states[pid], match, states)
        assert alone == whole[pid]
        assert rate_player(m, pid, states[pid], match, states) == alone


# --- replay predictions ------------------------------------------------------------------------


def history(*pairs: tuple[str, str]) -> list[HistoryMatch]:
    return [
        HistoryMatch(
            row=i + 2,
            match_id=f"m{i}",
            mode=None,
            at=T0 + 3600.0 * i,
            teams=((a,), (b,)),
            ranks=(0, 1),
            stats=None,
            quitters=frozenset(),
        )
        for i, (a, b) in enumerate(pairs)
    ]


def test_replay_predicts_a_newcomer_below_an_equally_rated_veteran() -> None:
    on = Replayer(Modes(default=mode(TERM, name="default")))
    off = Replayer(Modes(default=mode(OFF, name="default")))
    # x and y trade wins until their ratings are back near the start but they have games.
    games = history(*([("x", "y"), ("y", "x")] * 10))
    for r in (on, off):
        for g in games:
            r.apply(g)
    debut = history(("x", "newcomer"))[0]
    ((p_on, _),) = on.predict(debut)
    ((p_off, _),) = off.predict(debut)
    assert p_on > p_off
    assert p_on > 0.5


# --- the modes file ----------------------------------------------------------------------------


def test_experience_keys_per_mode_lay_over_the_default() -> None:
    modes = parse_modes(
        {
            "default": {"experience": {"debut_offset": -150.0, "games_scale": 3.0}},
            "modes": {"duel": {"experience": {"provisional_games": 10}}},
        }
    )
    assert modes.get("other").experience == ExperienceConfig(-150.0, 3.0, 5)
    assert modes.get("duel").experience == ExperienceConfig(-150.0, 3.0, 10)


@pytest.mark.parametrize(
    ("table", "word"),
    [
        ({"debut": -100.0}, "debut"),
        ({"games_scale": 0.0}, "games_scale"),
        ({"provisional_games": "five"}, "provisional_games"),
    ],
)
def test_bad_experience_keys_name_the_place(table: dict[str, object], word: str) -> None:
    with pytest.raises(ModesError, match=rf"\[modes\.duel\.experience\].*{word}"):
        parse_modes({"modes": {"duel": {"experience": table}}})


@settings(deadline=None, max_examples=200)
@given(games_counts, games_counts, ratings, ratings, scores_a)
def test_elo_stays_zero_sum_with_the_term_on(
    games_a: int, games_b: int, ra: float, rb: float, score: float
) -> None:
    # Both sides see the same two effective ratings, so what one gains the other loses.
    m = mode(TERM, EloConfig())
    a = PlayerState(ra, 0.0, None, 0, games_a, T0 - 10.0)
    b = PlayerState(rb, 0.0, None, 0, games_b, T0 - 10.0)
    new_a, new_b = rate_duel(m, a, b, score, T0)
    assert new_a.state.rating - ra == pytest.approx(rb - new_b.state.rating, abs=1e-9)
    assert new_a.expected_score + new_b.expected_score == pytest.approx(1.0)


@settings(deadline=None, max_examples=200)
@given(st.sampled_from(ALGORITHMS), games_counts, games_counts, st.sampled_from([0.0, 1.0]))
def test_a_win_never_lowers_and_a_loss_never_raises_the_rating(
    algorithm: object, games_a: int, games_b: int, score: float
) -> None:
    m = mode(TERM, algorithm)
    start = m.algorithm.initial()
    a = PlayerState(1500.0, start.deviation, start.volatility, 0, games_a, T0 - 10.0)
    b = PlayerState(1500.0, start.deviation, start.volatility, 0, games_b, T0 - 10.0)
    new_a, _ = rate_duel(m, a, b, score, T0)
    if score == 1.0:
        assert new_a.state.rating > 1500.0
    else:
        assert new_a.state.rating < 1500.0


@pytest.mark.parametrize("score", [0.0, 1.0])
def test_the_rating_bounds_hold_for_the_stored_rating(score: float) -> None:
    # A newcomer's offset must not push the bounds onto the stored rating: a player at the
    # bottom who loses stays at the bottom, one at the top who wins stays at the top.
    m = mode(TERM)
    low, high = m.rating_bounds
    edge = low if score == 0.0 else high
    start = m.algorithm.initial()
    me = PlayerState(edge, start.deviation, start.volatility, 0, 0, T0 - 10.0)
    them = PlayerState(edge, start.deviation, start.volatility, 0, 50, T0 - 10.0)
    mine, _ = rate_duel(m, me, them, score, T0)
    assert mine.state.rating == pytest.approx(edge)
