"""Team strategies (INVERSUS: individual, composite opponent, composite team)."""

from __future__ import annotations

import pytest

from stream.ratings.skill import Result, Skill
from stream.ratings.teams import TeamStrategy, composite, results_for, score_against

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
