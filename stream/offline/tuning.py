"""Parameter search that keeps a change only when it is beyond noise.

Coordinate descent over the knobs of :mod:`stream.offline.search_space`: each trial replays
the search part of the history (training on all of it, in order) and scores its tail. For each
knob every candidate value is tried, and the best one replaces the current value only when its
paired difference in log loss against the current configuration is at least
:data:`~stream.offline.comparison.Z_EVIDENCE` standard errors below zero, the error clustered
by day. A holdout tail of a few thousand matches has a standard error of 0.001-0.005, so a
smaller threshold keeps noise.

Choosing among many candidates on one scored part flatters the winner there. With a time split
the search sees only the matches before the split date, and the winner meets the starting
configuration on the matches from that date on, which the search never scored: that verdict
decides whether the winner is kept.
"""

from __future__ import annotations

import math
import multiprocessing
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass, field

import orjson

from stream.config.modes import Modes, ModesError, PendingConfig, build_mode
from stream.history import HistoryMatch, SeedRating
from stream.offline.comparison import PairedDifference, day_of, paired_difference
from stream.offline.predictions import NEWCOMER_GAMES, predictions
from stream.offline.replayer import Replayer
from stream.offline.search_space import (
    Knob,
    Table,
    Value,
    mode_table,
    population_fixed,
)
from stream.quality import log_loss
from stream.ratings.modeconfig import ModeConfig
from stream.ratings.population import Population

# LEARNED_POPULATION is learned from the search part over windows of this many days of event
# time, then written into the configuration tune prints as its starting values (a mode that
# learns goes on learning from them, live as in replay; a fixed one keeps them).
CALIBRATION_WINDOW_DAYS = 1.0
LEARN = Knob(("population", "window_days"), (CALIBRATION_WINDOW_DAYS,), "number")
# How the search's steps name the learned population.
LEARNED_STEP = "population (learned on the search part, as its start)"
# Fewer scored matches than this and the verdict cannot see differences of a few thousandths.
SMALL_SCORED = 2_000
# A scored part where more than this share of predictions involves a newcomer mostly measures
# how new players are rated.
NEWCOMER_SHARE = 0.5


@dataclass(frozen=True, slots=True)
class Scores:
    """The per-prediction log losses of one configuration on a scored part, with their days."""

    matches: int
    losses: list[float]
    days: list[int]
    newcomers: int
    # Each mode's population at the end of the replay (learned, or as configured).
    learned: Mapping[str, Population] = field(default_factory=dict)

    @property
    def log_loss(self) -> float:
        return math.fsum(self.losses) / len(self.losses) if self.losses else math.nan

    def against(self, other: Scores) -> PairedDifference:
        """This configuration's losses minus ``other``'s, paired on the same predictions."""
        return paired_difference(self.losses, other.losses, self.days)


def score(
    matches: Iterable[HistoryMatch],
    config: ModeConfig,
    seeds: Sequence[SeedRating] = (),
    since: float | None = None,
    skip: int = 0,
) -> Scores:
    """Rate ``matches`` with ``config`` (every mode) and score as ``evaluate`` does."""
    losses: list[float] = []
    days: list[int] = []
    rows: set[int] = set()
    newcomers = 0
    replayer = Replayer(Modes.single(config), None, seeds)
    for prediction in predictions(matches, replayer, since, skip):
        losses.append(log_loss(prediction.p, prediction.actual))
        days.append(day_of(prediction.at))
        rows.add(prediction.row)
        newcomers += prediction.games < NEWCOMER_GAMES
    learned = {name: learner.current for name, learner in replayer.learners.items()}
    return Scores(len(rows), losses, days, newcomers, learned)


@dataclass(frozen=True, slots=True)
class Plan:
    """Which matches the search scores and where the verdict is taken.

    Without ``split`` the search scores the history after its first ``skip`` matches, and the
    verdict is taken there too (flattering the winner). With ``split`` (epoch seconds) the
    search sees only matches before it, scoring them after their first ``skip``; the verdict
    scores the matches from ``split`` on.
    """

    skip: int
    split: float | None = None
    rounds: int = 2


@dataclass(frozen=True, slots=True)
class Trial:
    settings: dict[str, Value]
    log_loss: float


@dataclass(frozen=True, slots=True)
class Step:
    """A change the search kept: ``paired`` is the new configuration against the one before."""

    knob: str
    old: Value | None
    new: Value
    paired: PairedDifference


@dataclass(frozen=True, slots=True)
class Verdict:
    """The search's winner against the starting configuration on the verdict's scored part."""

    matches: int
    base_log_loss: float
    best_log_loss: float
    paired: PairedDifference
    # True when the search never scored these matches (a time split).
    unseen: bool

    @classmethod
    def of(cls, base: Scores, best: Scores, *, unseen: bool) -> Verdict:
        return cls(base.matches, base.log_loss, best.log_loss, best.against(base), unseen)

    @property
    def keep_best(self) -> bool:
        return self.paired.verdict == "better"


@dataclass(frozen=True, slots=True)
class TuneResult:
    base: ModeConfig
    best: ModeConfig
    base_table: Table
    best_table: Table
    search_matches: int
    search_base_log_loss: float
    search_best_log_loss: float
    steps: tuple[Step, ...]
    trials: tuple[Trial, ...]
    verdict: Verdict
    warnings: tuple[str, ...] = field(default=())
    # The kept configuration's population by the end of the verdict's replay, per mode.
    learned: Mapping[str, Population] = field(default_factory=dict)

    @property
    def kept(self) -> ModeConfig:
        """The configuration to use: the winner only when it beat the start beyond noise."""
        return self.best if self.verdict.keep_best else self.base

    @property
    def kept_table(self) -> Table:
        return self.best_table if self.verdict.keep_best else self.base_table


def planned_trials(knobs: Sequence[Knob], plan: Plan) -> int:
    """An upper bound of the replays :func:`tune` makes (for a progress bar): per round every
    knob's values (the learned population: two, learning it then rating with it fixed)."""
    per_round = sum(2 if k.kind == "learned" else len(k.values) for k in knobs)
    return 1 + plan.rounds * per_round + (2 if plan.split else 0)


def population_text(population: Population) -> str:
    """The learned values as a step of the search shows them."""
    parts = [] if population.deviation is None else [f"prior {population.deviation:.0f} points"]
    parts += [
        f"size edge {population.size_edge:.1f}",
        f"persistence {population.persistence:.3f}",
        f"decisiveness {population.decisiveness:.3f}",
    ]
    if population.drift_period is not None:
        parts.append(f"drift period {population.drift_period:.2f} days")
    if population.debut_offset is not None:
        parts.append(f"debut offset {population.debut_offset:.1f}")
    if population.party_edge != 0.0:
        parts.append(f"party edge {population.party_edge:.1f}")
    return ", ".join(parts)


def tune(
    history: Callable[[], Iterable[HistoryMatch]],
    base: ModeConfig,
    plan: Plan,
    knobs: Sequence[Knob],
    seeds: Sequence[SeedRating] = (),
    on_trial: Callable[[Trial], None] | None = None,
    *,
    pending: PendingConfig | None = None,
    jobs: int = 1,
) -> TuneResult:
    """Search ``knobs`` from ``base``; ``history()`` yields the matches afresh for each replay.
    ``pending``: the mode's pending-match policy, written unchanged into the tables (default:
    the built-in one). ``jobs``: processes that replay a knob's candidate values side by side
    (1: all in this one); the result is the same whatever their number, since each replay is
    deterministic and the candidates are judged in their order."""
    search = _Search(history, base, plan, knobs, seeds, on_trial)
    # Where processes cannot be forked (Windows), one process replays everything: slower,
    # the same result.
    if jobs <= 1 or "fork" not in multiprocessing.get_all_start_methods():
        return _tuned(search, base, plan, pending, history)
    global _FORKED  # noqa: PLW0603 (the search the forked processes replay for)
    _FORKED = search
    try:
        # Forked, so each process inherits the search (its history, seeds and knobs) rather
        # than receiving it pickled; a table goes out, its scores come back.
        context = multiprocessing.get_context("fork")
        with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
            search.pool = pool
            return _tuned(search, base, plan, pending, history)
    finally:
        _FORKED = None


# The search a forked replaying process works for (set in the parent before the fork).
_FORKED: _Search | None = None


def _replayed_forked(table: Table) -> Scores | None:
    assert _FORKED is not None, "set before the processes were forked"
    return _FORKED.replayed(table)


def _tuned(
    search: _Search,
    base: ModeConfig,
    plan: Plan,
    pending: PendingConfig | None,
    history: Callable[[], Iterable[HistoryMatch]],
) -> TuneResult:
    """:func:`tune`'s search and verdict, with ``search``'s replays."""
    seeds = search.seeds
    base_table = mode_table(base, PendingConfig() if pending is None else pending)
    base_scores = search.run(base_table)
    if base_scores is None:
        raise ValueError(f"the starting configuration {base.name!r} does not rebuild")
    best_table, best_scores = base_table, base_scores
    steps: list[Step] = []
    for _ in range(plan.rounds):
        best_table, best_scores, changed = search.one_round(best_table, best_scores, steps)
        if not changed:
            break
    best = build_mode(base.name, best_table, "tune winner")
    warnings = scored_part_warnings(base_scores, "the search's scored part")
    split = plan.split
    if split is None:
        verdict = Verdict.of(base_scores, best_scores, unseen=False)
        kept_scores = best_scores if verdict.keep_best else base_scores
    else:
        after_base = score(history(), base, seeds, since=split)
        after_best = (
            after_base if best_table == base_table else score(history(), best, seeds, since=split)
        )
        verdict = Verdict.of(after_base, after_best, unseen=True)
        warnings += scored_part_warnings(after_base, "the verdict's scored part")
        kept_scores = after_best if verdict.keep_best else after_base
    return TuneResult(
        base,
        best,
        base_table,
        best_table,
        base_scores.matches,
        base_scores.log_loss,
        best_scores.log_loss,
        tuple(steps),
        tuple(search.trials),
        verdict,
        warnings,
        kept_scores.learned,
    )


@dataclass(eq=False)
class _Search:
    """One tune's replays: every configuration tried, each replayed once."""

    history: Callable[[], Iterable[HistoryMatch]]
    base: ModeConfig
    plan: Plan
    knobs: Sequence[Knob]
    seeds: Sequence[SeedRating]
    on_trial: Callable[[Trial], None] | None
    trials: list[Trial] = field(default_factory=list, init=False)
    # The log loss of every configuration replayed. Per-prediction losses are kept only for
    # the start, the current best and the candidates of one knob: all of them would hold
    # (trials x scored predictions) numbers.
    known: dict[bytes, float] = field(default_factory=dict, init=False)
    # Processes that replay a knob's candidates side by side (None: one after another here).
    pool: Executor | None = field(default=None, init=False)

    def search_part(self) -> Iterator[HistoryMatch]:
        split = self.plan.split
        if split is None:
            return iter(self.history())
        return (m for m in self.history() if m.at < split)

    def replayed(self, table: Table) -> Scores | None:
        """``table`` replayed on the search part (None: it does not build); nothing noted."""
        try:
            config = build_mode(self.base.name, table, "tune candidate")
        except ModesError:
            return None  # outside the algorithm's valid range in this combination
        return score(self.search_part(), config, self.seeds, skip=self.plan.skip)

    def run(self, table: Table) -> Scores | None:
        """``table`` replayed on the search part (None: it does not build), noted as a trial."""
        return self._noted(table, self.replayed(table))

    def run_all(self, tables: Sequence[Table]) -> list[Scores | None]:
        """:meth:`run` of each of ``tables``, side by side on the pool when there is one; noted
        in their order, so the trials are the same as one after another."""
        if self.pool is None or len(tables) < 2:
            return [self.run(table) for table in tables]
        found = list(self.pool.map(_replayed_forked, tables))
        return [self._noted(table, scores) for table, scores in zip(tables, found, strict=True)]

    def _noted(self, table: Table, scores: Scores | None) -> Scores | None:
        if scores is None:
            return None
        key = _key(table)
        if key not in self.known:
            self.known[key] = scores.log_loss
            values = {k.name: v for k in self.knobs if (v := k.read(table)) is not None}
            trial = Trial(values, scores.log_loss)
            self.trials.append(trial)
            if self.on_trial is not None:
                self.on_trial(trial)
        return scores

    def calibrated(self, table: Table) -> tuple[Table, Scores, str] | None:
        """``table`` starting from the population its rules learn from the search part (None:
        not one mode, or nothing learned or buildable)."""
        learning = self.run(LEARN.applied(table, CALIBRATION_WINDOW_DAYS))
        if learning is None or len(learning.learned) != 1:
            return None
        (population,) = learning.learned.values()
        config = build_mode(self.base.name, table, "tune candidate")
        fixed = population_fixed(table, config, population)
        scores = None if fixed == table else self.run(fixed)
        return None if scores is None else (fixed, scores, population_text(population))

    def one_round(
        self, best_table: Table, best_scores: Scores, steps: list[Step]
    ) -> tuple[Table, Scores, bool]:
        """Each knob in turn from the best so far: the best after the round, and whether it
        changed (each change a step)."""
        changed = False
        for knob in self.knobs:
            if knob.kind == "learned":
                found = self.calibrated(best_table)
                if found is None:
                    continue
                fixed_table, fixed_scores, text = found
                paired = fixed_scores.against(best_scores)
                if paired.verdict == "better":
                    steps.append(Step(LEARNED_STEP, "as configured", text, paired))
                    best_table, best_scores, changed = fixed_table, fixed_scores, True
                continue
            found_step = self._knob(knob, best_table, best_scores)
            if found_step is not None:
                step, best_table, best_scores = found_step
                steps.append(step)
                changed = True
        return best_table, best_scores, changed

    def _knob(
        self, knob: Knob, best_table: Table, best_scores: Scores
    ) -> tuple[Step, Table, Scores] | None:
        """The best value of ``knob`` that beats the current one beyond noise (None: none)."""
        current = knob.read(best_table)
        tried: list[tuple[Value, Table]] = []
        for value in knob.values:
            table = knob.applied(best_table, value)
            earlier = self.known.get(_key(table))
            # Replayed before and no lower than the current loss: it cannot be better.
            if value == current or (earlier is not None and earlier >= best_scores.log_loss):
                continue
            tried.append((value, table))
        candidates = [
            (value, table, scores)
            for (value, table), scores in zip(
                tried, self.run_all([table for _, table in tried]), strict=True
            )
            if scores is not None
        ]
        # The lowest loss among the values that beat the current one beyond noise: the lowest
        # of all may be a noisy one while a close second is clearly better.
        for value, table, scores in sorted(candidates, key=lambda c: c[2].log_loss):
            paired = scores.against(best_scores)
            if paired.verdict == "better":
                return Step(knob.name, current, value, paired), table, scores
        return None


def _key(table: Table) -> bytes:
    return orjson.dumps(table, option=orjson.OPT_SORT_KEYS)


def _days(n: int) -> str:
    return "1 day" if n == 1 else f"{n} days"


def scored_part_warnings(scores: Scores, where: str) -> tuple[str, ...]:
    """What makes a scored part a poor judge: too few matches, or mostly newcomers."""
    out: list[str] = []
    if scores.matches < SMALL_SCORED:
        out.append(
            f"{where} has only {scores.matches} matches on {_days(len(set(scores.days)))}: "
            "differences of a few thousandths in log loss are noise there"
        )
    if scores.losses and scores.newcomers / len(scores.losses) > NEWCOMER_SHARE:
        share = scores.newcomers / len(scores.losses)
        out.append(
            f"{share:.0%} of the predictions in {where} involve a player with fewer than "
            f"{NEWCOMER_GAMES} games: the result mostly reflects how new players are rated"
        )
    return tuple(out)
