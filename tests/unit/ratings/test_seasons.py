"""Season schedules and the soft reset: boundaries, idempotence, direction, and no seasons = no
change."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream.ratings.algorithm import AlgorithmConfig
from stream.ratings.elo import EloConfig
from stream.ratings.engine import MatchView, rate_match, season_entered
from stream.ratings.glicko1 import Glicko1Config
from stream.ratings.glicko2 import Glicko2Config
from stream.ratings.modeconfig import ModeConfig
from stream.ratings.ranges import ConfigError
from stream.ratings.seasons import SeasonsConfig
from stream.ratings.skill import PlayerState

DAY = 86_400.0
JAN = 1_767_225_600.0  # 2026-01-01T00:00:00Z
APR = 1_775_001_600.0  # 2026-04-01T00:00:00Z
QUARTER = SeasonsConfig(starts=(JAN, APR), period_days=91.0, deviation_reset=0.5)


# --- the schedule ----------------------------------------------------------------------------


def test_seasons_are_numbered_from_the_first_start() -> None:
    assert QUARTER.season_of(JAN - 1.0) == 0
    assert QUARTER.season_of(JAN) == 1
    assert QUARTER.season_of(APR - 0.001) == 1
    assert QUARTER.season_of(APR) == 2
    assert QUARTER.season_of(APR + 91 * DAY) == 3
    assert QUARTER.start_of(3) == APR + 91 * DAY


def test_fixed_dates_only_stay_in_the_last_season() -> None:
    fixed = SeasonsConfig(starts=(JAN, APR))
    assert fixed.season_of(APR + 5000 * DAY) == 2
    with pytest.raises(ValueError, match="season 3 has no start"):
        fixed.start_of(3)


@settings(max_examples=300)
@given(
    st.floats(0.0, 4e9, allow_nan=False),
    st.floats(1 / 1440, 3650.0, allow_nan=False),
    st.integers(1, 5000),
)
def test_every_season_starts_exactly_where_the_schedule_says(
    anchor: float, period_days: float, season: int
) -> None:
    config = SeasonsConfig(starts=(anchor,), period_days=period_days)
    start = config.start_of(season)
    assert config.season_of(start) == season
    assert config.season_of(start - max(abs(start) * 1e-15, 1e-6)) < season


@pytest.mark.parametrize(
    ("kwargs", "key"),
    [
        ({"starts": ()}, "starts"),
        ({"starts": (APR, JAN)}, "starts"),
        ({"starts": (JAN, JAN)}, "starts"),
        ({"starts": (JAN,), "period_days": 1e-9}, "period_days"),
        ({"starts": (JAN,), "deviation_reset": 1.5}, "deviation_reset"),
        ({"starts": (JAN,), "rank_points_kept": -0.1}, "rank_points_kept"),
        ({"starts": (float("nan"),)}, "starts"),
    ],
)
def test_bad_schedules_are_refused_naming_the_key(kwargs: dict[str, object], key: str) -> None:
    with pytest.raises(ConfigError) as caught:
        SeasonsConfig(**kwargs)  # type: ignore[arg-type]
    assert caught.value.key == key


# --- the reset -------------------------------------------------------------------------------

ALGORITHMS: list[AlgorithmConfig] = [Glicko2Config(), Glicko1Config(), EloConfig()]


@st.composite
def seasons(draw: st.DrawFn) -> SeasonsConfig:
    return SeasonsConfig(
        starts=(JAN, APR),
        period_days=draw(st.sampled_from([0.0, 7.0, 91.0])),
        deviation_reset=draw(st.floats(0.0, 1.0)),
        rank_points_kept=draw(st.floats(0.0, 1.0)),
    )


@st.composite
def states(draw: st.DrawFn, mode: ModeConfig) -> PlayerState:
    unrated = mode.initial.deviation
    return PlayerState(
        draw(st.floats(500.0, 2500.0)),
        draw(st.floats(0.0, unrated)) if unrated else 0.0,
        mode.initial.volatility,
        draw(st.integers(0, 10000)),
        draw(st.integers(0, 500)),
        draw(st.floats(JAN - 30 * DAY, APR + 400 * DAY)),
    )


@dataclass(frozen=True)
class Case:
    """A mode with seasons, a player's state in it (played at ``last_played``), and when the
    player comes back (``at``)."""

    mode: ModeConfig
    seasons: SeasonsConfig
    state: PlayerState
    last_played: float
    at: float

    def entered(self) -> PlayerState:
        return season_entered(self.mode, self.state, self.at)


@st.composite
def cases(draw: st.DrawFn) -> Case:
    algorithm, schedule = draw(st.sampled_from(ALGORITHMS)), draw(seasons())
    mode = ModeConfig("m", algorithm, seasons=schedule)
    state = draw(states(mode))
    assert state.last_played is not None
    at = state.last_played + draw(st.floats(0.0, 400 * DAY))
    return Case(mode, schedule, state, state.last_played, at)


@settings(max_examples=300)
@given(cases())
def test_entering_a_season_twice_is_entering_it_once(case: Case) -> None:
    once = case.entered()
    assert season_entered(case.mode, once, case.at) == once


@settings(max_examples=300)
@given(cases())
def test_a_state_already_in_the_season_is_unchanged(case: Case) -> None:
    season = case.seasons.season_of(case.at)
    if case.seasons.season_of(case.last_played) == season:
        assert case.entered() is case.state
    else:
        assert case.entered().last_played == case.seasons.start_of(season)


@settings(max_examples=300)
@given(cases())
def test_the_deviation_moves_towards_the_unrated_one_and_never_past(case: Case) -> None:
    entered, state = case.entered(), case.state
    unrated = case.mode.initial.deviation
    start = case.seasons.crossed(case.last_played, case.at)
    if start is None:
        return
    # Inactivity up to the season's start first (it moves towards the unrated one too).
    decayed = case.mode.algorithm.decay(state, start - case.last_played)
    assert min(decayed.deviation, unrated) <= entered.deviation <= max(decayed.deviation, unrated)
    assert abs(unrated - entered.deviation) <= abs(unrated - decayed.deviation)
    assert entered.rating == decayed.rating
    assert 0 <= entered.rank_points <= state.rank_points
    assert entered.games == state.games


def test_the_policy_resets_or_compresses_rank_points() -> None:
    state = PlayerState(1600.0, 60.0, 0.06, 4001, 30, JAN + 10 * DAY)
    for kept, points in ((0.0, 0), (0.5, 2000), (1.0, 4001)):
        config = SeasonsConfig(starts=(JAN, APR), rank_points_kept=kept, deviation_reset=1.0)
        mode = ModeConfig("m", seasons=config)
        entered = season_entered(mode, state, APR + DAY)
        assert entered.rank_points == points
        assert entered.deviation == mode.initial.deviation
        assert entered.last_played == APR


# --- the engine with seasons -----------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(cases(), st.sampled_from([(0, 1), (1, 0), (0, 0)]))
def test_no_seasons_rate_exactly_as_before(case: Case, ranks: tuple[int, int]) -> None:
    mode, state, at = case.mode, case.state, case.at
    plain = dataclasses.replace(mode, seasons=None)
    far = SeasonsConfig(starts=(4e9,))  # a schedule whose first season never comes
    future = dataclasses.replace(mode, seasons=far)
    match = MatchView((("a",), ("b",)), ranks, at)
    states = {"a": state, "b": dataclasses.replace(state, rating=1500.0)}
    assert rate_match(plain, match, states) == rate_match(future, match, states)


def test_a_player_rated_across_several_seasons_is_reset_once_per_return() -> None:
    config = SeasonsConfig(starts=(JAN,), period_days=30.0, deviation_reset=0.5)
    mode = ModeConfig("m", Glicko2Config(), seasons=config)
    states: dict[str, PlayerState] = {}
    points_at_end: list[int] = []
    for day in range(0, 100, 3):
        at = JAN + day * DAY + 3600.0
        result = rate_match(mode, MatchView((("a",), ("b",)), (0, 1), at), states)
        states = {pid: update.state for pid, update in result.items()}
        points_at_end.append(states["a"].rank_points)
    # The winner's points grow inside a season and fall to zero at each boundary (days 30,
    # 60, 90): every drop is a new season.
    drops = [i for i in range(1, len(points_at_end)) if points_at_end[i] < points_at_end[i - 1]]
    assert [config.season_of(JAN + (3 * i) * DAY + 3600.0) for i in drops] == [2, 3, 4]


def test_the_modes_file_page_lists_every_season_key() -> None:
    docs = (Path(__file__).resolve().parents[3] / "docs" / "modes-file.md").read_text()
    defaults = {f.name: f.default for f in dataclasses.fields(SeasonsConfig)}
    for key, accepted in SeasonsConfig.RANGES.items():
        row = f"| `{key}` | {defaults[key]!r} | {accepted.describe()} | {accepted.why} |"
        assert row in docs, f"docs/modes-file.md lacks the row:\n{row}"
    assert "| `starts` |" in docs


@settings(max_examples=200)
@given(
    seasons(),
    st.lists(
        st.tuples(st.floats(JAN - 60 * DAY, APR + 900 * DAY), st.floats(0.0, 200 * DAY)),
        min_size=1,
        max_size=30,
    ),
)
def test_crossed_remembers_a_season_without_ever_answering_otherwise(
    config: SeasonsConfig, queries: list[tuple[float, float]]
) -> None:
    # In any order of queries, the remembered season gives what the schedule itself says.
    for last, gap in queries:
        at = last + gap
        season = config.season_of(at)
        start = config.start_of(season) if season else None
        expected = start if start is not None and last < start else None
        assert config.crossed(last, at) == expected
