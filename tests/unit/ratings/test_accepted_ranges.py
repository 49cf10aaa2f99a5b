"""Every configuration the modes file accepts keeps the engine finite, bounded and terminating.

Configurations are drawn over each config class's whole ``RANGES`` table (boundaries
included), states over everything the engine or a seed can produce, time gaps up to the year
9999; matches of 1v1, teams and free-for-all, with stats, quitters and forced losses.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream.config.modes import PendingConfig
from stream.ratings.algorithm import ALGORITHMS, AlgorithmConfig
from stream.ratings.engine import MatchView, rate_match, rate_player
from stream.ratings.experience import ExperienceConfig
from stream.ratings.glicko2 import SCALE, Glicko2Config, new_volatility
from stream.ratings.modeconfig import ModeConfig
from stream.ratings.performance import PerformanceConfig
from stream.ratings.population import PopulationConfig
from stream.ratings.ranges import MAX_ABS_RATING, ConfigError, Range
from stream.ratings.rank_points import RankPointsConfig
from stream.ratings.seasons import SeasonsConfig
from stream.ratings.skill import PlayerState, PlayerStats
from stream.ratings.teams import TeamStrategy

CONFIG_CLASSES: list[type[Any]] = [
    *ALGORITHMS.values(),
    RankPointsConfig,
    PendingConfig,
    ExperienceConfig,
    PopulationConfig,
    PerformanceConfig,
]
# Fields whose values are ordered by a rule between fields (min <= ... <= max).
ORDERED: dict[type[Any], list[tuple[str, ...]]] = {
    Glicko2Config: [
        ("min_rating", "max_rating"),
        ("min_deviation", "unrated_deviation"),
        ("min_volatility", "unrated_volatility", "max_volatility"),
    ],
    ALGORITHMS["glicko1"]: [("min_deviation", "initial_deviation")],
    RankPointsConfig: [("min_step", "max_step")],
}
# The year 9999 in epoch seconds: the latest time a history or an event may carry.
LATEST = 253_402_300_799.0


def in_range(accepted: Range) -> st.SearchStrategy[Any]:
    if accepted.integer:
        return st.integers(int(accepted.low) + accepted.low_open, int(accepted.high))
    return st.floats(accepted.low, accepted.high, exclude_min=accepted.low_open)


@st.composite
def configs(draw: st.DrawFn, cls: type[Any]) -> Any:
    values = {key: draw(in_range(accepted)) for key, accepted in cls.RANGES.items()}
    for group in ORDERED.get(cls, []):
        for key, value in zip(group, sorted(values[k] for k in group), strict=True):
            values[key] = value
    if cls is Glicko2Config and values["max_rating"] - values["min_rating"] < 1.0:
        # The narrowest accepted range: low + 1.0 can round to a difference just under 1.0.
        low = min(values["min_rating"], 14.0)
        high = low + 1.0
        while high - low < 1.0:
            high = math.nextafter(high, math.inf)
        values["min_rating"], values["max_rating"] = low, high
    return cls(**values)


@st.composite
def modes(draw: st.DrawFn) -> ModeConfig:
    algorithm = draw(st.sampled_from(list(ALGORITHMS.values())).flatmap(configs))
    return ModeConfig(
        "m",
        algorithm,
        draw(st.sampled_from(list(TeamStrategy))),
        draw(configs(RankPointsConfig)),
        experience=draw(configs(ExperienceConfig)),
        seasons=draw(st.none() | season_schedules()),
        population=draw(configs(PopulationConfig)),
    )


@st.composite
def season_schedules(draw: st.DrawFn) -> SeasonsConfig:
    """Any schedule the modes file accepts: fixed starts anywhere up to the year 9999, with or
    without a period (from a minute to the longest), any reset."""
    starts = sorted(draw(st.sets(st.floats(0.0, LATEST), min_size=1, max_size=3)))
    ranges = SeasonsConfig.RANGES
    period = draw(st.just(0.0) | st.floats(1 / 1440, ranges["period_days"].high))
    return SeasonsConfig(
        starts=tuple(starts),
        period_days=period,
        deviation_reset=draw(in_range(ranges["deviation_reset"])),
        rank_points_kept=draw(in_range(ranges["rank_points_kept"])),
    )


@st.composite
def states(draw: st.DrawFn, algorithm: AlgorithmConfig) -> PlayerState | None:
    """None (a new player), or any state the engine or a seed can leave behind."""
    if draw(st.booleans()):
        return None
    fresh = algorithm.initial()
    if isinstance(algorithm, Glicko2Config):
        low, high = algorithm.rating_bounds
        rating = draw(st.floats(low, high))
        deviation = draw(
            st.floats(algorithm.min_deviation * SCALE, algorithm.unrated_deviation * SCALE)
        )
        volatility: float | None = draw(
            st.floats(algorithm.min_volatility, algorithm.max_volatility)
        )
    else:
        rating = draw(st.floats(-MAX_ABS_RATING, MAX_ABS_RATING))
        deviation = draw(st.floats(0.0, fresh.deviation))
        volatility = None
    last = draw(st.none() | st.floats(0.0, LATEST))
    games = draw(st.integers(0, 10**6))
    return PlayerState(rating, deviation, volatility, draw(st.integers(0, 10**9)), games, last)


def finite(update: Any, mode: ModeConfig) -> None:
    state = update.state
    assert math.isfinite(state.rating) and math.isfinite(state.deviation)
    assert state.deviation >= 0.0
    assert state.volatility is None or math.isfinite(state.volatility)
    assert 0 <= state.rank_points <= max(mode.rank_points.max_points, 10**9)
    assert math.isfinite(update.expected_score) and 0.0 <= update.expected_score <= 1.0
    if isinstance(mode.algorithm, Glicko2Config):
        low, high = mode.algorithm.rating_bounds
        assert low - 1e-6 <= state.rating <= high + 1e-6


@st.composite
def line_ups(draw: st.DrawFn) -> tuple[tuple[str, ...], ...]:
    """Two to four teams of one to three players; the sides may be uneven."""
    sizes = draw(st.lists(st.integers(1, 3), min_size=2, max_size=4))
    return tuple(tuple(f"p{t}-{i}" for i in range(size)) for t, size in enumerate(sizes))


@settings(deadline=None, max_examples=300)
@given(modes(), line_ups(), st.data())
def test_every_accepted_configuration_rates_to_finite_bounded_states(
    mode: ModeConfig, teams: Sequence[tuple[str, ...]], data: st.DataObject
) -> None:
    players = [pid for team in teams for pid in team]
    table = {pid: data.draw(states(mode.algorithm)) for pid in players}
    known = {pid: s for pid, s in table.items() if s is not None}
    ranks = tuple(data.draw(st.integers(0, len(teams))) for _ in teams)
    stats = data.draw(
        st.none()
        | st.fixed_dictionaries(
            {
                pid: st.builds(PlayerStats, st.floats(-1e6, 1e6), st.floats(0.0, 86_400.0))
                for pid in players
            }
        )
    )
    # Several matches in a row, each rated from the last one's states, at growing times.
    at = data.draw(st.floats(0.0, LATEST))
    for _ in range(3):
        match = MatchView(tuple(teams), ranks, at, stats)
        updates = rate_match(mode, match, known)
        for update in updates.values():
            finite(update, mode)
        forced = rate_player(mode, players[0], known.get(players[0]), match, known, 0.0)
        finite(forced, mode)
        known = {pid: update.state for pid, update in updates.items()}
        at = min(at + data.draw(st.floats(0.0, LATEST)), LATEST)


@settings(deadline=None)
@given(
    st.floats(0.001, 1.0),
    st.floats(0.0, 25.0),
    st.floats(1e-300, 1e300),
    st.floats(0.0, 1e300),
    st.floats(0.01, 10.0),
    st.floats(1e-12, 0.01),
)
def test_the_volatility_search_ends_with_a_finite_answer(
    sigma: float, phi_sq: float, v: float, delta_sq: float, tau: float, epsilon: float
) -> None:
    assert math.isfinite(new_volatility(sigma, phi_sq, v, delta_sq, tau, epsilon))


@pytest.mark.parametrize("tau", [math.inf, 1e300, math.nan])
def test_the_volatility_search_has_a_hard_bound_whatever_the_inputs(tau: float) -> None:
    # The modes file refuses these; the search must still end (it used to spin for ever), with
    # a volatility that is a number, not above the one it started from.
    sigma = new_volatility(0.06, 1.0, 1.0, 0.5, tau, 1e-6)
    assert math.isfinite(sigma) and 0.0 <= sigma <= 0.06


# --- the tables themselves ----------------------------------------------------------------


@pytest.mark.parametrize("cls", CONFIG_CLASSES, ids=lambda c: c.__name__)
def test_every_number_has_a_range_and_every_default_is_inside(cls: type[Any]) -> None:
    numbers = {
        f.name
        for f in dataclasses.fields(cls)
        if isinstance(f.default, int | float) and not isinstance(f.default, bool)
    }
    assert numbers == set(cls.RANGES)
    default = cls()
    for key, accepted in cls.RANGES.items():
        assert accepted.contains(getattr(default, key)), key
        assert math.isfinite(accepted.low) and math.isfinite(accepted.high)
        assert accepted.why


def outside(accepted: Range) -> list[object]:
    below = accepted.low if accepted.low_open else accepted.low - max(1.0, abs(accepted.low))
    return [below, accepted.high * 2 + 1, math.inf, -math.inf, math.nan, "1", True]


@pytest.mark.parametrize(
    ("cls", "key", "value"),
    [
        (cls, key, value)
        for cls in CONFIG_CLASSES
        for key, accepted in cls.RANGES.items()
        for value in outside(accepted)
    ],
    ids=repr,
)
def test_values_outside_the_range_are_refused_naming_the_key(
    cls: type[Any], key: str, value: object
) -> None:
    with pytest.raises(ConfigError) as info:
        cls(**{key: value})
    assert info.value.key == key and str(info.value).startswith(key)


def test_whole_number_keys_refuse_fractions() -> None:
    with pytest.raises(ConfigError, match="max_points must be a whole number"):
        RankPointsConfig(max_points=10000.5)  # type: ignore[arg-type]


def doc_row(cls: type[Any], key: str) -> str:
    accepted = cls.RANGES[key]
    return f"| `{key}` | {getattr(cls(), key)!r} | {accepted.describe()} | {accepted.why} |"


def test_the_docs_list_every_key() -> None:
    docs = (Path(__file__).resolve().parents[3] / "docs" / "modes-file.md").read_text()
    for cls in CONFIG_CLASSES:
        for key in cls.RANGES:
            row = doc_row(cls, key)
            assert row in docs, f"docs/modes-file.md lacks the row for {cls.__name__}:\n{row}"
