"""A worker rates with a fixed population; learning it is offline only (docs/decisions.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from stream.cli.main import main
from stream.config.modes import Modes, ModesError, check_fixed_population, load_modes
from stream.config.settings import Settings
from stream.simulation import SimulationConfig, simulate, write_csv

LEARNS_IN_DEFAULT = "[default.population]\nwindow_days = 1.0\n"
LEARNS_IN_ONE_MODE = "[modes.duel]\n[modes.duel.population]\nwindow_days = 7.0\n"


@pytest.mark.parametrize(
    ("text", "table"),
    [(LEARNS_IN_DEFAULT, "[default.population]"), (LEARNS_IN_ONE_MODE, "[modes.duel.population]")],
)
def test_the_worker_refuses_a_mode_that_learns_in_one_line_naming_file_and_key(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    text: str,
    table: str,
) -> None:
    path = tmp_path / "modes.toml"
    path.write_text(text, encoding="utf-8")
    monkeypatch.setenv("SKILLSTREAM_MODES_FILE", str(path))
    assert main(["worker"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1, err
    assert err.startswith(f"skillstream worker: error: {path}: {table} window_days above 0")
    # Every live reader of the modes file meets the same rule.
    with pytest.raises(ModesError, match="window_days"):
        Settings.from_env({"SKILLSTREAM_MODES_FILE": str(path)}).load_modes()


def test_the_built_in_default_and_a_fixed_population_are_what_a_worker_takes(
    tmp_path: Path,
) -> None:
    check_fixed_population(Modes(), "built-in")
    assert not Modes().default.population.learns
    path = tmp_path / "modes.toml"
    path.write_text("[default.population]\nwindow_days = 0.0\nsize_edge = 80.0\n")
    assert Settings.from_env({"SKILLSTREAM_MODES_FILE": str(path)}).load_modes() == load_modes(path)


def test_the_offline_commands_learn_and_say_a_worker_refuses_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    history = tmp_path / "h.csv"
    with history.open("w", newline="") as file:
        write_csv(simulate(SimulationConfig(matches=200, players=30, seed=3)), file)
    path = tmp_path / "modes.toml"
    path.write_text(LEARNS_IN_DEFAULT, encoding="utf-8")
    assert main(["evaluate", str(history), "--modes-file", str(path), "--json"]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"skillstream evaluate: note: {path}: [default.population] window_days above 0: the "
        "population is learned from this history, offline only (a worker refuses this file)"
    ]
    # Without the file: nothing to say.
    assert main(["evaluate", str(history), "--json"]) == 0
    assert capsys.readouterr().err == ""
