"""A mode's learned population as a chain of windows: which population rates a match, from the
evidence of the windows two before its own.

A match belongs to the window of its start (``floor(started_at / window)``; a match known only
by its result: the result's time). The population of window ``w`` is the start population
folded with the evidence of every window up to ``w - 2``, in window order
(:func:`stream.ratings.population.next_population` per window). Two windows back, not one: a
window's evidence is complete only once every match that started in it is settled, which a
match still running at the window's end delays by up to the mode's timeout; one more window
gives the live pipeline's partitions that long to report it, so in steady state no match waits
for its population (docs/defaults.md). A window without evidence changes nothing, so folding
only the windows that have some gives the same chain.

Pure and deterministic: the live match partitions (stream/pipeline/learnedpopulation.py) and
replay (stream/offline/learning.py) fold the same integer sums
(:mod:`stream.ratings.population.evidence`) in the same order and hold the same chain.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from stream.ratings.modeconfig import ModeConfig
from stream.ratings.population import (
    EMPTY,
    Population,
    PopulationConfig,
    PopulationStats,
    next_population,
    start,
)
from stream.ratings.population.evidence import Evidence

__all__ = ["LAG", "Chain", "Step"]

# The population of window w folds the evidence of windows up to w - LAG.
LAG = 2


@dataclass(frozen=True, slots=True)
class Step:
    """The population in force from ``window`` on (until the next step)."""

    window: int
    population: Population


@dataclass(slots=True)
class Chain:
    """One mode's chain: the population in force after the windows folded so far, the evidence
    seen and carried, and the steps (each window from which a new population is in force).
    Plain data (a live partition keeps it in a table): the mode's settings are passed to
    :meth:`fold`."""

    initial: Population
    current: Population
    seen: PopulationStats = EMPTY
    carried: PopulationStats = EMPTY
    # The last window folded (None: none yet).
    folded: int | None = None
    steps: list[Step] = field(default_factory=list)

    @classmethod
    def of(cls, mode: ModeConfig) -> Chain:
        first = start(mode)
        return cls(first, first)

    def fold(self, config: PopulationConfig, window: int, evidence: Evidence) -> None:
        """Fold window ``window``'s evidence (windows in increasing order; a window without
        evidence may be skipped) with the mode's settings ``config``. The population it makes
        is in force from ``window + LAG``."""
        if self.folded is not None and window <= self.folded:
            raise ValueError(f"window {window} folded after window {self.folded}")
        self.folded = window
        stats = self.carried + evidence.stats()
        before = self.current
        seen = self.seen + stats
        self.current, self.carried = next_population(config, before, stats, seen)
        # Carried evidence is counted in the window that uses it, not twice.
        self.seen = seen if self.carried is EMPTY else self.seen + stats.without_prior
        if self.current != before:
            self.steps.append(Step(window + LAG, self.current))

    def at(self, window: int) -> Population:
        """The population in force in ``window``, as far as the chain is folded: exact once
        every window up to ``window - LAG`` is (callers check :meth:`knows`)."""
        for step in reversed(self.steps):
            if step.window <= window:
                return step.population
        return self.initial

    def keep_last(self, count: int) -> None:
        """Keep the last ``count`` steps: windows from the oldest of them on are answered as
        before (and those just before it too, from the step it replaced)."""
        drop = len(self.steps) - count
        if drop > 0:
            self.initial = self.steps[drop - 1].population
            del self.steps[:drop]
