"""The offline side of a learned population: one :class:`PopulationLearner` per mode.

Replay, evaluate and tune rate a history in order; the learner gives each match the population
in force for the window of its start (:mod:`stream.ratings.population.chain`: the evidence of
the windows up to two before it) and adds the match's evidence, in integers
(:mod:`stream.ratings.population.evidence`), to its window. When a match of window ``w``
arrives, every window up to ``w - 2`` is folded: in a history in play order no match of those
windows can come any more. A match whose window is already folded (a history not in time order)
adds its evidence to the first window not folded. Each player's line-up at their previous team
match is kept here too (for the persistence), as the live pipeline keeps it in the player's
record.

The live match partitions compute the same parts with the same functions and fold the same
sums (stream/pipeline/learnedpopulation.py), so a worker and replay rate with the same populations.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Mapping, Sequence

from stream.ratings.engine import PlayerUpdate
from stream.ratings.modeconfig import ModeConfig
from stream.ratings.parties import Parties
from stream.ratings.parttime import Shares
from stream.ratings.population import Population, PopulationStats, lineup_key, start
from stream.ratings.population.chain import LAG, Chain, Step
from stream.ratings.population.evidence import (
    FIELDS,
    NONE,
    Evidence,
    add_match_evidence,
    is_team_match,
)
from stream.ratings.skill import PlayerState

__all__ = ["PopulationLearner", "Step", "window_start"]


def window_start(started_at: float | None, at: float) -> float:
    """The time a match's window is taken from: its start, or its result's time when the
    history does not give the start (as the live pipeline dates a finish without a start)."""
    return at if started_at is None else started_at


class PopulationLearner:
    """The population of one mode as a history is rated (a mode that does not learn keeps its
    configured values, and the learner does nothing)."""

    def __init__(self, mode: ModeConfig) -> None:
        self.mode = mode
        self.config = mode.population
        self.learns = self.config.learns
        self.chain = Chain.of(mode)
        self.current = start(mode)
        # The mode with the current population in force (rebuilt only when it changes).
        self.rules = self.current.rules(mode)
        # Evidence per window not folded yet, as Evidence.encode's integers (added in
        # place: replay's hot path).
        self._open: dict[int, list[int]] = {}
        self._lineups: dict[str, int] = {}
        # The window the last match fell in, and its end in epoch seconds: most matches fall
        # in the same window as the one before, and need no window arithmetic.
        self._window = 0
        self._until = -math.inf
        self._from = math.inf
        # The earliest and the latest window of the mode's matches (None: no match yet).
        self.first_window: int | None = None
        self.last_window: int | None = None

    @property
    def steps(self) -> list[Step]:
        """Each window from which a new population came into force."""
        return self.chain.steps

    def at(self, when: float) -> Population:
        """The population in force for a match whose window starts from ``when`` (epoch
        seconds: :func:`window_start`); folds the windows that no later match can add to."""
        if not self.learns:
            return self.current
        if self._from <= when < self._until:
            return self.current
        window = self.config.window_of(when)
        if self.first_window is None or window < self.first_window:
            self.first_window = window
        if self.last_window is None or window > self.last_window:
            self.last_window = window
        self._window = window
        self._from, self._until = (
            self.config.boundary(window),
            self.config.boundary(window + 1),
        )
        ready = sorted(k for k in self._open if k <= window - LAG)
        for k in ready:
            self.chain.fold(self.config, k, Evidence(tuple(self._open.pop(k))))
        found = self.chain.at(window)
        if found != self.current:
            self.current = found
            self.rules = found.rules(self.mode)
        return found

    def open_sums(self) -> list[int]:
        """The open window's sums that the current match adds to (a window already folded,
        in a history not in time order: the first one not folded), as integers added in place
        (stream.ratings.population.evidence: :meth:`observe`, and replay's duels by
        ``add_rated_duel``)."""
        window = self._window
        folded = self.chain.folded
        if folded is not None and window <= folded:
            window = folded + 1
        found = self._open.get(window)
        if found is None:
            found = self._open[window] = [0] * FIELDS
        return found

    def observe(
        self,
        population: Population,
        rules: ModeConfig,
        teams: Sequence[Sequence[str]],
        ranks: Sequence[int],
        at: float,
        states: Mapping[str, PlayerState],
        updates: Mapping[str, PlayerUpdate],
        *,
        as_played: bool,
        rated_here: bool = False,
        held: Collection[str] = (),
        played: Shares | None = None,
        parties: Parties | None = None,
    ) -> None:
        """Add a rated match's evidence (:func:`stream.ratings.population.evidence.match_evidence`:
        its players' ``updates``, rated with ``rules``, the mode with ``population`` in force,
        from ``states``; its predictions when rated ``as_played``; ``rated_here``: the updates
        are rate_match's from ``states``, whose duel skills the prediction reuses) and note the
        rated players' line-ups, but for the ``held`` (refunded: their record stays as it was);
        ``played``: each participant's share of the match (part-time play); ``parties``: its
        parties (stream.ratings.parties)."""
        if not self.learns:
            return
        lineups = self._lineups
        add_match_evidence(
            self.open_sums(),
            rules,
            population,
            teams,
            ranks,
            at,
            states,
            updates,
            lineups,
            as_played=as_played,
            rated_here=rated_here,
            played=played,
            parties=parties,
        )
        if is_team_match(teams):
            for team in teams:
                key = lineup_key(team)
                for pid in team:
                    if pid in updates and pid not in held:
                        lineups[pid] = key

    def evidence(self) -> PopulationStats:
        """Everything the learner has been shown (folded windows and open ones)."""
        total = NONE
        for found in self._open.values():
            total = total + Evidence(tuple(found))
        return self.chain.seen + self.chain.carried + total.stats()
