"""The team strategies compared on one simulated history (stream.offline.strategies)."""

from __future__ import annotations

from pathlib import Path

import pytest

from stream.cli.main import main
from stream.offline.strategies import STRATEGIES, compare
from stream.ratings.teams import TeamStrategy
from stream.simulation import SimulationConfig, simulate, write_jsonl


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("s") / "2v2.jsonl"
    config = SimulationConfig(matches=3000, players=300, team_size=2, seed=6, quit_probability=0.01)
    with path.open("w") as f:
        write_jsonl(simulate(config), f)
    return path


def test_each_strategy_beats_a_coin_flip_and_is_paired_with_the_default(history: Path) -> None:
    rows = compare(history)
    assert [run.strategy for run, _ in rows] == list(STRATEGIES)
    assert TeamStrategy.AUTO not in STRATEGIES
    base, same = rows[0]
    assert same.mean == 0.0
    predictions = len(base.losses)
    assert 2800 < predictions < 3000  # one per 2v2 match, less those with quitters (4%)
    for run, diff in rows:
        assert run.log_loss < 0.69
        assert len(run.losses) == len(run.days) == predictions
        assert diff.predictions == predictions
        assert diff.clusters == len(set(base.days)) >= 2
        assert abs(diff.mean - (run.log_loss - base.log_loss)) < 1e-12
    assert len({round(run.log_loss, 6) for run, _ in rows}) == len(STRATEGIES)


def test_prints_one_row_per_strategy(history: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["study", "strategies", str(history)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in lines[1:]] == [s.value for s in STRATEGIES]


def test_refuses_standard_input_and_a_missing_file(capsys: pytest.CaptureFixture[str]) -> None:
    for argv, culprit in (
        (["-"], "not stdin or a pipe"),
        (["/nonexistent.jsonl"], "/nonexistent.jsonl"),
    ):
        code: object
        try:
            code = main(["study", "strategies", *argv])
        except SystemExit as stopped:  # refused by the argument parser
            code = stopped.code
        assert code == 2
        err = capsys.readouterr().err
        assert len(err.splitlines()) == 1
        assert culprit in err
