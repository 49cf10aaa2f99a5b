"""What tune searches (stream.offline.search_space): knobs as modes-file keys."""

from __future__ import annotations

import tomllib

import pytest

from stream.config.modes import PendingConfig, build_mode, parse_modes
from stream.offline.search_space import (
    BY_ALGORITHM,
    COMMON,
    LEARNED_POPULATION,
    knobs_for,
    mode_table,
    toml_section,
)
from stream.ratings.algorithm import ALGORITHMS
from stream.ratings.elo import EloConfig
from stream.ratings.glicko2 import Glicko2Config
from stream.ratings.modeconfig import ModeConfig, QuitPolicy
from stream.ratings.population import PopulationConfig
from stream.ratings.rank_points import RankPointsConfig
from stream.ratings.teams import TeamStrategy


@pytest.mark.parametrize("algorithm", sorted(ALGORITHMS))
@pytest.mark.parametrize("teams", list(TeamStrategy))
def test_a_mode_table_builds_the_same_mode_again(algorithm: str, teams: TeamStrategy) -> None:
    config = ModeConfig(
        "duel",
        ALGORITHMS[algorithm](),
        teams,
        RankPointsConfig(upset_bonus=250.0),
        quits=QuitPolicy.NORMAL,
    )
    pending = PendingConfig(grace_seconds=2.0)
    table = mode_table(config, pending)
    assert table["algorithm"] == algorithm
    assert table["teams"] == teams.value
    assert build_mode("duel", table) == config
    text = toml_section(table, "modes.duel")
    modes = parse_modes(tomllib.loads(text))
    assert modes.listed["duel"] == config
    assert modes.pending("duel") == pending


@pytest.mark.parametrize("hold", [(), ("decisiveness", "deviation")])
def test_a_mode_table_writes_the_values_held_and_builds_them_again(hold: tuple[str, ...]) -> None:
    config = ModeConfig("duel", population=PopulationConfig(window_days=0.25, hold=hold))
    table = mode_table(config, PendingConfig())
    text = toml_section(table, "modes.duel")
    # Nothing held is the default, not written.
    assert ("hold = " in text) == bool(hold)
    assert parse_modes(tomllib.loads(text)).listed["duel"] == config


@pytest.mark.parametrize("algorithm", sorted(ALGORITHMS))
def test_every_candidate_of_every_knob_is_a_valid_modes_key(algorithm: str) -> None:
    base = mode_table(ModeConfig("m", ALGORITHMS[algorithm]()), PendingConfig())
    for knob in knobs_for(algorithm):
        for value in knob.values:
            build_mode("m", knob.applied(base, value))  # raises on a misspelt or bad key
            assert knob.read(knob.applied(base, value)) == value
    # The learned population has no value to set: tuning.py learns it, then fixes it.
    with pytest.raises(TypeError, match="learned from the history"):
        LEARNED_POPULATION.applied(base, 1.0)


def test_applying_a_knob_leaves_the_original_table_alone() -> None:
    base = mode_table(ModeConfig("m", Glicko2Config()), PendingConfig())
    volatility = BY_ALGORITHM["glicko2"][0]
    changed = volatility.applied(base, 0.09)
    assert base["glicko2"]["unrated_volatility"] == 0.06
    # The bounds keep their proportions around the volatility.
    assert changed["glicko2"]["min_volatility"] == pytest.approx(0.06)
    assert changed["glicko2"]["max_volatility"] == pytest.approx(0.12)
    assert build_mode("m", changed).algorithm == Glicko2Config(
        min_volatility=0.09 * 2 / 3, unrated_volatility=0.09, max_volatility=0.09 * 4 / 3
    )


def test_the_team_strategy_is_a_shared_knob_left_out_for_one_player_teams() -> None:
    teams = COMMON[0]
    assert teams.path == ("teams",)
    assert teams.kind == "choice"
    assert set(teams.values) == {s.value for s in TeamStrategy}
    assert teams in knobs_for("elo")
    assert teams not in knobs_for("elo", teams=False)
    elo = mode_table(ModeConfig("m", EloConfig()), PendingConfig())
    assert build_mode("m", teams.applied(elo, "individual")).teams is TeamStrategy.INDIVIDUAL


def test_toml_marks_the_named_keys() -> None:
    table = {"algorithm": "elo", "teams": "individual", "elo": {"max_gain": 16.0}}
    text = toml_section(table, "default", {"elo.max_gain": "tuned"})
    assert text.splitlines() == [
        "[default]",
        'algorithm = "elo"',
        'teams = "individual"',
        "[default.elo]",
        "max_gain = 16.0  # tuned",
    ]
