"""Query plans: the commands each cache method sends and how replies become answers.

Replies here are hand-made in the shapes Redis returns; the integration tests send the same
plans to a real Valkey.
"""

from __future__ import annotations

from typing import Any

import pytest

from stream.cache.codec import encode_fields
from stream.cache.entry import CachedRating
from stream.cache.keys import KeyLayout
from stream.cache.queries import (
    AROUND_SCRIPT,
    LeaderboardEntry,
    RatingQueries,
    UnknownModeError,
    nearest_first,
)
from stream.config.modes import Modes, parse_modes
from stream.ratings import probability
from stream.ratings.elo import EloConfig
from stream.ratings.engine import initial_state
from stream.ratings.skill import Skill
from stream.ratings.teams import TeamStrategy

MODES = parse_modes({"modes": {"elo-duel": {"algorithm": "elo"}}})
QUERIES = RatingQueries(MODES, KeyLayout("t"))


def hash_reply(entry: CachedRating) -> dict[str, str]:
    pairs = encode_fields(entry)
    return dict(zip(pairs[::2], pairs[1::2], strict=True))


def known(player_id: str, rating: float, deviation: float = 50.0) -> CachedRating:
    return CachedRating(player_id, "elo-duel", rating, deviation, None, 10, 3, 4, 1, "x")


# The reply for a mode's population key when the cache holds none (stream/cache/population.py):
# every mode here learns its population (the built-in default), so every plan reads it first.
NO_POPULATION: dict[str, str] = {}


def test_get_many_sends_one_hgetall_per_distinct_player() -> None:
    plan = QUERIES.get_many("elo-duel", ["a", "b", "a"])
    assert plan.commands == (
        ("HGETALL", "t:{elo-duel}:population"),
        ("HGETALL", "t:{elo-duel}:player:a"),
        ("HGETALL", "t:{elo-duel}:player:b"),
    )
    a = known("a", 1600.0)
    found = plan.decode([NO_POPULATION, hash_reply(a), {}])
    assert list(found) == ["a", "b"]
    assert found["a"] == a
    default = initial_state(MODES.get("elo-duel"))
    assert found["b"] == CachedRating.unknown_default("elo-duel", "b", default)
    assert found["b"].unknown and found["b"].rating == EloConfig().initial().rating


def test_empty_get_many_needs_no_players() -> None:
    plan = QUERIES.get_many("m", [])
    assert plan.commands == (("HGETALL", "t:{m}:population"),)
    assert plan.decode([NO_POPULATION]) == {}
    fixed = parse_modes({"default": {"population": {"window_days": 0.0}}})
    plan = RatingQueries(fixed, KeyLayout("t")).get_many("m", [])
    assert plan.commands == () and plan.decode([]) == {}


def test_a_lone_string_is_not_a_list_of_ids() -> None:
    with pytest.raises(TypeError, match="not one string"):
        QUERIES.get_many("m", "abc")


def test_rejected_mode_is_a_clear_error() -> None:
    strict = RatingQueries(parse_modes({"default": {"unlisted": "reject"}, "modes": {"a": {}}}))
    assert strict.get_many("a", ["p"]).commands
    with pytest.raises(UnknownModeError, match="mode 'b' is not configured"):
        strict.get_many("b", ["p"])
    with pytest.raises(UnknownModeError):
        strict.win_probability("b", "p", "q")


def test_window_reads_both_sides_of_the_rating() -> None:
    plan = QUERIES.window("m", 1500.0, 100.0, limit=3)
    key = "t:{m}:by-rating"
    assert plan.commands == (
        ("ZRANGE", key, "1500.0", "1600.0", "BYSCORE", "LIMIT", 0, 3, "WITHSCORES"),
        ("ZRANGE", key, "(1500.0", "1400.0", "BYSCORE", "REV", "LIMIT", 0, 3, "WITHSCORES"),
    )
    above = [(b"x", 1500.0), (b"y", 1590.0), (b"z", 1600.0)]
    below = [b"w", b"1499", b"v", b"1420", b"u", b"1400"]
    assert plan.decode([above, below]) == [("x", 1500.0), ("w", 1499.0), ("v", 1420.0)]


def test_nearest_first_breaks_ties_by_lower_rating_then_id() -> None:
    candidates = [("b", 1510.0), ("a", 1490.0), ("d", 1500.0), ("c", 1510.0)]
    assert nearest_first(1500.0, candidates, 10) == [
        ("d", 1500.0),
        ("a", 1490.0),
        ("b", 1510.0),
        ("c", 1510.0),
    ]


@pytest.mark.parametrize(
    ("rating", "width", "limit"),
    [(float("nan"), 1.0, 1), (1.0, -1.0, 1), (1.0, float("inf"), 1), (1.0, 1.0, 0)],
)
def test_window_refuses_bad_arguments(rating: float, width: float, limit: int) -> None:
    with pytest.raises(ValueError):
        QUERIES.window("m", rating, width, limit)


def test_win_probability_uses_the_modes_algorithm() -> None:
    plan = QUERIES.win_probability("elo-duel", "a", "b")
    a = known("a", 1700.0)
    got = plan.decode([NO_POPULATION, hash_reply(a), {}])
    default = EloConfig().initial()
    # Both at rating + the mode's experience offset: a has 3 games, unknown b none.
    offset = MODES.get("elo-duel").experience.offset
    a_plays = Skill(1700.0 + offset(3), 50.0)
    b_plays = Skill(default.rating + offset(0), default.deviation)
    assert offset(0) < offset(3) < 0.0
    assert got == probability.win_probability(EloConfig(), a_plays, b_plays)


def test_team_plans_fetch_each_player_once() -> None:
    plan = QUERIES.match_quality("elo-duel", ["a", "b"], ["c", "a"])
    assert len(plan.commands) == 4  # the population and three players
    a, b, c = known("a", 1600.0), known("b", 1400.0), known("c", 1550.0, 80.0)
    replies = [NO_POPULATION, hash_reply(a), hash_reply(b), hash_reply(c)]
    algorithm = MODES.get("elo-duel").algorithm
    assert plan.decode(replies) == probability.match_quality(algorithm, [a, b], [c, a])
    plan = QUERIES.team_win_probability("elo-duel", ["a", "b"], ["c", "a"])
    assert plan.decode(replies) == probability.team_win_probability(algorithm, [a, b], [c, a])


def test_team_plans_see_the_teams_as_the_mode_rates_them() -> None:
    # A casual mode of reshuffled, uneven teams: shared, 80 points for twice the players.
    table = {"teams": "shared", "population": {"size_edge": 80.0}, "algorithm": "elo"}
    modes = parse_modes({"modes": {"casual": {**table, "experience": {"debut_offset": 0.0}}}})
    queries = RatingQueries(modes, KeyLayout("t"))
    entries = {
        p: CachedRating(p, "casual", r, 0.0, None, 10, 30, 4, 1, "x")
        for p, r in (("a", 1600.0), ("b", 1400.0), ("c", 1550.0))
    }
    replies = [NO_POPULATION, *(hash_reply(entries[p]) for p in "abc")]
    mode = modes.get("casual")
    a, b, c = (entries[p].effective_skill(mode.experience) for p in "abc")
    plan = queries.team_win_probability("casual", ["a", "b"], ["c"])
    want = probability.team_win_probability(
        mode.algorithm, [a, b], [c], TeamStrategy.SHARED, size_edge=80.0
    )
    assert plan.decode(replies) == want
    flat = probability.team_win_probability(mode.algorithm, [a, b], [c], TeamStrategy.SHARED)
    assert want > flat
    quality = queries.match_quality("casual", ["a", "b"], ["c"]).decode(replies)
    assert quality == probability.match_quality(
        mode.algorithm, [a, b], [c], TeamStrategy.SHARED, size_edge=80.0
    )


def test_team_plans_see_a_backfill_at_the_share_of_the_match_left() -> None:
    # Sides of two; b joins the first with 40% of the match left: the first is weaker.
    table = {"teams": "shared", "population": {"size_edge": 80.0}, "algorithm": "elo"}
    modes = parse_modes({"modes": {"casual": {**table, "experience": {"debut_offset": 0.0}}}})
    queries = RatingQueries(modes, KeyLayout("t"))
    entries = {p: CachedRating(p, "casual", 1500.0, 0.0, None, 10, 30, 4, 1, "x") for p in "abcd"}
    replies = [NO_POPULATION, *(hash_reply(entries[p]) for p in "abcd")]
    mode = modes.get("casual")
    skills = [entries[p].effective_skill(mode.experience) for p in "abcd"]
    shares = ([1.0, 0.4], [1.0, 1.0])
    plan = queries.team_win_probability("casual", ["a", "b"], ["c", "d"], shares)
    want = probability.team_win_probability(
        mode.algorithm, skills[:2], skills[2:], TeamStrategy.SHARED, 80.0, shares=shares
    )
    assert plan.decode(replies) == want < 0.5
    whole = queries.match_quality("casual", ["a", "b"], ["c", "d"]).decode(replies)
    part = queries.match_quality("casual", ["a", "b"], ["c", "d"], shares).decode(replies)
    assert part < whole
    # A share below the ratings' floor counts as the floor, as a rating counts it.
    tiny = queries.team_win_probability("casual", ["a", "b"], ["c", "d"], ([1.0, 1e-9], [1, 1]))
    floored = queries.team_win_probability("casual", ["a", "b"], ["c", "d"], ([1.0, 0.05], [1, 1]))
    assert tiny.decode(replies) == floored.decode(replies)
    # A mode that ignores the seconds sees the backfill whole, as its workers rate it.
    off_table = {**table, "part_time": False, "experience": {"debut_offset": 0.0}}
    off = parse_modes({"modes": {"casual": off_table}})
    plan = RatingQueries(off, KeyLayout("t")).match_quality(
        "casual", ["a", "b"], ["c", "d"], shares
    )
    assert plan.decode(replies) == whole
    # Nor is a duel read so: its seconds are no part-time play (stream.ratings.parttime).
    duel = [NO_POPULATION, hash_reply(entries["a"]), hash_reply(entries["c"])]
    plain = queries.team_win_probability("casual", ["a"], ["c"]).decode(duel)
    halved = queries.team_win_probability("casual", ["a"], ["c"], ([0.5], [1.0])).decode(duel)
    assert halved == plain == 0.5


@pytest.mark.parametrize(
    ("shares", "message"),
    [
        (([1.0], [1.0]), "one per member"),
        (([1.0, 0.0], [1.0]), "not within"),
        (([1.0, 1.5], [1.0]), "not within"),
        (([1.0, "x"], [1.0]), "not a number"),
        (([1.0, 1.0],), "one list per team"),
    ],
)
def test_shares_must_fit_the_teams(shares: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        QUERIES.match_quality("m", ["a", "b"], ["c"], shares)


@pytest.mark.parametrize("teams", [([], ["a"]), (["a"], []), ("ab", ["c"])])
def test_teams_must_be_non_empty_sequences(teams: tuple[list[str], list[str]]) -> None:
    with pytest.raises(ValueError, match="non-empty sequence"):
        QUERIES.team_win_probability("m", *teams)


def test_top() -> None:
    plan = QUERIES.top("m", 2, "conservative")
    assert plan.commands == (("ZRANGE", "t:{m}:by-conservative", 0, 1, "REV", "WITHSCORES"),)
    assert plan.decode([[(b"a", 9.0), (b"b", 8.0)]]) == [
        LeaderboardEntry(1, "a", 9.0),
        LeaderboardEntry(2, "b", 8.0),
    ]
    with pytest.raises(ValueError, match="n must be an integer >= 1"):
        QUERIES.top("m", 0)
    with pytest.raises(ValueError, match="unknown board"):
        QUERIES.top("m", 1, "wins")


def test_around() -> None:
    plan = QUERIES.around("m", "p", 1)
    assert plan.commands == (("EVAL_RO", AROUND_SCRIPT, 1, "t:{m}:by-rank-points", "p", 1),)
    assert plan.decode([[4, [b"q", b"30", b"p", b"20", b"r", b"10"]]]) == [
        LeaderboardEntry(5, "q", 30.0),
        LeaderboardEntry(6, "p", 20.0),
        LeaderboardEntry(7, "r", 10.0),
    ]
    assert plan.decode([None]) == []
    with pytest.raises(ValueError, match="n must be an integer >= 0"):
        QUERIES.around("m", "p", -1)


def test_default_modes_accept_any_mode() -> None:
    assert RatingQueries(Modes()).get_many("anything", ["p"]).commands


def population_reply(deviation: str, edge: float, persistence: float, decisive: float) -> object:
    """The population hash as HGETALL returns it (bytes, as redis-py without decoding)."""
    fields = {
        "at": "1780000000000",
        "deviation": deviation,
        "size_edge": repr(edge),
        "persistence": repr(persistence),
        "decisiveness": repr(decisive),
    }
    return {k.encode(): v.encode() for k, v in fields.items()}


def test_predictions_use_the_population_the_workers_learned() -> None:
    """A learning mode's cached population: an unknown player has its prior deviation, and the
    predictions its size edge, decisiveness and the strategy its persistence makes ``auto``."""
    queries = RatingQueries(Modes(), KeyLayout("t"))
    config = Modes().get("m")
    learned = population_reply("300.0", 40.0, 0.1, 1.3)
    found = queries.get_many("m", ["new"]).decode([learned, {}])["new"]
    assert found.unknown and found.deviation == pytest.approx(300.0)
    assert found.deviation != initial_state(config).deviation
    entries = {
        p: CachedRating(p, "m", r, 60.0, 0.06, 10, 30, 4, 1, "x")
        for p, r in (("a", 1600.0), ("b", 1400.0), ("c", 1550.0))
    }
    replies = [learned, *(hash_reply(entries[p]) for p in "abc")]
    a, b, c = (entries[p].effective_skill(config.experience) for p in "abc")
    got = queries.team_win_probability("m", ["a", "b"], ["c"]).decode(replies)
    want = probability.team_win_probability(
        config.algorithm, [a, b], [c], TeamStrategy.SHARED, size_edge=40.0, decisiveness=1.3
    )
    assert got == pytest.approx(want, abs=1e-12)
    before = queries.team_win_probability("m", ["a", "b"], ["c"]).decode([{}, *replies[1:]])
    assert before != got  # without the key: the modes file's values
    assert queries.win_probability("m", "a", "c").decode(
        [learned, hash_reply(entries["a"]), hash_reply(entries["c"])]
    ) == probability.win_probability(config.algorithm, a, c, 1.3)


def test_the_cached_drift_period_is_the_one_in_force() -> None:
    """The readers grow a deviation with the drift period the workers learned; a hash written
    before it was learned (no field, or empty) leaves the modes file's."""
    queries = RatingQueries(Modes(), KeyLayout("t"))
    reply = population_reply("300.0", 40.0, 0.9, 1.0)
    assert isinstance(reply, dict)
    learned = {**reply, b"drift_period": b"3.5"}
    assert queries.rules("m").decode([learned]).algorithm.drift_period == 3.5  # type: ignore[union-attr]
    configured = Modes().get("m").algorithm.drift_period  # type: ignore[union-attr]
    for older in (reply, {**reply, b"drift_period": b""}):
        assert queries.rules("m").decode([older]).algorithm.drift_period == configured  # type: ignore[union-attr]


def test_the_cached_debut_offset_is_the_one_in_force() -> None:
    """The readers start a newcomer's effective rating from the debut offset the workers
    learned; a hash written before it was learned (no field, or empty) leaves the modes file's."""
    queries = RatingQueries(Modes(), KeyLayout("t"))
    reply = population_reply("300.0", 40.0, 0.9, 1.0)
    assert isinstance(reply, dict)
    learned = {**reply, b"debut_offset": b"-120.5"}
    assert queries.rules("m").decode([learned]).experience.debut_offset == -120.5
    configured = Modes().get("m").experience.debut_offset
    assert configured == -300.0
    for older in (reply, {**reply, b"debut_offset": b""}):
        assert queries.rules("m").decode([older]).experience.debut_offset == configured
    # One a worker never writes (past the accepted range) is ignored as a whole.
    wild = {**reply, b"debut_offset": b"-1e9", b"size_edge": b"55.0"}
    assert queries.rules("m").decode([wild]).population.size_edge != 55.0


@pytest.mark.parametrize(
    "reply",
    [
        {b"at": b"1", b"deviation": b"x", b"size_edge": b"1", b"persistence": b"1"},
        {b"deviation": b"", b"size_edge": b"nan", b"persistence": b"0.5", b"decisiveness": b"1"},
        {b"deviation": b"", b"size_edge": b"1", b"persistence": b"7", b"decisiveness": b"1"},
    ],
)
def test_a_population_key_the_readers_cannot_use_is_ignored(reply: object) -> None:
    queries = RatingQueries(Modes(), KeyLayout("t"))
    assert queries.rules("m").decode([reply]) == Modes().get("m")


def test_team_plans_see_a_party_at_the_party_edge_the_workers_learned() -> None:
    """A candidate match's pre-made groups (``parties``): each member plays at the cached
    population's party edge, as the workers rate a match that names them; a hash written
    before parties were learned (no field) has none, and so has one whose edge is out of range."""
    queries = RatingQueries(Modes(), KeyLayout("t"))
    config = Modes().get("m")
    reply = population_reply("300.0", 0.0, 0.1, 1.0)
    assert isinstance(reply, dict)
    learned = {**reply, b"party_edge": b"75.0"}
    entries = {p: CachedRating(p, "m", 1500.0, 60.0, 0.06, 10, 30, 4, 1, "x") for p in "abcd"}
    players = [hash_reply(entries[p]) for p in "abcd"]
    a, b, c, d = (entries[p].effective_skill(config.experience) for p in "abcd")
    duo = [["a", "b"]]
    got = queries.team_win_probability("m", ["a", "b"], ["c", "d"], parties=duo)
    lifted = [Skill(s.rating + 75.0, s.deviation, s.volatility) for s in (a, b)]
    want = probability.team_win_probability(config.algorithm, lifted, [c, d], TeamStrategy.SHARED)
    assert got.decode([learned, *players]) == pytest.approx(want, abs=1e-12)
    assert want > 0.55
    # The same players alone, a party of one, an older hash, or one out of range: even.
    for parties, population in (
        (None, learned),
        ([["a"], ["c"]], learned),
        (duo, reply),
        (duo, {**reply, b"party_edge": b"5000"}),
    ):
        plan = queries.team_win_probability("m", ["a", "b"], ["c", "d"], parties=parties)
        assert plan.decode([population, *players]) == pytest.approx(0.5, abs=1e-12)
    quality = queries.match_quality("m", ["a", "b"], ["c", "d"], parties=duo)
    even = queries.match_quality("m", ["a", "b"], ["c", "d"])
    assert quality.decode([learned, *players]) < even.decode([learned, *players])


@pytest.mark.parametrize(
    ("parties", "message"),
    [
        ([["a", "z"]], "'z' is in neither team"),
        ([["a", "c"]], "'c' is not on the team of 'a'"),
        ([["a", "b"], ["b"]], "'b' is in two parties"),
        ([[]], "non-empty sequence"),
        ([["a", ["b"]]], "non-empty sequence of player ids"),
        ("ab", "sequence of parties"),
    ],
)
def test_parties_must_fit_the_teams(parties: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        QUERIES.match_quality("m", ["a", "b"], ["c"], parties=parties)
