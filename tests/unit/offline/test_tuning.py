"""Parameter search (stream.offline.tuning) on a small simulated 1v1 history."""

from __future__ import annotations

import dataclasses
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from stream.history import HistoryMatch, read_history
from stream.offline.evaluation import evaluate
from stream.offline.replayer import Replayer
from stream.offline.tuning import (
    GRIDS,
    MIN_GAIN,
    Trial,
    TuneResult,
    modes_toml_section,
    tune,
)
from stream.ratings.algorithm import AlgorithmConfig
from stream.ratings.elo import EloConfig
from stream.ratings.glicko1 import Glicko1Config
from stream.ratings.glicko2 import Glicko2Config
from stream.ratings.modes import ModeConfig, Modes, parse_modes
from stream.ratings.teams import TeamStrategy
from stream.ratings.zonestats import ZoneStatsConfig
from stream.simulation import SimulationConfig, simulate, write_csv

MATCHES = 600
SKIP = 300
ROUNDS = 2
# Off the defaults on purpose: a small max_gain leaves the search room to improve, and the
# temperature (not searched) and team strategy must survive into the result and its TOML.
BASE_GAIN = 8.0
BASE = ModeConfig(
    "default", EloConfig(temperature=200.0, max_gain=BASE_GAIN), TeamStrategy.COMPOSITE_OPPONENT
)


@pytest.fixture(scope="module")
def history_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("tuning") / "history.csv"
    with path.open("w", newline="", encoding="utf-8") as file:
        written = write_csv(simulate(SimulationConfig(matches=MATCHES, players=60, seed=5)), file)
    assert written == MATCHES
    return path


@pytest.fixture(scope="module")
def result(history_path: Path) -> TuneResult:
    seen: list[Trial] = []

    def history() -> Iterator[HistoryMatch]:
        return read_history(history_path)

    out = tune(history, BASE, skip=SKIP, rounds=ROUNDS, on_trial=seen.append)
    assert list(out.trials) == seen  # on_trial saw every trial, in order
    return out


def test_tuning_never_ends_worse_than_the_defaults(result: TuneResult) -> None:
    assert result.best_log_loss <= result.baseline_log_loss
    assert result.trials[0].params == {"max_gain": BASE_GAIN}
    assert result.trials[0].log_loss == result.baseline_log_loss
    losses = [t.log_loss for t in result.trials]
    assert result.best_log_loss in losses
    # A candidate is only taken when it beats the best so far by MIN_GAIN.
    assert min(losses) <= result.best_log_loss <= min(losses) + MIN_GAIN


def test_every_trial_comes_from_the_grid(result: TuneResult) -> None:
    allowed = [o for options in GRIDS["elo"].values() for o in options]
    assert {"max_gain": BASE_GAIN} in allowed
    for trial in result.trials:
        assert trial.params in allowed
    # Each configuration is tried at most once.
    keys = [tuple(sorted(t.params.items())) for t in result.trials]
    assert len(keys) == len(set(keys))


def test_trial_count_is_bounded(result: TuneResult) -> None:
    grid_size = sum(len(options) for options in GRIDS["elo"].values())
    assert 1 < len(result.trials) <= 1 + grid_size * ROUNDS


def test_scored_matches_are_the_tail(result: TuneResult) -> None:
    assert result.scored_matches == MATCHES - SKIP


def test_best_config_scores_the_same_when_evaluated_afresh(
    result: TuneResult, history_path: Path
) -> None:
    assert isinstance(result.best.algorithm, EloConfig)
    best_gain = result.best.algorithm.max_gain
    assert {"max_gain": best_gain} in [t.params for t in result.trials]
    fresh = evaluate(read_history(history_path), Replayer(Modes.single(result.best)), skip=SKIP)
    assert fresh.log_loss == result.best_log_loss
    assert fresh.matches == MATCHES - SKIP
    # Only max_gain is searched for Elo: everything else is the base configuration.
    assert result.best == dataclasses.replace(
        BASE, algorithm=EloConfig(temperature=200.0, max_gain=best_gain)
    )
    # On this history a larger gain predicts better than the base's: the search moved.
    assert best_gain > BASE_GAIN
    assert result.best_log_loss < result.baseline_log_loss


def test_baseline_is_the_base_config_evaluated(result: TuneResult, history_path: Path) -> None:
    fresh = evaluate(read_history(history_path), Replayer(Modes.single(BASE)), skip=SKIP)
    assert fresh.log_loss == result.baseline_log_loss


@pytest.mark.parametrize(("section", "lookup"), [("default", None), ("modes.tuned", "tuned")])
def test_modes_toml_section_round_trips(
    result: TuneResult, section: str, lookup: str | None
) -> None:
    text = modes_toml_section(result, section, "history.csv")
    data = tomllib.loads(text)
    modes = parse_modes(data, source="tuned.toml")
    mode = modes.default if lookup is None else modes.listed[lookup]
    assert mode.algorithm == result.best.algorithm
    assert isinstance(mode.algorithm, EloConfig)
    assert mode.algorithm == EloConfig(temperature=200.0, max_gain=mode.algorithm.max_gain)
    assert mode.teams is TeamStrategy.COMPOSITE_OPPONENT
    assert text.startswith("# tuned on history.csv: log loss ")
    assert f"on the last {MATCHES - SKIP} matches" in text


@pytest.mark.parametrize(
    "algorithm",
    [
        Glicko2Config(
            tau=0.3,
            min_volatility=0.02,
            unrated_volatility=0.03,
            max_volatility=0.04,
            period_days=3.0,
            epsilon=1e-7,
        ),
        Glicko1Config(c=12.0, min_deviation=40.0, initial_deviation=250.0),
        EloConfig(max_gain=1.0 / 3.0),
        ZoneStatsConfig(game_mult=0.25),
    ],
)
def test_modes_toml_section_round_trips_every_algorithm(algorithm: AlgorithmConfig) -> None:
    best = ModeConfig("default", algorithm, TeamStrategy.INDIVIDUAL)
    start = ModeConfig("default", type(algorithm)(), TeamStrategy.INDIVIDUAL)
    result = TuneResult(start, best, 0.61, 0.69, 100, ())
    text = modes_toml_section(result, "modes.tuned", "h.jsonl")
    mode = parse_modes(tomllib.loads(text)).listed["tuned"]
    assert mode.algorithm == algorithm
    assert mode.teams is TeamStrategy.INDIVIDUAL
    tuned = [line.split(" = ")[0] for line in text.splitlines() if line.endswith("# tuned")]
    # "# tuned" marks what differs from the configuration the search started from.
    changed = [
        f.name
        for f in dataclasses.fields(algorithm)
        if getattr(algorithm, f.name) != getattr(start.algorithm, f.name)
    ]
    assert tuned == changed
    assert "(starting configuration: 0.69000)" in text.splitlines()[0]
