"""Win probabilities and match quality (stream.ratings.probability)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream.ratings.algorithm import AlgorithmConfig
from stream.ratings.elo import EloConfig
from stream.ratings.glicko1 import Glicko1Config
from stream.ratings.glicko2 import Glicko2Config
from stream.ratings.probability import match_quality, team_win_probability, win_probability
from stream.ratings.skill import Skill
from stream.ratings.teams import TeamStrategy

GLICKO2 = Glicko2Config()
GLICKO1 = Glicko1Config()
ELO = EloConfig()
GLICKO2_SCALE = 173.7178
GLICKO1_SCALE = 400.0 / math.log(10.0)

ratings = st.floats(0.0, 3000.0, allow_nan=False)
deviations = st.floats(0.0, 400.0, allow_nan=False)
skills = st.builds(Skill, ratings, deviations, st.just(0.06))
teams = st.lists(skills, min_size=1, max_size=4)
algorithms = st.sampled_from([GLICKO2, GLICKO1, ELO])


# --- independent reference formulas ----------------------------------------------------------


def glicko2_expected(ra: float, da: float, rb: float, db: float) -> float:
    """Glickman's E(mu, mu_j, phi_j) with phi_j = sqrt(phi_a^2 + phi_b^2)."""
    phi_sq = (da / GLICKO2_SCALE) ** 2 + (db / GLICKO2_SCALE) ** 2
    g = 1.0 / math.sqrt(1.0 + 3.0 * phi_sq / math.pi**2)
    return 1.0 / (1.0 + math.exp(-g * (ra - rb) / GLICKO2_SCALE))


def glicko1_expected(ra: float, da: float, rb: float, db: float) -> float:
    """Glickman's Glicko-1 E = 1 / (1 + 10^(-g(RD) (ra - rb) / 400)), RD^2 = RDa^2 + RDb^2."""
    q = math.log(10.0) / 400.0
    g = 1.0 / math.sqrt(1.0 + 3.0 * q * q * (da * da + db * db) / math.pi**2)
    return 1.0 / (1.0 + math.pow(10.0, -g * (ra - rb) / 400.0))


def elo_expected(ra: float, rb: float) -> float:
    """Chess Elo: 1 / (1 + 10^((rb - ra) / 400))."""
    return 1.0 / (1.0 + math.pow(10.0, (rb - ra) / 400.0))


def means(team: Sequence[Skill]) -> tuple[float, float]:
    n = len(team)
    return sum(s.rating for s in team) / n, sum(s.deviation for s in team) / n


def quality_by_hand(scale: float, team_a: Sequence[Skill], team_b: Sequence[Skill]) -> float:
    ra, da = means(team_a)
    rb, db = means(team_b)
    beta_sq = (scale * math.pi) ** 2 / 6.0
    total = 2.0 * beta_sq + da**2 + db**2
    return math.sqrt(2.0 * beta_sq / total) * math.exp(-((ra - rb) ** 2) / (2.0 * total))


# --- win_probability -------------------------------------------------------------------------


def test_glicko2_reference_example_2000_50_vs_1780_150() -> None:
    # Glicko-2 / skillratings reference: 2000 (RD 50) against 1780 (RD 150) wins 76% of the time.
    p = win_probability(GLICKO2, Skill(2000.0, 50.0, 0.06), Skill(1780.0, 150.0, 0.06))
    assert round(p, 2) == 0.76
    assert p == pytest.approx(glicko2_expected(2000.0, 50.0, 1780.0, 150.0), rel=1e-12)


def test_glicko1_matches_glickmans_formula() -> None:
    p = win_probability(GLICKO1, Skill(1700.0, 80.0), Skill(1500.0, 200.0))
    assert p == pytest.approx(glicko1_expected(1700.0, 80.0, 1500.0, 200.0), rel=1e-12)
    assert 0.5 < p < elo_expected(1700.0, 1500.0)


def test_elo_matches_chess_elo_and_ignores_deviation() -> None:
    p = win_probability(ELO, Skill(1600.0), Skill(1400.0))
    assert p == pytest.approx(elo_expected(1600.0, 1400.0), rel=1e-12)
    assert p == pytest.approx(1.0 / (1.0 + math.pow(10.0, -0.5)), rel=1e-12)
    assert win_probability(ELO, Skill(1600.0, 300.0), Skill(1400.0, 300.0)) == p


def test_equal_ratings_are_a_coin_flip() -> None:
    for algorithm in (GLICKO2, GLICKO1, ELO):
        assert win_probability(algorithm, Skill(1500.0, 50.0), Skill(1500.0, 300.0)) == 0.5


@settings(deadline=None)
@given(algorithms, skills, skills)
def test_win_probability_is_symmetric(algorithm: AlgorithmConfig, a: Skill, b: Skill) -> None:
    p_ab = win_probability(algorithm, a, b)
    p_ba = win_probability(algorithm, b, a)
    assert 0.0 <= p_ab <= 1.0
    assert p_ab + p_ba == pytest.approx(1.0, abs=1e-12)


@settings(deadline=None)
@given(
    st.sampled_from([GLICKO2, GLICKO1]),
    skills,
    skills,
    st.floats(0.0, 400.0, allow_nan=False),
    st.floats(0.0, 400.0, allow_nan=False),
)
def test_larger_deviations_pull_towards_a_coin_flip(
    algorithm: AlgorithmConfig, a: Skill, b: Skill, extra_a: float, extra_b: float
) -> None:
    p = win_probability(algorithm, a, b)
    wider_a = Skill(a.rating, a.deviation + extra_a, a.volatility)
    wider_b = Skill(b.rating, b.deviation + extra_b, b.volatility)
    for q in (
        win_probability(algorithm, wider_a, b),
        win_probability(algorithm, a, wider_b),
        win_probability(algorithm, wider_a, wider_b),
    ):
        # Closer to 0.5, and never across it.
        assert abs(q - 0.5) <= abs(p - 0.5) + 1e-12
        assert (q - 0.5) * (p - 0.5) >= 0.0


def test_larger_deviation_strictly_lowers_a_favourite_chance() -> None:
    for algorithm in (GLICKO2, GLICKO1):
        sure = win_probability(algorithm, Skill(1800.0, 30.0), Skill(1500.0, 30.0))
        unsure = win_probability(algorithm, Skill(1800.0, 300.0), Skill(1500.0, 30.0))
        assert 0.5 < unsure < sure


# --- team_win_probability --------------------------------------------------------------------


def test_team_win_probability_is_the_composite_players_probability() -> None:
    team_a = [Skill(1700.0, 80.0, 0.06), Skill(1300.0, 120.0, 0.05)]
    team_b = [Skill(1600.0, 100.0, 0.06), Skill(1500.0, 60.0, 0.07), Skill(1450.0, 200.0, 0.06)]
    # Composite A: 1500 / 100; composite B: 1516.666... / 120.
    expected = glicko2_expected(1500.0, 100.0, 4550.0 / 3.0, 120.0)
    assert team_win_probability(GLICKO2, team_a, team_b) == pytest.approx(expected, rel=1e-12)
    assert team_win_probability(GLICKO2, team_a, team_b) < 0.5
    g1 = glicko1_expected(1500.0, 100.0, 4550.0 / 3.0, 120.0)
    assert team_win_probability(GLICKO1, team_a, team_b) == pytest.approx(g1, rel=1e-12)
    elo = elo_expected(1500.0, 4550.0 / 3.0)
    assert team_win_probability(ELO, team_a, team_b) == pytest.approx(elo, rel=1e-12)


def test_one_player_teams_equal_win_probability() -> None:
    a, b = Skill(1650.0, 70.0, 0.06), Skill(1500.0, 180.0, 0.06)
    assert team_win_probability(GLICKO2, [a], [b]) == win_probability(GLICKO2, a, b)


@settings(deadline=None)
@given(teams, teams)
def test_team_win_probability_property(team_a: list[Skill], team_b: list[Skill]) -> None:
    ra, da = means(team_a)
    rb, db = means(team_b)
    p = team_win_probability(GLICKO2, team_a, team_b)
    assert p == pytest.approx(glicko2_expected(ra, da, rb, db), rel=1e-9, abs=1e-12)
    assert p + team_win_probability(GLICKO2, team_b, team_a) == pytest.approx(1.0, abs=1e-12)


# --- match_quality ---------------------------------------------------------------------------


def test_match_quality_by_hand_glicko2() -> None:
    team_a = [Skill(1600.0, 80.0, 0.06), Skill(1500.0, 120.0, 0.06)]  # composite 1550 / 100
    team_b = [Skill(1450.0, 60.0, 0.06)]
    beta_sq = (173.7178 * math.pi) ** 2 / 6.0
    total = 2.0 * beta_sq + 100.0**2 + 60.0**2
    by_hand = math.sqrt(2.0 * beta_sq / total) * math.exp(-(100.0**2) / (2.0 * total))
    assert match_quality(GLICKO2, team_a, team_b) == pytest.approx(by_hand, rel=1e-12)
    # Worked on paper: 2 beta^2 = 99280.9, total = 112880.9 -> 0.93783 * 0.95667.
    assert match_quality(GLICKO2, team_a, team_b) == pytest.approx(0.8972, abs=1e-4)


def test_match_quality_uses_each_algorithms_logistic_scale() -> None:
    team_a = [Skill(1600.0, 80.0)]
    team_b = [Skill(1450.0, 60.0)]
    assert match_quality(GLICKO1, team_a, team_b) == pytest.approx(
        quality_by_hand(GLICKO1_SCALE, team_a, team_b), rel=1e-12
    )
    hot = EloConfig(temperature=250.0)
    elo_a, elo_b = [Skill(1600.0)], [Skill(1450.0)]
    assert match_quality(hot, elo_a, elo_b) == pytest.approx(
        quality_by_hand(250.0, elo_a, elo_b), rel=1e-12
    )


def test_equal_known_teams_have_perfect_quality() -> None:
    assert match_quality(ELO, [Skill(1500.0)], [Skill(1500.0)]) == 1.0
    assert match_quality(GLICKO2, [Skill(1500.0, 0.0)], [Skill(1500.0, 0.0)]) == 1.0


def test_equal_well_known_teams_beat_equal_uncertain_teams() -> None:
    known = match_quality(GLICKO2, [Skill(1500.0, 40.0)], [Skill(1500.0, 40.0)])
    uncertain = match_quality(GLICKO2, [Skill(1500.0, 300.0)], [Skill(1500.0, 300.0)])
    assert 0.0 < uncertain < known < 1.0


def test_a_rating_gap_lowers_quality() -> None:
    even = match_quality(GLICKO2, [Skill(1500.0, 80.0)], [Skill(1500.0, 80.0)])
    small_gap = match_quality(GLICKO2, [Skill(1600.0, 80.0)], [Skill(1500.0, 80.0)])
    large_gap = match_quality(GLICKO2, [Skill(1900.0, 80.0)], [Skill(1500.0, 80.0)])
    assert 0.0 < large_gap < small_gap < even


@settings(deadline=None)
@given(algorithms, teams, teams)
def test_match_quality_is_in_range_symmetric_and_by_the_formula(
    algorithm: AlgorithmConfig, team_a: list[Skill], team_b: list[Skill]
) -> None:
    q = match_quality(algorithm, team_a, team_b)
    assert 0.0 < q <= 1.0
    assert match_quality(algorithm, team_b, team_a) == pytest.approx(q, rel=1e-12)
    scale = {GLICKO2: GLICKO2_SCALE, GLICKO1: GLICKO1_SCALE, ELO: GLICKO1_SCALE}[algorithm]
    assert q == pytest.approx(quality_by_hand(scale, team_a, team_b), rel=1e-9)


@settings(deadline=None)
@given(ratings, ratings, deviations, st.floats(1.0, 400.0, allow_nan=False))
def test_a_larger_gap_or_more_uncertainty_never_raises_quality(
    r: float, other: float, dev: float, extra: float
) -> None:
    base = match_quality(GLICKO2, [Skill(r, dev)], [Skill(r, dev)])
    assert match_quality(GLICKO2, [Skill(other, dev)], [Skill(r, dev)]) <= base
    wider = match_quality(GLICKO2, [Skill(r, dev + extra)], [Skill(r, dev)])
    assert wider < base


# --- shared teams and uneven sides ------------------------------------------------------------

SHARED = TeamStrategy.SHARED


def test_shared_win_probability_by_hand() -> None:
    # 2v3: the mean gap counts sqrt(2*2*3/5) times a 1v1 gap; each side's uncertainty is the
    # deviation of its mean, scaled alike: Glickman's E with both combined.
    team_a = [Skill(1700.0, 80.0, 0.06), Skill(1300.0, 120.0, 0.05)]
    team_b = [Skill(1600.0, 100.0, 0.06), Skill(1500.0, 60.0, 0.07), Skill(1450.0, 200.0, 0.06)]
    scale = math.sqrt(12.0 / 5.0)
    gap = 1500.0 + 40.0 * math.log2(2.0 / 3.0) - 4550.0 / 3.0
    spread_a = math.sqrt(80.0**2 + 120.0**2) / 2.0
    spread_b = math.sqrt(100.0**2 + 60.0**2 + 200.0**2) / 3.0
    expected = glicko2_expected(scale * gap, scale * spread_a, 0.0, scale * spread_b)
    got = team_win_probability(GLICKO2, team_a, team_b, SHARED, size_edge=40.0)
    assert got == pytest.approx(expected, rel=1e-12)


def test_one_player_shared_teams_equal_win_probability() -> None:
    a, b = Skill(1650.0, 70.0, 0.06), Skill(1500.0, 180.0, 0.06)
    assert team_win_probability(GLICKO2, [a], [b], SHARED) == win_probability(GLICKO2, a, b)


@settings(deadline=None)
@given(
    teams,
    teams,
    st.sampled_from([TeamStrategy.COMPOSITE_OPPONENT, SHARED]),
    st.floats(0.0, 300.0),
    algorithms,
)
def test_the_bigger_side_is_favoured_by_the_size_edge(
    team_a: list[Skill],
    team_b: list[Skill],
    strategy: TeamStrategy,
    edge: float,
    algorithm: AlgorithmConfig,
) -> None:
    p = team_win_probability(algorithm, team_a, team_b, strategy, edge)
    flat = team_win_probability(algorithm, team_a, team_b, strategy, 0.0)
    assert p + team_win_probability(algorithm, team_b, team_a, strategy, edge) == pytest.approx(
        1.0, abs=1e-12
    )
    if len(team_a) > len(team_b):
        assert p >= flat - 1e-12
    elif len(team_a) < len(team_b):
        assert p <= flat + 1e-12
    else:
        assert p == flat


def test_the_size_edge_makes_equal_players_an_uneven_match() -> None:
    same = Skill(1500.0, 50.0, 0.06)
    for strategy in (TeamStrategy.COMPOSITE_OPPONENT, SHARED):
        even = match_quality(GLICKO2, [same] * 3, [same] * 2, strategy, size_edge=0.0)
        edged = match_quality(GLICKO2, [same] * 3, [same] * 2, strategy, size_edge=100.0)
        assert edged < even
        assert team_win_probability(GLICKO2, [same] * 3, [same] * 2, strategy, 100.0) > 0.5
