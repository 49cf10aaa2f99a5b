"""Parameter search: the configuration with the lowest log loss on a held-out tail.

Coordinate descent over a small grid per parameter: each trial replays the whole history
(training on all of it, in order) and scores only the tail, so a trial costs one pass over the
file and memory stays bounded by the number of players.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, cast

from stream.history import HistoryMatch
from stream.offline.evaluation import evaluate
from stream.offline.replayer import Replayer
from stream.ratings.modes import ModeConfig, Modes

Overrides = dict[str, float]


def _one(field: str, *values: float) -> tuple[Overrides, ...]:
    return tuple({field: v} for v in values)


def _volatility(*values: float) -> tuple[Overrides, ...]:
    # With one game per rating period the volatility barely moves from its start, so it acts as
    # per-game process noise; its bounds move with it to keep the INVERSUS proportions.
    return tuple(
        {"min_volatility": v * 2 / 3, "unrated_volatility": v, "max_volatility": v * 4 / 3}
        for v in values
    )


# Knobs worth turning around each default, each a list of field overrides. Elo's and ZoneStats'
# temperatures are not searched: with max_gain / game_mult they only rescale the ratings.
GRIDS: dict[str, dict[str, tuple[Overrides, ...]]] = {
    "glicko2": {
        "volatility": _volatility(0.02, 0.03, 0.045, 0.06, 0.09, 0.12, 0.18),
        "unrated_deviation": _one("unrated_deviation", 1.2, 1.5, 2.015, 2.5),
        "min_deviation": _one("min_deviation", 0.05, 0.1, 0.175, 0.3),
        "tau": _one("tau", 0.3, 0.5, 1.0),
        "period_days": _one("period_days", 3.0, 14.0, 60.0),
    },
    "glicko1": {
        "c": _one("c", 1.0, 2.0, 3.1, 5.0, 8.0, 12.0, 20.0),
        "min_deviation": _one("min_deviation", 10.0, 25.0, 40.0, 60.0, 80.0),
        "initial_deviation": _one("initial_deviation", 200.0, 250.0, 300.0, 350.0),
    },
    "elo": {"max_gain": _one("max_gain", 4.0, 8.0, 12.0, 16.0, 24.0, 32.0, 48.0, 64.0)},
    "zonestats": {"game_mult": _one("game_mult", 0.25, 0.5, 1.0, 2.0, 4.0, 8.0)},
}
# A candidate must beat the best so far by this much: smaller gains are noise, not tuning.
MIN_GAIN = 1e-5


@dataclass(frozen=True, slots=True)
class Trial:
    params: dict[str, float]
    log_loss: float


@dataclass(frozen=True, slots=True)
class TuneResult:
    base: ModeConfig
    best: ModeConfig
    best_log_loss: float
    baseline_log_loss: float
    scored_matches: int
    trials: tuple[Trial, ...]


def tune(
    history: Callable[[], Iterable[HistoryMatch]],
    base: ModeConfig,
    skip: int,
    rounds: int = 2,
    on_trial: Callable[[Trial], None] | None = None,
) -> TuneResult:
    """Search ``base.algorithm``'s grid; ``history()`` yields the matches afresh for each trial.

    The first ``skip`` matches only train; the rest are scored.
    """
    grid = GRIDS[base.algorithm.name]
    trials: list[Trial] = []
    seen: dict[tuple[tuple[str, float], ...], float] = {}
    scored = 0

    searched = sorted({f for options in grid.values() for o in options for f in o})

    def run(config: ModeConfig) -> float:
        nonlocal scored
        params = {name: float(getattr(config.algorithm, name)) for name in searched}
        key = tuple(sorted(params.items()))
        if key not in seen:
            metrics = evaluate(history(), Replayer(Modes.single(config)), skip=skip)
            seen[key] = metrics.log_loss
            scored = metrics.matches
            trial = Trial(params, metrics.log_loss)
            trials.append(trial)
            if on_trial is not None:
                on_trial(trial)
        return seen[key]

    best = base
    baseline = best_loss = run(base)
    for _ in range(rounds):
        improved = False
        for options in grid.values():
            for overrides in options:
                try:
                    algorithm = dataclasses.replace(cast(Any, best.algorithm), **overrides)
                except ValueError:
                    continue  # outside the algorithm's valid range in this combination
                candidate = dataclasses.replace(best, algorithm=algorithm)
                loss = run(candidate)
                if loss < best_loss - MIN_GAIN:
                    best, best_loss, improved = candidate, loss, True
        if not improved:
            break
    return TuneResult(base, best, best_loss, baseline, scored, tuple(trials))


def modes_toml_section(result: TuneResult, section: str, source: str) -> str:
    """The winning configuration as a ready-to-paste modes.toml section."""
    algorithm = result.best.algorithm
    start = result.base.algorithm
    lines = [
        f"# tuned on {source}: log loss {result.best_log_loss:.5f} on the last "
        f"{result.scored_matches} matches (starting configuration: "
        f"{result.baseline_log_loss:.5f})",
        f"[{section}]",
        f'algorithm = "{algorithm.name}"',
        f'teams = "{result.best.teams.value}"',
        f"[{section}.{algorithm.name}]",
    ]
    for field in dataclasses.fields(algorithm):
        value = getattr(algorithm, field.name)
        marker = "" if value == getattr(start, field.name) else "  # tuned"
        lines.append(f"{field.name} = {value!r}{marker}")
    return "\n".join(lines) + "\n"
