"""The offline side of a learned population: one :class:`PopulationLearner` per mode.

Replay, evaluate and tune rate a history in order; the learner gives each match the population
in force for its window (:mod:`stream.ratings.population`) and adds the match's evidence to the
open window. A window closes when the first match of a later window arrives; a match whose
window has already closed (a history not in time order) adds its evidence to the open one.
Each player's lineup at their previous match is kept here too (for the persistence): the live
pipeline would keep it in the player's record.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from stream.ratings.engine import PlayerUpdate
from stream.ratings.modeconfig import ModeConfig
from stream.ratings.population import (
    EMPTY,
    SETTLED_GAMES,
    Population,
    PopulationStats,
    lineup_evidence,
    lineup_key,
    next_population,
    predictions_evidence,
    size_evidence,
    start,
    update_evidence,
)
from stream.ratings.skill import SkillLike

_SECONDS_PER_DAY = 86_400.0


@dataclass(frozen=True, slots=True)
class Step:
    """The population that came into force at the start of ``window``."""

    window: int
    population: Population


class PopulationLearner:
    """The population of one mode as a history is rated (a mode that does not learn keeps its
    configured values, and the learner does nothing)."""

    def __init__(self, mode: ModeConfig) -> None:
        self.mode = mode
        self.config = mode.population
        self.learns = self.config.learns
        self.current = start(mode)
        # The mode with the current population in force (rebuilt only when it changes).
        self.rules = self.current.rules(mode)
        self.steps: list[Step] = []
        self._window: int | None = None
        self._open = EMPTY
        self._seen = EMPTY
        self._lineups: dict[str, int] = {}
        # The open window's end in epoch seconds: most matches fall before it, and need no
        # window arithmetic.
        self._until = -math.inf
        # The open window's decisiveness evidence from duels, summed in place (a duel is the
        # replay's hot path): prediction_evidence's two sums, folded in when the window closes.
        self._duel_score = 0.0
        self._duel_information = 0.0

    def at(self, at: float) -> Population:
        """The population in force for a match finished at ``at`` (epoch seconds)."""
        if at < self._until or not self.learns:
            return self.current
        window = self.config.window_of(at)
        if self._window is None:
            self._window = window
        elif window > self._window:
            self._close()
            self._window = window
        self._until = (window + 1) * self.config.window_days * _SECONDS_PER_DAY
        return self.current

    def _close(self) -> None:
        stats = self._open + PopulationStats(
            decisiveness_score=self._duel_score, decisiveness_information=self._duel_information
        )
        self._duel_score = self._duel_information = 0.0
        before = self.current
        seen = self._seen + stats
        self.current, self._open = next_population(self.config, before, stats, seen)
        # Carried evidence is counted in the window that uses it, not twice.
        self._seen = seen if self._open is EMPTY else self._seen + stats.without_prior
        if self.current != before:
            self.rules = self.current.rules(self.mode)
            assert self._window is not None
            self.steps.append(Step(self._window + 1, self.current))

    def observe_duel(
        self,
        population: Population,
        rules: ModeConfig,
        p: float,
        actual: float,
        updates: Mapping[str, PlayerUpdate],
    ) -> None:
        """A 1v1's evidence: the prediction ``p`` (before the decisiveness) of its ``actual``
        result, and its players' ``updates``."""
        if not self.learns:
            return
        # prediction_evidence(p, actual, population.decisiveness), written out.
        if 0.0 < p < 1.0:
            logit = math.log(p / (1.0 - p))
            sharp = 1.0 / (1.0 + math.exp(-population.decisiveness * logit))
            self._duel_score += (actual - sharp) * logit
            self._duel_information += sharp * (1.0 - sharp) * logit * logit
        for update in updates.values():
            if update.state.games <= SETTLED_GAMES:
                self._open = self._newcomers(self._open, population, rules, updates)
                break

    def _newcomers(
        self,
        stats: PopulationStats,
        population: Population,
        rules: ModeConfig,
        updates: Mapping[str, PlayerUpdate],
    ) -> PopulationStats:
        for update in updates.values():
            # Settled players say nothing about the prior: skip them without a call.
            if update.state.games <= SETTLED_GAMES:
                found = update_evidence(rules, population, update)
                if found is not EMPTY:
                    stats = stats + found
        return stats

    def observe(
        self,
        population: Population,
        rules: ModeConfig,
        teams: Sequence[Sequence[str]],
        ranks: Sequence[int],
        skills: Sequence[Sequence[SkillLike]] | None,
        updates: Mapping[str, PlayerUpdate],
    ) -> None:
        """Add a rated match's evidence: its players' ``updates`` (rated with ``rules``, the
        mode with ``population`` in force), and its predictions from the participants'
        ``skills`` as they were played (None: a match with quitters, no prediction)."""
        if not self.learns:
            return
        stats = self._newcomers(self._open, population, rules, updates)
        if skills is not None:
            stats = stats + predictions_evidence(rules, population, skills, ranks)
            if len({len(team) for team in teams}) > 1:
                stats = stats + size_evidence(rules, skills, ranks)
        if len(teams) > 2 or len(teams[0]) > 1 or len(teams[1]) > 1:
            stats = stats + lineup_evidence(teams, self._lineups)
            for team in teams:
                key = lineup_key(team)
                for pid in team:
                    self._lineups[pid] = key
        self._open = stats

    def evidence(self) -> PopulationStats:
        """Everything the learner has been shown (closed windows and the open one)."""
        duels = PopulationStats(
            decisiveness_score=self._duel_score, decisiveness_information=self._duel_information
        )
        return self._seen + self._open + duels
