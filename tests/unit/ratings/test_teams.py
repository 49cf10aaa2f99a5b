"""Team strategies (INVERSUS: individual, composite opponent, composite team; shared)."""

from __future__ import annotations

import math

import pytest

from stream.ratings.skill import Result, Skill
from stream.ratings.teams import (
    TeamStrategy,
    composite,
    results_for,
    score_against,
    size_advantage,
    team_pair,
    team_scale,
)

ALICE, ALEX = Skill(1700, 80, 0.06), Skill(1300, 120, 0.05)
BETTY, BILL = Skill(1600, 100, 0.06), Skill(1500, 60, 0.07)
TEAMS = [[ALICE, ALEX], [BETTY, BILL]]


def test_composite_averages_rating_deviation_and_volatility() -> None:
    c = composite([ALICE, ALEX])
    assert (c.rating, c.deviation) == (1500, 100)
    assert c.volatility == pytest.approx(0.055)
    assert composite([ALICE]) is ALICE


def test_composite_without_volatility() -> None:
    assert composite([Skill(1000), Skill(1200)]).volatility is None


def test_score_against_ranks() -> None:
    assert score_against(0, 1) == 1.0
    assert score_against(2, 1) == 0.0
    assert score_against(1, 1) == 0.5


def test_individual_gives_one_result_per_opposing_player() -> None:
    results = results_for(TeamStrategy.INDIVIDUAL, ALICE, 0, TEAMS, [0.5, 1.0])
    assert results == [Result(1600, 100, 1.0), Result(1500, 60, 1.0)]


def test_composite_opponent_is_the_opposing_average() -> None:
    results = results_for(TeamStrategy.COMPOSITE_OPPONENT, ALICE, 0, TEAMS, [0.5, 1.0])
    assert results == [Result(1550, 80, 1.0)]


def test_composite_team_keeps_the_team_gap_relative_to_own_rating() -> None:
    # Alice+Alex average 1500, Betty+Bill 1550: Alice faces a virtual 1700 + 50 = 1750.
    results = results_for(TeamStrategy.COMPOSITE_TEAM, ALICE, 0, TEAMS, [0.5, 0.0])
    assert results == [Result(1750, 80, 0.0)]
    alex = results_for(TeamStrategy.COMPOSITE_TEAM, ALEX, 0, TEAMS, [0.5, 0.0])
    assert alex == [Result(1350, 80, 0.0)]


def test_composite_team_one_versus_one_is_the_plain_opponent() -> None:
    results = results_for(TeamStrategy.COMPOSITE_TEAM, ALICE, 0, [[ALICE], [BETTY]], [0.5, 1.0])
    assert results == [Result(BETTY.rating, BETTY.deviation, 1.0)]


def test_free_for_all_gives_one_result_per_other_team() -> None:
    teams = [[ALICE], [BETTY], [BILL]]
    results = results_for(TeamStrategy.COMPOSITE_TEAM, BETTY, 1, teams, [0.0, 0.5, 1.0])
    assert [r.score for r in results] == [0.0, 1.0]
    assert [r.rating for r in results] == [1700, 1500]


# --- shared: the team's information shared by its members ------------------------------------


def test_shared_one_versus_one_is_the_plain_opponent() -> None:
    results = results_for(TeamStrategy.SHARED, ALICE, 0, [[ALICE], [BETTY]], [0.5, 1.0])
    assert results == [Result(BETTY.rating, BETTY.deviation, 1.0)]


def test_shared_rates_a_member_by_their_part_of_the_team_logit() -> None:
    # 2v2: the mean gap counts sqrt(2) times a 1v1 gap, Alice's rating half of her team's.
    (result,) = results_for(TeamStrategy.SHARED, ALICE, 0, TEAMS, [0.5, 1.0])
    assert result.weight == pytest.approx(math.sqrt(2.0) / 2.0)
    # own - 2 * (mean_mine - mean_theirs) = 2 * 1550 - 1300 = 1800
    assert result.rating == pytest.approx(1800.0)
    # Everyone else's part of the gap, times the team size: Alex's and the whole other team's.
    assert result.deviation == pytest.approx(math.sqrt(120**2 + 100**2 + 60**2))
    assert result.score == 1.0
    # The logit the weighted result gives equals the scaled gap between the team means.
    gap = (ALICE.rating + ALEX.rating) / 2 - (BETTY.rating + BILL.rating) / 2
    assert result.weight * (ALICE.rating - result.rating) == pytest.approx(math.sqrt(2.0) * gap)


def test_shared_uneven_sides_scale_by_the_harmonic_size() -> None:
    solo = [[ALICE], [BETTY, BILL]]
    (result,) = results_for(TeamStrategy.SHARED, ALICE, 0, solo, [0.5, 0.0])
    assert result.weight == pytest.approx(team_scale(1, 2)) == pytest.approx(math.sqrt(4 / 3))
    assert result.rating == pytest.approx(1550.0)
    assert result.deviation == pytest.approx(math.sqrt(100**2 + 60**2) / 2)


def test_size_advantage_is_the_edge_per_doubling() -> None:
    assert size_advantage(60.0, 4, 2) == pytest.approx(60.0)
    assert size_advantage(60.0, 2, 4) == pytest.approx(-60.0)
    assert size_advantage(60.0, 5, 4) == pytest.approx(60.0 * math.log2(1.25))
    assert size_advantage(60.0, 3, 3) == 0.0
    assert size_advantage(0.0, 1, 10) == 0.0


@pytest.mark.parametrize(
    "strategy",
    [TeamStrategy.COMPOSITE_OPPONENT, TeamStrategy.COMPOSITE_TEAM, TeamStrategy.INDIVIDUAL],
)
def test_every_composite_strategy_meets_a_smaller_side_as_weaker(strategy: TeamStrategy) -> None:
    uneven = [[ALICE, ALEX], [BETTY]]
    even = results_for(strategy, ALICE, 0, uneven, [0.5, 1.0])
    edged = results_for(strategy, ALICE, 0, uneven, [0.5, 1.0], size_edge=80.0)
    assert [r.rating - e.rating for r, e in zip(even, edged, strict=True)] == [
        pytest.approx(80.0)
    ] * len(even)


def test_shared_meets_a_smaller_side_as_weaker_by_the_team_size_times_the_edge() -> None:
    uneven = [[ALICE, ALEX], [BETTY]]
    (even,) = results_for(TeamStrategy.SHARED, ALICE, 0, uneven, [0.5, 1.0])
    (edged,) = results_for(TeamStrategy.SHARED, ALICE, 0, uneven, [0.5, 1.0], size_edge=80.0)
    assert even.rating - edged.rating == pytest.approx(2 * 80.0)


def test_auto_is_resolved_before_rating() -> None:
    with pytest.raises(ValueError, match="resolved"):
        results_for(TeamStrategy.AUTO, ALICE, 0, TEAMS, [0.5, 1.0])


def test_team_pair_of_shared_teams_scales_the_gap_and_the_spread() -> None:
    a, b = team_pair(TeamStrategy.SHARED, [ALICE, ALEX], [BETTY, BILL], size_edge=0.0)
    assert a.rating - b.rating == pytest.approx(math.sqrt(2.0) * (1500 - 1550))
    assert a.deviation == pytest.approx(math.sqrt(2.0) * math.sqrt(80**2 + 120**2) / 2)
    assert b.deviation == pytest.approx(math.sqrt(2.0) * math.sqrt(100**2 + 60**2) / 2)


def test_team_pair_of_composite_teams_is_the_composite_players_plus_the_advantage() -> None:
    a, b = team_pair(TeamStrategy.COMPOSITE_OPPONENT, [ALICE, ALEX], [BETTY], size_edge=50.0)
    assert a.rating == pytest.approx(1550.0)
    assert a.deviation == pytest.approx(100.0)
    assert b is BETTY
