"""A mode whose newcomers start from another mode (stream.ratings.carryover): FAForever's rule
for the deviation, the rating and experience carried, the modes file's checks."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stream.config.modes import ModesError, parse_modes
from stream.ratings.carryover import StartConfig, started_from
from stream.ratings.glicko2 import SCALE, Glicko2Config
from stream.ratings.modeconfig import ModeConfig
from stream.ratings.skill import PlayerState

T0 = 1_780_000_000.0
# A new player's deviation of 500 makes FAForever's own numbers: +150, at most 250.
FAF = ModeConfig(
    "tmm2v2",
    algorithm=Glicko2Config(unrated_deviation=500.0 / SCALE, max_volatility=0.2),
    start=StartConfig("ladder1v1"),
)


@pytest.mark.parametrize(
    ("source", "expected"),
    [(60.0, 210.0), (100.0, 250.0), (200.0, 250.0), (250.0, 250.0), (300.0, 300.0)],
)
def test_the_deviation_widens_by_150_up_to_250_as_faforever_does(
    source: float, expected: float
) -> None:
    # FAForever/server issue 596: mean kept; dev + 150 capped at 250, unless already above.
    state = started_from(FAF, PlayerState(1720.0, source, 0.07, 800, 41, T0))
    assert state.deviation == pytest.approx(expected)
    assert (state.rating, state.volatility, state.games, state.last_played) == (
        1720.0,
        0.07,
        41,
        T0,
    )


@given(
    rating=st.floats(0.0, 3000.0),
    deviation=st.floats(0.0, 600.0),
    added=st.floats(0.0, 1.0),
    cap=st.floats(0.01, 1.0),
)
def test_a_start_is_never_surer_than_its_source_nor_than_the_cap_allows_nor_past_new(
    rating: float, deviation: float, added: float, cap: float
) -> None:
    glicko2 = Glicko2Config()
    mode = ModeConfig("b", algorithm=glicko2, start=StartConfig("a", added, cap))
    unrated = mode.initial.deviation
    state = started_from(mode, PlayerState(rating, deviation, 0.06, 0, 3, None))
    low, high = mode.rating_bounds
    assert low <= state.rating <= high
    assert state.deviation <= unrated
    assert state.deviation >= min(deviation, unrated) - 1e-9
    if deviation <= cap * unrated:
        assert state.deviation <= max(cap * unrated, glicko2.min_deviation * SCALE)


def table(start: dict[str, object], algorithm: str = "glicko2") -> dict[str, object]:
    return {
        "modes": {
            "solo": {},
            "duo": {"start": start, "algorithm": algorithm},
            "elo": {"algorithm": "elo"},
        }
    }


def test_the_modes_file_names_the_mode_to_start_from() -> None:
    modes = parse_modes(table({"from_mode": "solo", "deviation_added": 0.2}))
    assert modes.get("duo").start == StartConfig("solo", 0.2, 0.5)
    assert modes.get("solo").start is None


@pytest.mark.parametrize(
    ("data", "named"),
    [
        (table({"from_mode": "ghost"}), "[modes.duo.start] from_mode 'ghost' is not a listed mode"),
        (table({"from_mode": "duo"}), "from_mode 'duo' is the mode itself"),
        (table({"from_mode": "elo"}), "rated with elo, this mode with glicko2"),
        (table({"from_mode": "solo", "deviation_cap": 0}), "[modes.duo.start] deviation_cap"),
        (table({"from_mode": "solo", "widen": 1}), "[modes.duo.start] unknown key(s) ['widen']"),
        (table({}), "[modes.duo.start] from_mode is required"),
        ({"default": {"start": {"from_mode": "solo"}}}, "put it under [modes.NAME.start]"),
    ],
)
def test_each_mistake_names_its_table(data: dict[str, object], named: str) -> None:
    with pytest.raises(ModesError) as raised:
        parse_modes(data, "modes.toml")
    assert named in str(raised.value) and str(raised.value).startswith("modes.toml: ")
