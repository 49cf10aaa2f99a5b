"""A modes file whose modes learn their population is what a worker and the offline commands
both take: the worker learns it live exactly as replay does (docs/decisions.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from stream.cli.main import main
from stream.config.modes import Modes, load_modes
from stream.config.settings import Settings
from stream.simulation import SimulationConfig, simulate, write_csv

LEARNS_IN_DEFAULT = "[default.population]\nwindow_days = 1.0\n"
LEARNS_IN_ONE_MODE = "[modes.duel]\n[modes.duel.population]\nwindow_days = 7.0\n"


@pytest.mark.parametrize("text", [LEARNS_IN_DEFAULT, LEARNS_IN_ONE_MODE])
def test_a_worker_takes_a_modes_file_whose_modes_learn(tmp_path: Path, text: str) -> None:
    path = tmp_path / "modes.toml"
    path.write_text(text, encoding="utf-8")
    modes = Settings.from_env({"SKILLSTREAM_MODES_FILE": str(path)}).load_modes()
    assert modes == load_modes(path)
    assert modes.get("duel").population.learns


def test_the_built_in_default_learns_its_population_every_six_hours() -> None:
    population = Modes().default.population
    assert population.learns and population.window_days == 0.25
    assert Settings.from_env({}).load_modes() == Modes()


def test_the_offline_commands_learn_without_a_word(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    history = tmp_path / "h.csv"
    with history.open("w", newline="") as file:
        write_csv(simulate(SimulationConfig(matches=200, players=30, seed=3)), file)
    path = tmp_path / "modes.toml"
    path.write_text(LEARNS_IN_DEFAULT, encoding="utf-8")
    assert main(["evaluate", str(history), "--modes-file", str(path), "--json"]) == 0
    assert main(["evaluate", str(history), "--json"]) == 0
    assert capsys.readouterr().err == ""
