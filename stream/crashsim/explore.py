"""Many schedules, seed after seed, over every core: what ``skillstream crashsim`` runs.

Each process runs its share of the seeds one after the other; a seed's outcome depends on the
seed alone (stream/crashsim/schedule.py), never on the process or the order, so a failing seed
printed here fails the same way alone (``skillstream crashsim --seed N``).
"""

from __future__ import annotations

import logging
import multiprocessing
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from stream.crashsim.run import Outcome, run_schedule
from stream.crashsim.schedule import draw_schedule

__all__ = ["Exploration", "explore", "run_seeds"]


@dataclass
class Exploration:
    """What a run of many schedules found."""

    schedules: int = 0
    failed: list[Outcome] = field(default_factory=list)
    kills: int = 0
    behind: int = 0
    ratings: int = 0
    steps: int = 0
    seconds: float = 0.0

    def add(self, outcome: Outcome) -> None:
        self.schedules += 1
        self.kills += outcome.kills
        self.behind += outcome.behind
        self.ratings += outcome.ratings
        self.steps += outcome.steps
        if not outcome.passed:
            self.failed.append(outcome)


def run_seeds(seeds: list[int], short: float | None, use_checkpoints: bool) -> list[Outcome]:
    """Run each seed's schedule (one process's share)."""
    # The worker code logs every crash it contains; here each one is a check's business.
    logging.disable(logging.CRITICAL)
    return [
        run_schedule(draw_schedule(seed, short=short), use_checkpoints=use_checkpoints)
        for seed in seeds
    ]


def explore(
    first: int,
    count: int,
    *,
    processes: int,
    short: float | None = None,
    use_checkpoints: bool = True,
    progress: Callable[[int, int], None] = lambda done, failed: None,
    chunk: int = 25,
) -> Exploration:
    """Run the schedules of seeds ``first`` to ``first + count - 1`` on ``processes``
    processes (1: in this one), calling ``progress(done, failed)`` as chunks finish."""
    started = time.monotonic()
    found = Exploration()
    seeds = list(range(first, first + count))
    chunks = [seeds[i : i + chunk] for i in range(0, len(seeds), chunk)]
    if processes <= 1:
        results = (run_seeds(c, short, use_checkpoints) for c in chunks)
        for outcomes in results:
            for outcome in outcomes:
                found.add(outcome)
            progress(found.schedules, len(found.failed))
    else:
        # Fork: the children start with the modules imported (a spawned child would import
        # them again, a second or two each).
        context = multiprocessing.get_context("fork")
        with context.Pool(processes, initializer=_child) as pool:
            jobs = [(c, short, use_checkpoints) for c in chunks]
            for outcomes in pool.imap(_run_chunk, jobs):
                for outcome in outcomes:
                    found.add(outcome)
                progress(found.schedules, len(found.failed))
    found.failed.sort(key=lambda o: o.seed)
    found.seconds = time.monotonic() - started
    return found


def _child() -> None:
    """A pool process ends when the pool stops it: not through the command's SIGTERM handler
    (stream/cli/main.py), which would raise in it while it exits."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _run_chunk(job: tuple[list[int], float | None, bool]) -> list[Outcome]:
    return run_seeds(*job)
