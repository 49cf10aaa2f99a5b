"""Part-time play (stream/ratings/parttime.py and its use in stream/ratings/teams.py and the
engine): shares from the stats, the sides at their time-weighted strength, a part-time
player's result at their share of its information, and nothing changed without it."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream.config.modes import parse_modes
from stream.ratings.elo import EloConfig
from stream.ratings.engine import MatchView, rate_match, rate_player
from stream.ratings.explain import Explanation, describe, explain
from stream.ratings.glicko1 import Glicko1Config
from stream.ratings.glicko2 import Glicko2Config
from stream.ratings.modeconfig import ModeConfig
from stream.ratings.parttime import MIN_SHARE, played_shares
from stream.ratings.population import prior_evidence, start
from stream.ratings.population.evidence import NAMES, match_part
from stream.ratings.probability import match_quality, team_win_probability
from stream.ratings.skill import PlayerState, PlayerStats, Result, Skill
from stream.ratings.teams import (
    TeamStrategy,
    part_time_results,
    results_for,
    size_advantage,
    team_pair,
)

RESOLVED = [s for s in TeamStrategy if s is not TeamStrategy.AUTO]


def stats(**seconds: float) -> dict[str, PlayerStats]:
    return {pid: PlayerStats(10.0, s) for pid, s in seconds.items()}


# --- shares from the stats ---------------------------------------------------------------


def test_shares_are_seconds_over_the_longest_anyone_played() -> None:
    teams = (("a", "b"), ("c", "d"))
    found = played_shares(teams, stats(a=600, b=300, c=600, d=600))
    assert found == ((1.0, 0.5), (1.0, 1.0))


def test_no_stats_no_seconds_or_everyone_equal_is_no_part_time_play() -> None:
    teams = (("a", "b"), ("c", "d"))
    assert played_shares(teams, None) is None
    assert played_shares(teams, {}) is None
    assert played_shares(teams, stats(a=0, b=0, c=0, d=0)) is None
    assert played_shares(teams, stats(a=900, b=900, c=900, d=900)) is None
    # A player the stats leave out played the whole match.
    assert played_shares(teams, stats(a=900)) is None


def test_a_share_is_floored_and_a_player_left_out_played_all_of_it() -> None:
    teams = (("a", "b"), ("c", "d"))
    found = played_shares(teams, stats(a=1000, b=1, c=-5))
    assert found == ((1.0, MIN_SHARE), (MIN_SHARE, 1.0))


def test_players_outside_the_match_do_not_set_its_length() -> None:
    found = played_shares((("a", "c"), ("b",)), stats(a=300, b=600, c=600, z=6000))
    assert found == ((0.5, 1.0), (1.0,))


def test_a_duel_or_a_free_for_all_has_no_part_time_play() -> None:
    # There a player's seconds are their result (a race) or their survival, not presence.
    assert played_shares((("a",), ("b",)), stats(a=300, b=600)) is None
    assert played_shares((("a",), ("b",), ("c",)), stats(a=300, b=600, c=90)) is None


# --- the team math -----------------------------------------------------------------------

SIDES = [
    [Skill(1500.0, 80.0, 0.06), Skill(1700.0, 200.0, 0.06), Skill(1400.0, 120.0, 0.07)],
    [Skill(1600.0, 90.0, 0.06), Skill(1550.0, 300.0, 0.05), Skill(1450.0, 60.0, 0.06)],
]


@pytest.mark.parametrize("strategy", RESOLVED)
@pytest.mark.parametrize("edge", [0.0, 120.0])
def test_whole_shares_rate_as_without_them(strategy: TeamStrategy, edge: float) -> None:
    # Every share 1: the part-time formulas are the whole-match ones (to rounding).
    for index, team in enumerate(SIDES):
        for own in team:
            plain = results_for(strategy, own, index, SIDES, [0.0, 1.0][::1], edge)
            ones = ((1.0,) * 3, (1.0,) * 3)
            part = part_time_results(strategy, own, 1.0, index, SIDES, ones, [0.0, 1.0], edge)
            assert len(plain) == len(part)
            for p, q in zip(plain, part, strict=True):
                assert q.rating == pytest.approx(p.rating, abs=1e-9)
                assert q.deviation == pytest.approx(p.deviation, abs=1e-9)
                assert (q.score, q.share) == (p.score, 1.0)
                assert q.weight == pytest.approx(p.weight)


@pytest.mark.parametrize("strategy", RESOLVED)
def test_a_side_missing_a_player_for_half_the_match_is_weaker(strategy: TeamStrategy) -> None:
    # Equal sides but for one member of the first, there half the match: with a size edge
    # the first is predicted weaker by the edge over log2(3 / 2.5).
    even = [SIDES[0], SIDES[0]]
    shares = ((1.0, 0.5, 1.0), (1.0, 1.0, 1.0))
    g2 = Glicko2Config()
    whole = team_win_probability(g2, even[0], even[1], strategy, 150.0)
    part = team_win_probability(g2, even[0], even[1], strategy, 150.0, shares=shares)
    assert whole == pytest.approx(0.5)
    assert part < 0.5
    a, b = team_pair(strategy, even[0], even[1], 150.0, shares)
    gap = a.rating - b.rating
    edge = size_advantage(150.0, 2.5, 3.0)
    assert edge == pytest.approx(150.0 * math.log2(2.5 / 3.0))
    if strategy is TeamStrategy.SHARED:
        mean_a = (1500.0 + 0.5 * 1700.0 + 1400.0) / 2.5
        assert gap == pytest.approx(math.sqrt(3) * (mean_a - 1533.333333333 + edge), rel=1e-9)
    else:
        assert gap < 0.0
    assert match_quality(g2, even[0], even[1], strategy, 150.0, shares=shares) < match_quality(
        g2, even[0], even[1], strategy, 150.0
    )


def test_the_side_is_its_members_ratings_averaged_by_time_played() -> None:
    shares = ((1.0, 0.25, 1.0), (1.0, 1.0, 1.0))
    a, _ = team_pair(TeamStrategy.COMPOSITE_OPPONENT, SIDES[0], SIDES[1], 0.0, shares)
    assert a.rating == pytest.approx((1500.0 + 0.25 * 1700.0 + 1400.0) / 2.25)
    assert a.deviation == pytest.approx((80.0 + 0.25 * 200.0 + 120.0) / 2.25)


@pytest.mark.parametrize("strategy", RESOLVED)
def test_a_part_time_player_takes_their_share_of_the_result(strategy: TeamStrategy) -> None:
    shares = ((1.0, 0.4, 1.0), (1.0, 1.0, 1.0))
    own = SIDES[0][1]
    found = part_time_results(strategy, own, 0.4, 0, SIDES, shares, [0.0, 0.0], 100.0)
    if strategy is TeamStrategy.INDIVIDUAL:
        assert [r.share for r in found] == [0.4, 0.4, 0.4]
    else:
        assert [r.share for r in found] == [0.4]


def shared_logit(shares: tuple[tuple[float, ...], ...], edge: float) -> float:
    """The shared strategy's team logit, written from its definition."""
    means = [
        sum(m.rating * w for m, w in zip(team, row, strict=True)) / sum(row)
        for team, row in zip(SIDES, shares, strict=True)
    ]
    advantage = size_advantage(edge, sum(shares[0]), sum(shares[1]))
    return math.sqrt(3) * (means[0] - means[1] + advantage)


@pytest.mark.parametrize("member", range(3))
def test_shared_part_time_results_predict_the_team_logit(member: int) -> None:
    shares = ((1.0, 0.4, 0.7), (0.5, 1.0, 1.0))
    own = SIDES[0][member]
    (result,) = part_time_results(
        TeamStrategy.SHARED, own, shares[0][member], 0, SIDES, shares, [1.0, 1.0], 80.0
    )
    # The result's logit, weight * (own - rating), is the team logit, for every member.
    assert result.weight * (own.rating - result.rating) == pytest.approx(
        shared_logit(shares, 80.0), rel=1e-12
    )
    assert result.weight == pytest.approx(math.sqrt(3) / 3)


# --- the engine ------------------------------------------------------------------------------


def mode(strategy: str = "composite_opponent", edge: float = 100.0) -> ModeConfig:
    modes = parse_modes(
        {
            "modes": {
                "m": {
                    "algorithm": "glicko2",
                    "teams": strategy,
                    "population": {"size_edge": edge},
                }
            }
        }
    )
    return modes.get("m")


STATES = {
    "a": PlayerState(1500.0, 120.0, 0.06, games=30, last_played=0.0),
    "b": PlayerState(1550.0, 120.0, 0.06, games=30, last_played=0.0),
    "c": PlayerState(1520.0, 120.0, 0.06, games=30, last_played=0.0),
    "d": PlayerState(1530.0, 120.0, 0.06, games=30, last_played=0.0),
}
TEAMS = (("a", "b"), ("c", "d"))


@pytest.mark.parametrize("strategy", ["composite_opponent", "composite_team", "shared"])
def test_equal_seconds_rate_bit_for_bit_as_no_stats(strategy: str) -> None:
    m = mode(strategy)
    plain = rate_match(m, MatchView(TEAMS, (0, 1), 100.0), STATES)
    same = rate_match(m, MatchView(TEAMS, (0, 1), 100.0, stats(a=900, b=900, c=900, d=900)), STATES)
    assert {p: u.state for p, u in plain.items()} == {p: u.state for p, u in same.items()}


@pytest.mark.parametrize("strategy", ["composite_opponent", "composite_team", "shared"])
def test_losing_beside_a_teammate_who_left_halfway_costs_less(strategy: str) -> None:
    m = mode(strategy)
    whole = rate_match(m, MatchView(TEAMS, (1, 0), 100.0), STATES)
    part = rate_match(m, MatchView(TEAMS, (1, 0), 100.0, stats(a=900, b=450, c=900, d=900)), STATES)
    # a played it all beside b, who left halfway: the side was weaker, the loss less surprising.
    assert whole["a"].state.rating < part["a"].state.rating < STATES["a"].rating
    # b moves, the same way, by less than a whole match would move them.
    assert whole["b"].state.rating < part["b"].state.rating < STATES["b"].rating
    # The winners beat a weakened side: they gain less.
    assert STATES["c"].rating < part["c"].state.rating < whole["c"].state.rating


def test_a_duels_seconds_change_nothing() -> None:
    m = mode()
    duel = (("a",), ("b",))
    whole = rate_match(m, MatchView(duel, (0, 1), 100.0), STATES)
    timed = rate_match(m, MatchView(duel, (0, 1), 100.0, stats(a=300, b=900)), STATES)
    assert whole == timed


def test_a_quitter_takes_their_forced_loss_whole() -> None:
    m = mode()
    view = MatchView(TEAMS, (1, 0), 100.0, stats(a=900, b=90, c=900, d=900))
    whole_view = replace(view, stats=None)
    forced = rate_player(m, "b", STATES["b"], view, STATES, forced_score=0.0)
    plain = rate_player(m, "b", STATES["b"], whole_view, STATES, forced_score=0.0)
    # Their side was weaker (so the loss surprises less) but their share is not reduced.
    assert plain.state.rating < forced.state.rating < STATES["b"].rating
    as_rated = rate_player(m, "b", STATES["b"], view, STATES)
    assert forced.state.deviation < as_rated.state.deviation


@settings(max_examples=300, deadline=None)
@given(
    algorithm=st.sampled_from([Glicko2Config(), Glicko1Config(), EloConfig()]),
    share=st.floats(MIN_SHARE, 0.99),
    rating=st.floats(1000.0, 2000.0),
    deviation=st.floats(40.0, 350.0),
    score=st.sampled_from([0.0, 1.0]),
)
def test_a_share_scales_the_step_between_none_and_a_whole_match(
    algorithm: Glicko2Config | Glicko1Config | EloConfig,
    share: float,
    rating: float,
    deviation: float,
    score: float,
) -> None:
    own = Skill(1500.0, deviation, 0.06)
    whole = algorithm.rate(own, [Result(rating, 100.0, score)])
    part = algorithm.rate(own, [Result(rating, 100.0, score, 1.0, share)])
    # Same direction, strictly less far than the whole match moves.
    assert abs(part.rating - own.rating) < abs(whole.rating - own.rating)
    assert (part.rating - own.rating) * (whole.rating - own.rating) > 0.0
    if isinstance(algorithm, EloConfig):
        # Elo's step is the share of the whole one.
        assert part.rating - own.rating == pytest.approx(share * (whole.rating - own.rating))
    else:
        # Less information: less certain after it.
        assert part.deviation > whole.deviation


def test_a_part_time_change_is_explained_with_the_share_played() -> None:
    m = mode()
    view = MatchView(TEAMS, (1, 0), 100.0, stats(a=900, b=450, c=900, d=900))
    update = rate_match(m, view, STATES)["b"]
    why = explain(m, STATES["b"], update, 100.0)
    assert why.played == 0.5
    # The step still multiplies the surprise into the change.
    assert why.step is not None
    change = update.state.rating - STATES["b"].rating
    assert why.step * (why.score - why.expected) == pytest.approx(change, rel=1e-9)
    assert Explanation.from_json(why.to_json()) == why
    words = describe(
        why, player_id="b", match_id="m1", outcome="loss", before=None, after=(1500.0, 100.0)
    )
    assert "They played 50% of the match, so it counted for 50% of a whole one" in " ".join(words)
    whole = explain(m, STATES["a"], rate_match(m, view, STATES)["a"], 100.0)
    assert whole.played is None and "played" not in whole.to_json()


@pytest.mark.parametrize("bad", [0.0, -0.5, 1.5, "half"])
def test_an_explanation_read_back_refuses_a_share_out_of_range(bad: object) -> None:
    with pytest.raises(ValueError, match="played"):
        Explanation.from_json({"score": 0.0, "expected": 0.5, "step": 10.0, "played": bad})


def test_a_mode_that_turns_part_time_play_off_rates_as_without_the_seconds() -> None:
    off = parse_modes({"modes": {"m": {"part_time": False}}}).get("m")
    on = parse_modes({"modes": {"m": {}}}).get("m")
    assert (on.part_time, off.part_time) == (True, False)
    view = MatchView(TEAMS, (1, 0), 100.0, stats(a=900, b=450, c=900, d=900))
    plain = replace(view, stats=None)
    assert rate_match(off, view, STATES) == rate_match(off, plain, STATES)
    assert rate_match(on, view, STATES)["a"].state != rate_match(on, plain, STATES)["a"].state


def test_composite_team_keeps_the_gap_to_the_share_weighted_side() -> None:
    shares = ((1.0, 0.5, 1.0), (1.0, 1.0, 0.25))
    own = SIDES[0][0]
    (result,) = part_time_results(
        TeamStrategy.COMPOSITE_TEAM, own, 1.0, 0, SIDES, shares, [1.0, 1.0], 0.0
    )
    mine = (1500.0 + 0.5 * 1700.0 + 1400.0) / 2.5
    theirs = (1600.0 + 1550.0 + 0.25 * 1450.0) / 2.25
    assert result.rating == pytest.approx(theirs + (own.rating - mine))
    assert result.share == 1.0


def test_a_whole_match_player_facing_part_timers_individually_played_it_all() -> None:
    m = mode("individual")
    view = MatchView(TEAMS, (0, 1), 100.0, stats(a=900, b=900, c=450, d=450))
    updates = rate_match(m, view, STATES)
    why = explain(m, STATES["a"], updates["a"], 100.0)
    assert why.played is None
    assert explain(m, STATES["c"], updates["c"], 100.0).played == 0.5


def test_a_quitter_who_left_early_meets_the_same_opponent_as_a_teammate_in_shared() -> None:
    # The side's sums hold the quitter at their real share; only what they take is whole.
    m = mode("shared")
    view = MatchView(TEAMS, (1, 0), 100.0, stats(a=900, b=270, c=900, d=900))
    forced = rate_player(m, "b", STATES["b"], view, STATES, forced_score=0.0)
    as_rated = rate_player(m, "b", STATES["b"], view, STATES)
    (r_forced,) = forced.opponents
    (r_rated,) = as_rated.opponents
    assert isinstance(r_forced, Result) and isinstance(r_rated, Result)
    assert (r_forced.rating, r_forced.deviation) == (r_rated.rating, r_rated.deviation)
    assert r_forced.share == forced.played == 1.0
    assert r_rated.share == as_rated.played == pytest.approx(0.3)


def test_explain_weighs_each_result_by_its_slope_and_the_share_taken() -> None:
    # individual: a, there all match, meets c (whole) and d (a fifth): two results of
    # different shares; expected is their (slope x share)-weighted mean, computed here.
    m = mode("individual")
    view = MatchView(TEAMS, (0, 1), 100.0, stats(a=900, b=900, c=900, d=180))
    update = rate_match(m, view, STATES)["a"]
    results = [r for r in update.opponents if isinstance(r, Result)]
    assert sorted(r.share for r in results) == [pytest.approx(0.2), 1.0]
    pairwise = m.pairwise
    assert pairwise is not None
    terms = [(pairwise.update_terms(update.own, r), r.share) for r in results]
    weight = sum(slope * share for (_, slope), share in terms)
    expected = sum(e * slope * share for (e, slope), share in terms) / weight
    why = explain(m, STATES["a"], update, 100.0)
    assert why.expected == pytest.approx(expected, rel=1e-12)
    plain = sum(e * slope for (e, slope), _ in terms) / sum(slope for (_, slope), _ in terms)
    assert abs(why.expected - plain) > 1e-6  # the shares matter here


def test_a_part_time_update_says_its_share_of_what_a_whole_one_says_of_the_prior() -> None:
    m = parse_modes({"modes": {"m": {"population": {"window_days": 1.0}}}}).get("m")
    population = start(m)
    own = Skill(1650.0, 200.0, 0.06)
    whole = prior_evidence(m, population, 1, own, [Result(1500.0, 120.0, 1.0)])
    part = prior_evidence(m, population, 1, own, [Result(1500.0, 120.0, 1.0, 1.0, 0.4)])
    assert whole.prior_information > 0.0
    assert part.prior_score == pytest.approx(0.4 * whole.prior_score)
    assert part.prior_information == pytest.approx(0.4 * whole.prior_information)


def test_every_prediction_of_the_evidence_sees_the_shares() -> None:
    # A mode that learns its drift and debut offset: the drift's, the offset's, the size
    # edge's and the decisiveness's evidence all change with a side missing a player.
    m = parse_modes({"modes": {"m": {"population": {"window_days": 1.0}}}}).get("m")
    population = start(m)
    rules = population.rules(m)
    skills = [
        [Skill(1500.0 + 40 * i, 150.0, 0.06) for i in range(3)],
        [Skill(1480.0 + 30 * i, 90.0, 0.06) for i in range(3)],
    ]
    moved = [[Skill(s.rating + 3.0, s.deviation + 2.0, 0.06) for s in team] for team in skills]
    sensitivities = [[1.0, 0.5, 0.0], [0.2, 0.0, 0.0]]
    teams = [["a", "b", "c"], ["d", "e", "f"]]
    lineups: dict[str, int] = {}
    plain = match_part(rules, population, teams, (0, 1), skills, lineups, moved, sensitivities)
    played = ((1.0, 1.0, 1.0), (1.0, 0.3, 1.0))
    part = match_part(
        rules, population, teams, (0, 1), skills, lineups, moved, sensitivities, played
    )
    for name in ("drift_score", "offset_score", "edge_score", "decisiveness_score"):
        index = NAMES.index(name)
        assert plain.encode()[index] != part.encode()[index], name
