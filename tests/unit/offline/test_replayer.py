"""Offline replay (stream.offline.replayer) over hand-built HistoryMatch objects."""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream.config.modes import Modes, built_in_mode
from stream.history import HistoryMatch, SeedRating
from stream.offline.replayer import FinalRating, Replayer, seeded_state
from stream.ratings.carryover import StartConfig
from stream.ratings.elo import EloConfig
from stream.ratings.engine import rate_match, rate_player
from stream.ratings.glicko1 import Glicko1Config
from stream.ratings.glicko2 import Glicko2Config
from stream.ratings.modeconfig import ModeConfig, QuitPolicy
from stream.ratings.seasons import SeasonsConfig
from stream.ratings.skill import PlayerState

DAY = 86400.0
T0 = 1_700_000_000.0
SCALE = 173.7178
GLICKO2_FRESH_DEVIATION = 2.015 * SCALE
ELO_T = 400.0 / math.log(10.0)

_rows = iter(range(2, 10**9))


def hm(
    at: float,
    teams: Sequence[Sequence[str]],
    ranks: Sequence[int],
    mode: str | None = None,
    quitters: Iterable[str] = (),
) -> HistoryMatch:
    row = next(_rows)
    return HistoryMatch(
        row,
        f"m{row}",
        mode,
        at,
        tuple(tuple(team) for team in teams),
        tuple(ranks),
        None,
        frozenset(quitters),
    )


def one_v_one(
    at: float, a: str, b: str, score_a: float = 1.0, mode: str | None = None
) -> HistoryMatch:
    ranks = {1.0: (0, 1), 0.5: (0, 0), 0.0: (1, 0)}[score_a]
    return hm(at, ((a,), (b,)), ranks, mode)


def glicko2_expected(ra: float, da: float, rb: float, db: float) -> float:
    phi_sq = (da * da + db * db) / (SCALE * SCALE)
    g = 1.0 / math.sqrt(1.0 + 3.0 * phi_sq / math.pi**2)
    return 1.0 / (1.0 + math.exp(-g * (ra - rb) / SCALE))


def snapshot(replayer: Replayer) -> dict[str, dict[str, PlayerState]]:
    return {name: dict(table) for name, table in replayer.tables.items()}


# --- write-back order ------------------------------------------------------------------------


def test_every_player_meets_the_others_pre_match_state() -> None:
    mode = built_in_mode("default")
    replayer = Replayer(Modes())
    replayer.apply(one_v_one(T0, "a", "x", 1.0))
    replayer.apply(one_v_one(T0 + 60, "b", "y", 0.0))
    before = dict(replayer.tables["default"])
    match = one_v_one(T0 + 120, "a", "b", 1.0)

    updates = replayer.apply(match)

    expected = rate_match(mode, match, before)
    assert updates == expected
    table = replayer.tables["default"]
    assert table["a"] == expected["a"].state
    assert table["b"] == expected["b"].state
    assert table["x"] is before["x"] and table["y"] is before["y"]
    # Had "a" been written back first, "b" would have met a different opponent.
    sequential = rate_player(mode, "b", before["b"], match, {**before, "a": table["a"]})
    assert sequential.state != table["b"]


def test_team_match_is_rated_against_pre_match_states() -> None:
    mode = built_in_mode("default")
    replayer = Replayer(Modes())
    replayer.apply(hm(T0, (("a", "b"), ("c", "d")), (0, 1)))
    before = dict(replayer.tables["default"])
    match = hm(T0 + 60, (("a", "c"), ("b", "d")), (1, 0))
    assert replayer.apply(match) == rate_match(mode, match, before)


# --- modes -----------------------------------------------------------------------------------

BLITZ = ModeConfig("blitz", EloConfig())
PER_MODE = Modes(listed={"blitz": BLITZ})


def test_matches_apply_per_mode_in_separate_tables() -> None:
    replayer = Replayer(PER_MODE)
    blitz = one_v_one(T0, "a", "b", 1.0, mode="blitz")
    rapid = one_v_one(T0 + 1, "a", "b", 0.0, mode="rapid")
    unnamed = one_v_one(T0 + 2, "a", "b", 0.5, mode=None)
    for match in (blitz, rapid, unnamed):
        replayer.apply(match)

    tables = replayer.tables
    assert set(tables) == {"blitz", "rapid", "default"}
    # Elo: 1500 + 32 * (1 - 0.5).
    assert tables["blitz"]["a"] == PlayerState(
        1516.0, 0.0, None, tables["blitz"]["a"].rank_points, 1, T0
    )
    assert tables["blitz"]["b"].rating == 1484.0
    # Unlisted modes use the Glicko-2 default, each from fresh states.
    rapid_expected = rate_match(built_in_mode("rapid"), rapid, {})
    assert tables["rapid"] == {pid: u.state for pid, u in rapid_expected.items()}
    default_expected = rate_match(built_in_mode("default"), unnamed, {})
    assert tables["default"] == {pid: u.state for pid, u in default_expected.items()}
    assert tables["rapid"]["a"].rating < 1500.0 < tables["rapid"]["b"].rating
    assert all(s.games == 1 for table in tables.values() for s in table.values())


def test_mode_override_rates_everything_as_one_mode() -> None:
    replayer = Replayer(PER_MODE, mode_override="blitz")
    matches = [
        one_v_one(T0, "a", "b", 1.0, mode="blitz"),
        one_v_one(T0 + 1, "a", "b", 1.0, mode="rapid"),
        one_v_one(T0 + 2, "a", "b", 1.0, mode=None),
    ]
    states: dict[str, PlayerState] = {}
    for match in matches:
        replayer.apply(match)
        states.update({pid: u.state for pid, u in rate_match(BLITZ, match, states).items()})
    assert set(replayer.tables) == {"blitz"}
    assert replayer.tables["blitz"] == states
    assert states["a"].games == 3 and states["a"].deviation == 0.0


def test_mode_of_names_the_table() -> None:
    replayer = Replayer(PER_MODE)
    name, mode, table = replayer.mode_of(one_v_one(T0, "a", "b", mode=None))
    assert (name, mode.name, table) == ("default", "default", {})
    name, mode, _ = replayer.mode_of(one_v_one(T0, "a", "b", mode="blitz"))
    assert (name, mode) == ("blitz", BLITZ)


# --- quitters --------------------------------------------------------------------------------


def test_cancel_policy_quitter_loses_and_the_opponent_is_untouched() -> None:
    mode = built_in_mode("default")
    replayer = Replayer(Modes())
    replayer.apply(one_v_one(T0, "a", "b", 0.5))
    before = dict(replayer.tables["default"])
    # "a" is ranked first but quit: scored a loss all the same.
    quit_match = hm(T0 + 60, (("a",), ("b",)), (0, 1), quitters={"a"})

    updates = replayer.apply(quit_match)

    assert set(updates) == {"a"}
    table = replayer.tables["default"]
    assert table["a"] == rate_player(mode, "a", before["a"], quit_match, before, 0.0).state
    assert table["a"].rating < before["a"].rating
    assert table["a"].games == 2
    assert table["b"] is before["b"]
    assert table["b"].games == 1


def test_cancel_policy_never_adds_a_new_opponent() -> None:
    replayer = Replayer(Modes())
    replayer.apply(hm(T0, (("a",), ("b",)), (1, 0), quitters={"a"}))
    assert set(replayer.tables["default"]) == {"a"}
    assert replayer.tables["default"]["a"].rating < 1500.0


def test_normal_policy_rates_the_others_from_the_ranks() -> None:
    mode = ModeConfig("default", quits=QuitPolicy.NORMAL)
    replayer = Replayer(Modes(default=mode))
    match = hm(T0, (("a",), ("b",)), (0, 1), quitters={"a"})
    updates = replayer.apply(match)
    assert updates["a"].score == 0.0 and updates["b"].score == 0.0
    assert updates["b"] == rate_player(mode, "b", None, match, {})


# --- seeds -----------------------------------------------------------------------------------


def glicko2_points(rating: float, deviation: float) -> int:
    lo, hi = 1500.0 - 6.045 * SCALE, 1500.0 + 6.045 * SCALE
    points = (rating - 3.0 * deviation - lo) / (hi - lo) * 10000.0
    return round(min(max(points, 0.0), 10000.0))


@pytest.mark.parametrize("specific_first", [True, False])
def test_a_mode_seed_beats_an_every_mode_seed(specific_first: bool) -> None:
    general = SeedRating(1, "p", None, 1800.0, 100.0, 0.05)
    specific = SeedRating(2, "p", "m1", 2000.0, 60.0, 0.07)
    seeds = [specific, general] if specific_first else [general, specific]
    replayer = Replayer(Modes(), seeds=seeds)
    mode = built_in_mode("m")

    m1 = one_v_one(T0, "p", "q", 1.0, mode="m1")
    m2 = one_v_one(T0, "p", "q", 1.0, mode="m2")
    u1 = replayer.apply(m1)
    u2 = replayer.apply(m2)

    # Seeds without games are established players.
    settled = mode.experience.settled_games
    seed1 = PlayerState(2000.0, 60.0, 0.07, glicko2_points(2000.0, 60.0), settled, None)
    seed2 = PlayerState(1800.0, 100.0, 0.05, glicko2_points(1800.0, 100.0), settled, None)
    # Worked on paper: lo = 1500 - 1050.124, (1820 - lo) / 2100.248 and (1500 - lo) / 2100.248.
    assert seed1.rank_points == 6524 and seed2.rank_points == 5000
    assert u1["p"] == rate_player(mode, "p", seed1, m1, {"p": seed1})
    assert u2["p"] == rate_player(mode, "p", seed2, m2, {"p": seed2})
    assert u1["p"].state.games == u2["p"].state.games == settled + 1
    # The unseeded opponent starts fresh and met the seeded rating.
    assert u1["q"] == rate_player(mode, "q", None, m1, {"p": seed1})


def test_a_seed_applies_only_to_a_player_the_table_does_not_know() -> None:
    seed = SeedRating(1, "p", None, 1900.0, 80.0, None)
    replayer = Replayer(Modes(), seeds=[seed])
    replayer.apply(one_v_one(T0, "p", "q", 0.0))
    after_first = replayer.tables["default"]["p"]
    second = one_v_one(T0 + 60, "p", "q", 0.0)
    before = dict(replayer.tables["default"])
    assert replayer.apply(second)["p"] == rate_player(
        built_in_mode("m"), "p", after_first, second, before
    )
    assert replayer.tables["default"]["p"].games == built_in_mode("m").experience.settled_games + 2


def test_seeded_state_glicko2() -> None:
    mode = ModeConfig("g2", Glicko2Config())
    state = seeded_state(mode, SeedRating(1, "p", None, 1700.0, 90.0, 0.05, 0))
    assert state == PlayerState(1700.0, 90.0, 0.05, glicko2_points(1700.0, 90.0), 0, None)
    # None means the algorithm's own default for a new player.
    fresh = seeded_state(mode, SeedRating(1, "p", None, 1700.0, None, None))
    assert fresh.deviation == pytest.approx(GLICKO2_FRESH_DEVIATION)
    assert fresh.volatility == 0.06
    assert fresh.rank_points == glicko2_points(1700.0, fresh.deviation)
    # Below the bottom of the scale: clamped at 0 points.
    assert seeded_state(mode, SeedRating(1, "p", None, 900.0, 300.0, None)).rank_points == 0


def test_seeded_state_glicko1_ignores_volatility() -> None:
    mode = ModeConfig("g1", Glicko1Config())
    state = seeded_state(mode, SeedRating(1, "p", None, 1650.0, 70.0, 0.09, 0))
    assert state == PlayerState(1650.0, 70.0, None, glicko2_points(1650.0, 70.0), 0, None)


def test_elo_seeds_ignore_deviation_and_volatility() -> None:
    mode = ModeConfig("elo", EloConfig())
    state = seeded_state(mode, SeedRating(1, "p", None, 1700.0, 80.0, 0.07, 0))
    lo, hi = 1500.0 - 6.045 * ELO_T, 1500.0 + 6.045 * ELO_T
    points = round((1700.0 - lo) / (hi - lo) * 10000.0)
    assert points == 5952  # (1700 - 449.88) / 2100.24 * 10000, worked on paper
    assert state == PlayerState(1700.0, 0.0, None, points, 0, None)


# --- predict ---------------------------------------------------------------------------------


def test_predict_gives_one_prediction_per_pair_of_teams_before_applying() -> None:
    replayer = Replayer(Modes())
    replayer.apply(one_v_one(T0, "a", "b", 1.0))
    replayer.apply(one_v_one(T0 + 10, "c", "d", 0.0))
    before = snapshot(replayer)
    s = replayer.tables["default"]
    match = hm(T0 + 100, (("a",), ("b", "c"), ("d",)), (1, 0, 1))

    predictions = replayer.predict(match)

    assert snapshot(replayer) == before  # predicting changes nothing
    # Two players against one: the built-in size edge (a side with twice the players is that
    # many points stronger) is added to the pair.
    edge = Modes().default.population.size_edge
    bc_rating = (s["b"].rating + s["c"].rating) / 2 + edge
    bc_deviation = (s["b"].deviation + s["c"].deviation) / 2
    expected = [
        (glicko2_expected(s["a"].rating, s["a"].deviation, bc_rating, bc_deviation), 0.0),
        (glicko2_expected(s["a"].rating, s["a"].deviation, s["d"].rating, s["d"].deviation), 0.5),
        (glicko2_expected(bc_rating, bc_deviation, s["d"].rating, s["d"].deviation), 1.0),
    ]
    assert len(predictions) == 3
    for (p, actual), (p_expected, actual_expected) in zip(predictions, expected, strict=True):
        assert p == pytest.approx(p_expected, rel=1e-12)
        assert actual == actual_expected
    replayer.apply(match)
    assert replayer.predict(match) != predictions


def test_predict_for_unknown_players_is_a_coin_flip() -> None:
    replayer = Replayer(Modes())
    assert replayer.predict(one_v_one(T0, "a", "b", 0.0)) == [(0.5, 0.0)]
    assert replayer.tables["default"] == {}


def test_a_seed_with_games_is_not_taken_for_a_debutant() -> None:
    # Under the built-in experience term a seeded player's offset follows the seed's games.
    mode = Modes().default
    seeded = seeded_state(mode, SeedRating(1, "p", None, 1700.0, 90.0, None, 200))
    assert seeded.games == 200
    veteran = Replayer(Modes(), seeds=[SeedRating(1, "p", None, 1500.0, None, None, 200)])
    debutant = Replayer(Modes(), seeds=[SeedRating(1, "p", None, 1500.0, None, None, 0)])
    match = one_v_one(T0, "p", "q", 1.0)
    [(p_veteran, _)] = veteran.predict(match)
    [(p_debutant, _)] = debutant.predict(match)
    assert p_debutant == pytest.approx(0.5)
    # The debutant opponent plays 300 points below their rating; with both deviations
    # (the newcomer's 261 points) the established player is a clear favourite.
    assert p_veteran > 0.7


def test_a_seed_without_games_is_an_established_player() -> None:
    mode = Modes().default
    seeded = seeded_state(mode, SeedRating(1, "p", None, 1700.0, 90.0, None))
    assert seeded.games == mode.experience.settled_games
    # Its experience offset is all but gone: the ladder it comes from is not taken for new.
    assert abs(mode.experience.offset(seeded.games)) < 0.5
    assert not mode.experience.provisional(seeded.games)


@pytest.mark.parametrize(
    ("mode", "seed", "clamped"),
    [
        (
            ModeConfig("g2", Glicko2Config()),
            SeedRating(1, "p", None, 9000.0, 100.0, 0.2, 0),
            (1500.0 + 6.045 * SCALE, 100.0, 0.08),
        ),
        (
            ModeConfig("g2", Glicko2Config()),
            SeedRating(1, "p", None, 1500.0, 1.0, 0.01, 0),
            (1500.0, 0.175 * SCALE, 0.04),
        ),
        (
            ModeConfig("g1", Glicko1Config()),
            SeedRating(1, "p", None, 1500.0, 5.0, None, 0),
            (1500.0, 25.0, None),
        ),
        (
            ModeConfig("g1", Glicko1Config()),
            SeedRating(1, "p", None, 1500.0, 500.0, None, 0),
            (1500.0, 350.0, None),
        ),
    ],
)
def test_a_seed_is_held_to_the_modes_bounds(
    mode: ModeConfig, seed: SeedRating, clamped: tuple[float, float, float | None]
) -> None:
    state = seeded_state(mode, seed)
    assert (state.rating, state.deviation) == pytest.approx(clamped[:2])
    assert state.volatility == clamped[2]


def test_predict_uses_the_seed_of_a_player_not_yet_in_the_table() -> None:
    replayer = Replayer(Modes(), seeds=[SeedRating(1, "p", None, 2000.0, 60.0, None, 0)])
    [(p, actual)] = replayer.predict(one_v_one(T0, "p", "q", 1.0))
    assert actual == 1.0
    # Both have 0 games: their experience offsets cancel. q has the built-in fresh deviation.
    fresh_deviation = Modes().default.algorithm.initial().deviation
    expected = glicko2_expected(2000.0, 60.0, 1500.0, fresh_deviation)
    assert p == pytest.approx(expected, rel=1e-9)  # about 0.94, not a new player's 0.5


def test_predict_applies_inactivity() -> None:
    replayer = Replayer(Modes())
    replayer.apply(one_v_one(T0, "a", "b", 1.0))
    s = replayer.tables["default"]
    later = T0 + 28 * DAY  # two whole rating periods
    [(p, _)] = replayer.predict(one_v_one(later, "a", "b", 1.0))
    assert s["a"].volatility is not None and s["b"].volatility is not None
    da = math.sqrt(s["a"].deviation ** 2 + 2 * (s["a"].volatility * SCALE) ** 2)
    db = math.sqrt(s["b"].deviation ** 2 + 2 * (s["b"].volatility * SCALE) ** 2)
    assert p == pytest.approx(glicko2_expected(s["a"].rating, da, s["b"].rating, db), rel=1e-9)
    [(now, _)] = replayer.predict(one_v_one(T0 + 60, "a", "b", 1.0))
    assert 0.5 < p < now


# --- ratings() -------------------------------------------------------------------------------


def test_ratings_by_mode_name_then_rating_then_player_id() -> None:
    modes = Modes(default=ModeConfig("default", EloConfig()))
    replayer = Replayer(modes)
    replayer.apply(one_v_one(T0, "c", "d", 1.0, mode="z-mode"))
    replayer.apply(one_v_one(T0, "b", "a", 0.5, mode="z-mode"))  # both stay at 1500 exactly
    replayer.apply(one_v_one(T0, "x", "y", 0.0, mode="a-mode"))

    out = list(replayer.ratings())

    assert [(r.mode, r.player_id, r.state.rating) for r in out] == [
        ("a-mode", "y", 1516.0),
        ("a-mode", "x", 1484.0),
        ("z-mode", "c", 1516.0),
        ("z-mode", "a", 1500.0),
        ("z-mode", "b", 1500.0),
        ("z-mode", "d", 1484.0),
    ]
    assert all(isinstance(r, FinalRating) for r in out)
    assert out[0].state is replayer.tables["a-mode"]["y"]
    doc = out[0].to_json()
    assert doc["player_id"] == "y" and doc["mode"] == "a-mode" and doc["games"] == 1
    assert "volatility" not in doc


# --- determinism and bookkeeping (property) --------------------------------------------------

POOL = ["p0", "p1", "p2", "p3", "p4"]
ALGORITHMS = [Glicko2Config(), Glicko1Config(), EloConfig()]


@st.composite
def histories(draw: st.DrawFn) -> list[HistoryMatch]:
    n = draw(st.integers(1, 25))
    at = T0
    matches = []
    for _ in range(n):
        a, b = draw(st.lists(st.sampled_from(POOL), min_size=2, max_size=2, unique=True))
        at += draw(st.sampled_from([1.0, 600.0, 0.5 * DAY, 3 * DAY, 20 * DAY]))
        matches.append(one_v_one(at, a, b, draw(st.sampled_from([1.0, 0.5, 0.0]))))
    return matches


def replay(modes: Modes, matches: Iterable[HistoryMatch]) -> Replayer:
    replayer = Replayer(modes)
    for match in matches:
        replayer.apply(match)
    return replayer


@settings(deadline=None, max_examples=60)
@given(st.sampled_from(ALGORITHMS), histories(), st.data())
def test_replay_is_deterministic_and_counts_games(
    algorithm: Glicko2Config | Glicko1Config | EloConfig,
    matches: list[HistoryMatch],
    data: st.DataObject,
) -> None:
    mode = ModeConfig("default", algorithm)
    modes = Modes.single(mode)
    k = data.draw(st.integers(0, len(matches)))

    whole = replay(modes, matches)
    split = replay(modes, matches[:k])
    for match in matches[k:]:
        split.apply(match)
    fresh = replay(modes, matches)

    assert snapshot(whole) == snapshot(split) == snapshot(fresh)
    assert list(whole.ratings()) == list(fresh.ratings())

    # Independently: rate every match against the states just before it.
    states: dict[str, PlayerState] = {}
    for match in matches:
        states.update({pid: u.state for pid, u in rate_match(mode, match, states).items()})
    assert snapshot(whole) == {"default": states}

    appearances = Counter(pid for match in matches for team in match.teams for pid in team)
    table: Mapping[str, PlayerState] = whole.tables["default"]
    assert {pid: s.games for pid, s in table.items()} == dict(appearances)
    assert all(
        s.last_played == max(m.at for m in matches if any(pid in t for t in m.teams))
        for pid, s in table.items()
    )


@settings(deadline=None)
@given(
    st.sampled_from([Glicko2Config(), Glicko1Config(), EloConfig()]),
    st.floats(-1e6, 1e6),
    st.none() | st.floats(0.0, 1e300),
    st.none() | st.floats(1e-300, 1e300),
)
def test_any_seed_the_reader_accepts_starts_inside_the_engines_ranges(
    algorithm: Glicko2Config | Glicko1Config | EloConfig,
    rating: float,
    deviation: float | None,
    volatility: float | None,
) -> None:
    mode = ModeConfig("m", algorithm)
    state = seeded_state(mode, SeedRating(1, "p", None, rating, deviation, volatility))
    fresh = mode.algorithm.initial()
    assert 0.0 <= state.deviation <= fresh.deviation
    if isinstance(algorithm, Glicko2Config):
        low, high = algorithm.rating_bounds
        assert low <= state.rating <= high
        assert state.deviation >= algorithm.min_deviation * SCALE
        assert state.volatility is not None
        assert algorithm.min_volatility <= state.volatility <= algorithm.max_volatility
    else:
        assert state.rating == rating
    # The first match from such a state stays finite.
    match = hm(T0, [["p"], ["q"]], [0, 1])
    update = rate_player(mode, "p", state, match, {"p": state})
    assert math.isfinite(update.state.rating) and math.isfinite(update.state.deviation)


# --- rate: apply without the updates ------------------------------------------------------

_LEARNING = dataclasses.replace(
    built_in_mode("duels"),
    seasons=SeasonsConfig(starts=(T0 + 2 * DAY,), period_days=3.0, rank_points_kept=0.5),
)
_STARTING = dataclasses.replace(built_in_mode("ranked"), start=StartConfig("duels"))


@st.composite
def mixed_histories(draw: st.DrawFn) -> list[HistoryMatch]:
    """Matches among a few players (each passes SETTLED_GAMES games, so duels of newcomers,
    of settled players and of one of each), hours to days apart: mostly duels, with draws, a
    player against themselves, team matches, quitters, and a second mode whose newcomers start
    from the first."""
    pool = [f"p{i}" for i in range(draw(st.integers(2, 7)))]
    at = T0
    matches = []
    for _ in range(draw(st.integers(60, 160))):
        at += draw(st.sampled_from([600.0, 3 * 3600.0, 0.6 * DAY, 3 * DAY]))
        mode = draw(st.sampled_from(["duels", "duels", "duels", "ranked"]))
        shape = draw(st.sampled_from(["duel"] * 6 + ["self", "team", "quit"]))
        a, b = draw(st.permutations(pool))[:2]
        ranks = draw(st.sampled_from([(0, 1), (1, 0), (0, 0)]))
        if shape == "self":
            matches.append(hm(at, ((a,), (a,)), ranks, mode))
        elif shape == "team" and len(pool) >= 4:
            c, d = [p for p in pool if p not in (a, b)][:2]
            matches.append(hm(at, ((a, c), (b, d)), ranks, mode))
        elif shape == "quit":
            matches.append(hm(at, ((a,), (b,)), ranks, mode, quitters=(a,)))
        else:
            matches.append(hm(at, ((a,), (b,)), ranks, mode))
    return matches


@settings(deadline=None, max_examples=40)
@given(mixed_histories(), st.booleans())
def test_rate_leaves_the_states_and_the_learned_populations_apply_leaves(
    matches: list[HistoryMatch], seeded: bool
) -> None:
    # Replay's hot path builds no updates: the same tables, evidence and populations, bit for
    # bit, whatever the match (a duel of newcomers, of settled players, a seed, a start from
    # another mode, seasons) or the fallback to apply (teams, quitters, a player alone).
    modes = Modes(listed={"duels": _LEARNING, "ranked": _STARTING})
    seeds = [SeedRating(1, "p1", None, 1800.0, 120.0, None, 3)] if seeded else []
    applied, rated = Replayer(modes, seeds=seeds), Replayer(modes, seeds=seeds)
    for match in matches:
        applied.apply(match)
        rated.rate(match)
    assert snapshot(rated) == snapshot(applied)
    for name, learner in applied.learners.items():
        other = rated.learners[name]
        assert other.evidence() == learner.evidence()
        assert other.steps == learner.steps
        assert other.current == learner.current
