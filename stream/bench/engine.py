"""Engine benchmarks: microseconds per player update and replay matches per second."""

from __future__ import annotations

import statistics
import tempfile
import time
import timeit
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from stream.bench.baseline import plain_loop_replay, textbook_loop_replay
from stream.config.modes import Modes
from stream.offline.intake import Intake
from stream.offline.replayer import Replayer
from stream.ratings.algorithm import ALGORITHMS, AlgorithmConfig
from stream.ratings.engine import MatchView, rate_player
from stream.ratings.modeconfig import ModeConfig
from stream.ratings.skill import PlayerState, PlayerStats, Result, Skill
from stream.simulation import SimulationConfig, simulate, write_csv


@dataclass(frozen=True, slots=True)
class UpdateTiming:
    algorithm: str
    update_us: float  # the algorithm's own one-game update
    rate_player_us: float  # the engine entry point, 1v1, inactivity and Rank Points included


@dataclass(frozen=True, slots=True)
class ReplayTiming:
    """Median seconds of each way to rate the same generated history."""

    matches: int
    replay_s: float  # skillstream's Replayer over the history's Intake: what `replay` does
    # The same with the built-in defaults (`replay` without a modes file): every mode learning
    # its population, the drift and the experience term on.
    default_s: float
    textbook_s: float  # Glickman's steps as small functions, csv.DictReader
    tuned_s: float  # the same loop hand-tuned
    max_rating_difference: float  # largest |rating| gap between the replay and the loops


def _best_us(fn: Callable[[], object], number: int, repeat: int = 5) -> float:
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6


def time_updates(number: int = 20000) -> list[UpdateTiming]:
    timings = []
    for name, cls in ALGORITHMS.items():
        algorithm: AlgorithmConfig = cls()
        me = Skill(1520.0, 80.0, 0.06) if name == "glicko2" else algorithm.initial()
        mode = ModeConfig("bench", algorithm)
        teams = (("a",), ("b",))
        stats = {"a": PlayerStats(120.0, 600.0), "b": PlayerStats(80.0, 600.0)}
        match = MatchView(teams, (0, 1), 1_000_000.0 + 3 * 86400, stats)
        start = algorithm.initial()
        snaps = {
            "a": PlayerState(start.rating + 20, start.deviation, start.volatility, 0, 3, 1e6),
            "b": PlayerState(start.rating - 20, start.deviation, start.volatility, 0, 3, 1e6),
        }
        if mode.pairwise is not None:
            update: Callable[[], object] = partial(
                mode.pairwise.rate, me, [Result(1480.0, 90.0, 1.0)]
            )
        elif mode.whole_match is not None:
            ratings = {"a": 520.0, "b": 480.0}
            update = partial(mode.whole_match.offsets, teams, ratings, (0, 1), stats)
        entry = partial(rate_player, mode, "a", snaps["a"], match, snaps)
        update_us = _best_us(update, number)
        entry_us = _best_us(entry, number)
        timings.append(UpdateTiming(name, update_us, entry_us))
    return timings


def make_history(path: Path, matches: int, seed: int = 7) -> None:
    config = SimulationConfig(matches=matches, seed=seed)
    with path.open("w", newline="") as f:
        write_csv(simulate(config), f)


def _replayed(path: Path, modes: Modes) -> tuple[Replayer, float]:
    """``path`` replayed as `skillstream replay` does, and the seconds it took."""
    t0 = time.perf_counter()
    replayer = Replayer(modes)
    for match in Intake(path, modes):
        replayer.rate(match)
    return replayer, time.perf_counter() - t0


def time_replay(matches: int = 200_000, runs: int = 3) -> ReplayTiming:
    """Replay the published Glicko-2 (``ModeConfig`` defaults: INVERSUS parameters, no
    experience term, as the loops compute), the built-in defaults and both plain loops on the
    same generated file.

    The four alternate within each run so machine noise hits them alike; medians are kept.
    """
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "history.csv"
        make_history(path, matches)
        times: dict[str, list[float]] = {"replay": [], "default": [], "textbook": [], "tuned": []}
        loops = {"textbook": textbook_loop_replay, "tuned": plain_loop_replay}
        finals: dict[str, dict[str, tuple[float, float, float]]] = {}
        published = Modes.single(ModeConfig("default"))
        for _ in range(runs):
            replayer, seconds = _replayed(path, published)
            times["replay"].append(seconds)
            times["default"].append(_replayed(path, Modes())[1])
            for name, loop in loops.items():
                t0 = time.perf_counter()
                finals[name] = loop(path)
                times[name].append(time.perf_counter() - t0)
    table = replayer.tables["default"]
    diff = max(
        abs(table[p].rating - r) for final in finals.values() for p, (r, _, _) in final.items()
    )
    median = {name: statistics.median(values) for name, values in times.items()}
    return ReplayTiming(
        matches, median["replay"], median["default"], median["textbook"], median["tuned"], diff
    )
