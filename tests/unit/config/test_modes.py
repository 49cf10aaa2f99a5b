"""The modes file (stream.config.modes): defaults, per-mode overrides, unlisted modes, each
mode's pending policy, and clear errors."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream.config.modes import (
    Modes,
    ModesError,
    PendingConfig,
    built_in_mode,
    load_modes,
    parse_modes,
)
from stream.ratings.algorithm import ALGORITHMS, MatchAlgorithm, PairwiseAlgorithm
from stream.ratings.elo import EloConfig
from stream.ratings.experience import ExperienceConfig
from stream.ratings.glicko1 import Glicko1Config
from stream.ratings.glicko2 import Glicko2Config
from stream.ratings.modeconfig import ModeConfig, QuitPolicy
from stream.ratings.population import PopulationConfig
from stream.ratings.teams import TeamStrategy
from stream.ratings.zonestats import ZoneStatsConfig

EXAMPLE = Path(__file__).resolve().parents[3] / "modes.example.toml"


BUILT_IN_GLICKO2 = Glicko2Config(unrated_deviation=1.5)


def test_built_in_defaults() -> None:
    modes = Modes()
    mode = modes.get("anything")
    assert mode.name == "anything"
    assert mode.algorithm == BUILT_IN_GLICKO2
    assert mode.teams is TeamStrategy.AUTO
    # Until the mode's history says its teams are reshuffled: rosters.
    assert mode.team_rule is TeamStrategy.COMPOSITE_OPPONENT
    # Fixed, as a worker rates it; tune learns a mode's own (docs/defaults.md).
    assert mode.population == PopulationConfig(window_days=0.25, size_edge=100.0, persistence=1.0)
    assert mode.experience == ExperienceConfig(-300.0, 8.0, 5)
    assert modes.pending("anything") == PendingConfig(grace_seconds=60.0, timeout_seconds=7200.0)
    assert mode.quits is QuitPolicy.CANCEL


def test_example_file_loads_every_algorithm() -> None:
    modes = load_modes(EXAMPLE)
    assert modes.get("ranked-1v1") == dataclasses.replace(Modes().default, name="ranked-1v1")
    assert modes.get("casual-2v2").teams is TeamStrategy.COMPOSITE_TEAM
    assert modes.get("arena-ffa").algorithm == EloConfig(max_gain=32.0)
    assert modes.get("mech-brawl").algorithm.name == "zonestats"
    assert modes.get("fighting-ft2").algorithm.name == "glicko1"
    assert modes.get("not-listed").algorithm == BUILT_IN_GLICKO2


def test_mode_tables_lay_over_the_default() -> None:
    modes = parse_modes(
        {
            "default": {"glicko2": {"tau": 0.3}, "pending": {"grace_seconds": 30.0}},
            "modes": {"duel": {"glicko2": {"period_days": 7.0}}, "brawl": {"algorithm": "elo"}},
        }
    )
    duel = modes.get("duel")
    assert duel.algorithm == Glicko2Config(tau=0.3, period_days=7.0, unrated_deviation=1.5)
    assert modes.pending("duel").grace_seconds == 30.0
    assert modes.get("brawl").algorithm == EloConfig()
    assert modes.get("other").algorithm == Glicko2Config(tau=0.3, unrated_deviation=1.5)


def test_each_mode_has_its_own_pending_policy_and_the_quit_policy_is_a_rating_rule() -> None:
    modes = parse_modes(
        {
            "default": {"pending": {"timeout_seconds": 600.0}},
            "modes": {
                "duel": {"pending": {"grace_seconds": 5.0, "quit_policy": "normal"}},
                "brawl": {"algorithm": "elo"},
            },
        }
    )
    assert modes.pending("duel") == PendingConfig(grace_seconds=5.0, timeout_seconds=600.0)
    assert modes.pending("brawl") == modes.pending("other") == PendingConfig(timeout_seconds=600.0)
    assert modes.get("duel").quits is QuitPolicy.NORMAL
    assert modes.get("brawl").quits is modes.get("other").quits is QuitPolicy.CANCEL


def test_a_file_that_rejects_unlisted_modes_has_no_pending_policy_for_them() -> None:
    modes = parse_modes({"default": {"unlisted": "reject"}, "modes": {"duel": {}}})
    assert modes.pending("duel") == PendingConfig()
    with pytest.raises(KeyError):
        modes.get("other")
    with pytest.raises(KeyError):
        modes.pending("other")


def test_an_empty_file_and_the_built_in_mode_agree() -> None:
    assert parse_modes({}).get("x") == Modes().get("x") == built_in_mode("x")
    elo = built_in_mode("x", "elo")
    assert elo.algorithm == EloConfig()
    assert elo.experience == Modes().default.experience


def test_a_mode_in_code_is_the_published_algorithm_without_the_experience_term() -> None:
    plain = ModeConfig("x")
    assert plain.algorithm == Glicko2Config()
    assert not plain.experience.active


def test_zonestats_keeps_no_offset_but_its_provisional_threshold() -> None:
    mode = parse_modes({"default": {"algorithm": "zonestats"}}).get("brawl")
    assert not mode.experience.active
    assert mode.experience.provisional_games == Modes().default.experience.provisional_games


@pytest.mark.parametrize("name", sorted(ALGORITHMS))
def test_each_algorithm_is_sorted_by_what_it_rates_from(name: str) -> None:
    mode = built_in_mode("m", name)
    if name == "zonestats":
        assert mode.pairwise is None and mode.whole_match is mode.algorithm
    else:
        assert mode.whole_match is None and mode.pairwise is mode.algorithm


def test_the_configs_have_the_shape_they_are_sorted_by() -> None:
    # Typed so that mypy checks each config against its protocol, not only isinstance.
    pairwise: list[PairwiseAlgorithm] = [Glicko2Config(), Glicko1Config(), EloConfig()]
    whole_match: list[MatchAlgorithm] = [ZoneStatsConfig()]
    assert not any(isinstance(a, MatchAlgorithm) for a in pairwise)
    assert not any(isinstance(a, PairwiseAlgorithm) for a in whole_match)


def test_the_new_players_state_is_derived_once_from_the_algorithm() -> None:
    mode = built_in_mode("m")
    start = mode.algorithm.initial()
    assert dataclasses.astuple(mode.initial) == (
        start.rating,
        start.deviation,
        0.06,
        0,
        0,
        None,
        0.0,
        0.0,
    )
    assert dataclasses.replace(mode, name="n").initial == mode.initial
    moved = dataclasses.replace(mode, algorithm=EloConfig(initial_rating=1200.0))
    assert moved.initial.rating == 1200.0 and moved.initial.volatility is None


class _Both(Glicko2Config):
    """Glicko-2 that also claims to rate whole matches: neither one nor the other."""

    def offsets(self, *args: object) -> dict[str, float]:
        return {}


def test_an_algorithm_that_claims_both_shapes_is_refused() -> None:
    with pytest.raises(TypeError, match="exactly one of rate\\(\\) and offsets\\(\\)"):
        ModeConfig("m", _Both())


def test_unlisted_modes_can_be_rejected() -> None:
    modes = parse_modes({"default": {"unlisted": "reject"}, "modes": {"duel": {}}})
    assert modes.accepts("duel") and not modes.accepts("other")
    with pytest.raises(KeyError):
        modes.get("other")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"defaults": {}}, "unknown key(s) ['defaults']; did you mean 'default'?"),
        ({"default": {"algorithm": "trueskill"}}, "unknown algorithm 'trueskill'"),
        ({"default": {"algorithm": "elo2"}}, "unknown algorithm 'elo2'; one of"),
        ({"default": {"algorithm": "glikco2"}}, "did you mean 'glicko2'?"),
        ({"default": {"unlisted": "rejct"}}, "got 'rejct'; did you mean 'reject'?"),
        ({"default": {"teams": "solo"}}, "teams must be one of"),
        (
            {"default": {"glicko2": {"taw": 0.5}}},
            "m.toml: [default.glicko2] unknown key(s) ['taw']",
        ),
        ({"default": {"glicko2": {"tau": -1.0}}}, "[default.glicko2] tau must be between 0.01"),
        ({"modes": {"x": {"pending": {"quit_policy": "win"}}}}, "quit_policy must be"),
        ({"default": {"unlisted": "maybe"}}, "unlisted must be"),
        (
            {"modes": {"x": {"part_time": "no"}}},
            "m.toml: [modes.x] part_time must be true or false, got 'no'",
        ),
        ({"modes": {"x": 3}}, "[modes.x] expected a table, got 3"),
        ({"default": {"algorithm": ["elo"]}}, "unknown algorithm ['elo']"),
        (
            {"modes": {"1v1": {"elo": {"max_gain": 24.0}}}},
            "m.toml: [modes.1v1.elo] parameters for elo, but this mode is rated with glicko2",
        ),
        (
            {"default": {"glicko1": {"min_deviation": 30.0}}, "modes": {"a": {"algorithm": "elo"}}},
            "[default.glicko1] parameters for glicko1, but no mode is rated with it: modes are"
            " rated with elo or glicko2",
        ),
    ],
)
def test_bad_modes_files_name_the_key(data: dict[str, object], message: str) -> None:
    with pytest.raises(ModesError) as info:
        parse_modes(data, source="m.toml")
    assert message in str(info.value)


def test_unreadable_and_invalid_files(tmp_path: Path) -> None:
    with pytest.raises(ModesError, match="cannot read"):
        load_modes(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[default\n")
    with pytest.raises(ModesError, match="not valid TOML"):
        load_modes(bad)


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        # The three: a hang, a ZeroDivisionError and ratings of -5e307.
        (
            "[default.glicko2]\ntau = inf\n",
            "[default.glicko2] tau must be between 0.01 and 10, got inf",
        ),
        ("[default.glicko2]\ntau = 1e300\n", "tau must be between 0.01 and 10, got 1e+300"),
        (
            '[modes.arena]\nalgorithm = "elo"\n[modes.arena.elo]\nmax_gain = 1e308\n',
            "[modes.arena.elo] max_gain must be above 0 and at most 1000, got 1e+308",
        ),
        ("[default.glicko2]\nepsilon = nan\n", "epsilon must be between 1e-12 and 0.01, got nan"),
        ("[default.rank_points]\nmax_points = 1.5\n", "max_points must be a whole number"),
        ('[default.pending]\ngrace_seconds = "60"\n', "grace_seconds must be a number, got '60'"),
        ("[default.pending]\ntimeout_seconds = 1e9\n", "timeout_seconds must be between 1"),
        (
            "[default.glicko2]\nmin_volatility = 0.09\n",
            "unrated_volatility must lie between min_volatility and max_volatility",
        ),
        ("[default.rank_points]\nmin_step = 600\n", "min_step must not be above max_step"),
    ],
)
def test_every_number_is_checked_when_the_file_is_read(
    tmp_path: Path, toml: str, message: str
) -> None:
    path = tmp_path / "modes.toml"
    path.write_text(toml)
    with pytest.raises(ModesError) as info:
        load_modes(path)
    assert str(info.value).startswith(f"{path}: ")
    assert message in str(info.value)
    assert "\n" not in str(info.value)


toml_numbers = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(-(2**63), 2**63 - 1),
    st.booleans(),
    st.text(max_size=3),
)


@settings(deadline=None, max_examples=300)
@given(
    st.sampled_from(sorted(ALGORITHMS)),
    st.data(),
)
def test_generated_modes_files_load_in_range_or_fail_naming_the_key(
    algorithm: str, data: st.DataObject
) -> None:
    cls = ALGORITHMS[algorithm]
    keys = data.draw(st.lists(st.sampled_from(sorted(cls.RANGES)), unique=True, max_size=4))
    table = {key: data.draw(toml_numbers) for key in keys}
    document = {"modes": {"m": {"algorithm": algorithm, algorithm: table}}}
    try:
        config = parse_modes(document, source="g.toml").get("m").algorithm
    except ModesError as exc:
        message = str(exc)
        assert message.startswith(f"g.toml: [modes.m.{algorithm}] ")
        assert "\n" not in message
        named = message.split("] ", 1)[1].split(" ", 1)[0]
        assert named in cls.RANGES
    else:
        for key, accepted in cls.RANGES.items():
            value = getattr(config, key)
            assert math.isfinite(value) and accepted.contains(value)


def test_default_parameters_serve_the_modes_that_use_their_algorithm() -> None:
    data = {"default": {"elo": {"max_gain": 24.0}}, "modes": {"a": {"algorithm": "elo"}}}
    modes = parse_modes(data, source="m.toml")
    assert modes.get("a").algorithm == EloConfig(max_gain=24.0)
    assert modes.get("b").algorithm.name == "glicko2"


def test_a_byte_order_mark_is_not_a_mistake(tmp_path: Path) -> None:
    path = tmp_path / "bom.toml"
    path.write_bytes(b'\xef\xbb\xbf[modes.duel]\nalgorithm = "elo"\n')
    assert load_modes(path).get("duel").algorithm.name == "elo"
