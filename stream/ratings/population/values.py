"""The values in force for a mode's population: its settings (where each value starts, which it
holds, how often it learns) and the :class:`Population` that rates and predicts a window.

What each value means and how it is learned: stream.ratings.population.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

from stream.ratings.algorithm import DriftRate, PriorDeviation
from stream.ratings.ranges import ConfigError, Range, check_ranges

if TYPE_CHECKING:
    from stream.ratings.modeconfig import ModeConfig

_SECONDS_PER_DAY = 86_400.0
# ``auto`` rates a mode's teams as rosters (composite_opponent) from this persistence on.
ROSTER_PERSISTENCE = 0.5
_EDGE_WHY = (
    "rating points a side gains with twice as many players (0: the sides' sizes do not matter);"
    " beyond 1000 one extra player decides every match"
)
_WINDOW_WHY = (
    "days of event time between the boundaries where a learned population is recomputed "
    "(0: the population's values are fixed as configured); at most a year"
)
_DECISIVENESS_WHY = (
    "how decisively a rating gap decides a match against the algorithm's curve: a prediction's"
    " logit times this (above 1: a best-of-five series more than one game); predictions only"
)
# The learned values by their names in a Population (and in rating-changed's population and a
# modes file's ``[population] hold``).
LEARNED_VALUES = (
    "deviation",
    "size_edge",
    "persistence",
    "decisiveness",
    "drift_period",
    "debut_offset",
    "party_edge",
)
_PARTY_WHY = (
    "rating points each member of a party (players who queued together) plays above their"
    " rating (0: parties do not matter); beyond 1000 a party decides every match"
)
_PERSISTENCE_WHY = (
    "the share of teammates who were teammates at the previous match (1: fixed rosters, "
    "0: teams reshuffled every match); where learning starts, or the value kept"
)


@dataclass(frozen=True, slots=True)
class PopulationConfig:
    """A mode's population settings: the starting (or fixed) values and how often to learn.

    The prior deviation starts at the algorithm's own (``glicko2.unrated_deviation``,
    ``glicko1.initial_deviation``); Elo and ZoneStats have none to learn.
    """

    window_days: float = 0.0
    size_edge: float = 0.0
    persistence: float = 1.0
    decisiveness: float = 1.0
    party_edge: float = 0.0
    # Learned values kept at their configured start (names of LEARNED_VALUES; a modes file's
    # list becomes a tuple).
    hold: tuple[str, ...] = ()

    RANGES: ClassVar[Mapping[str, Range]] = {
        "window_days": Range(0.0, 366.0, _WINDOW_WHY),
        "size_edge": Range(-1000.0, 1000.0, _EDGE_WHY),
        "persistence": Range(0.0, 1.0, _PERSISTENCE_WHY),
        "decisiveness": Range(0.2, 5.0, _DECISIVENESS_WHY),
        "party_edge": Range(-1000.0, 1000.0, _PARTY_WHY),
    }

    def __post_init__(self) -> None:
        check_ranges(self, self.RANGES)
        given: object = self.hold
        if not isinstance(given, list | tuple) or not all(
            isinstance(name, str) and name in LEARNED_VALUES for name in given
        ):
            raise ConfigError("hold", f"must list names of {list(LEARNED_VALUES)}, got {given!r}")
        if len(set(given)) != len(given):
            raise ConfigError("hold", f"names a value twice: {list(given)!r}")
        # Sorted: the same values held are the same settings, whichever order a file lists.
        object.__setattr__(self, "hold", tuple(sorted(given)))

    @property
    def learns(self) -> bool:
        return self.window_days > 0.0

    def window_of(self, at: float) -> int:
        """The learning window of event time ``at`` (epoch seconds)."""
        return math.floor(at / (self.window_days * _SECONDS_PER_DAY))

    def boundary(self, window: int) -> float:
        """The boundary (epoch seconds) where learning window ``window`` starts."""
        return window * (self.window_days * _SECONDS_PER_DAY)


@dataclass(frozen=True, slots=True)
class Population:
    """The values in force for a window of a mode: the input that rates and predicts it.

    ``deviation``: a new player's (and the largest) deviation in public points, None for an
    algorithm without one. ``size_edge``: rating points for twice as many players.
    ``persistence``: the share of teammates kept from the previous match. ``decisiveness``:
    what a prediction's logit is multiplied by (predictions only: no rating depends on it).
    ``drift_period``: the days of inactivity that grow a deviation by one rating period's
    volatility (Glicko-2's ``period_days``; shorter: skills drift faster; stream.ratings.drift),
    None for an algorithm whose deviation does not grow with time. ``debut_offset``: the
    experience term's rating points at a player's debut, None where it is not learned (an
    algorithm without a prior deviation, or the term switched off; the cache's population
    carries the offset in force, learned or not, and 0 for a term switched off).
    ``party_edge``: rating points each member of a party plays above their rating
    (stream.ratings.parties).
    """

    deviation: float | None
    size_edge: float
    persistence: float
    decisiveness: float = 1.0
    drift_period: float | None = None
    debut_offset: float | None = None
    party_edge: float = 0.0
    # The mode's rules with these values, built once per mode that asks (by identity: a
    # mode's rules are one object for its whole life).
    _rules: dict[int, tuple[ModeConfig, ModeConfig]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def rules(self, mode: ModeConfig) -> ModeConfig:
        """``mode`` with these values in force (the mode itself when they are its own)."""
        found = self._rules.get(id(mode))
        if found is not None and found[0] is mode:
            return found[1]
        applied = _applied(mode, self)
        self._rules[id(mode)] = (mode, applied)
        return applied


def start(mode: ModeConfig) -> Population:
    """The population a mode starts with: its configured values."""
    algorithm = mode.algorithm
    deviation = algorithm.prior_deviation if isinstance(algorithm, PriorDeviation) else None
    config = mode.population
    period = algorithm.drift_period if isinstance(algorithm, DriftRate) else None
    experience = mode.experience
    offset = experience.debut_offset if deviation is not None and experience.active else None
    return Population(
        deviation,
        config.size_edge,
        config.persistence,
        config.decisiveness,
        period,
        offset,
        config.party_edge,
    )


def _applied(mode: ModeConfig, population: Population) -> ModeConfig:
    algorithm = mode.algorithm
    if (
        population.deviation is not None
        and isinstance(algorithm, PriorDeviation)
        and population.deviation != algorithm.prior_deviation
    ):
        algorithm = algorithm.with_prior_deviation(population.deviation)
    period = population.drift_period
    if period is not None and isinstance(algorithm, DriftRate) and period != algorithm.drift_period:
        algorithm = algorithm.with_drift_period(period)
    config = mode.population
    learned = (
        population.size_edge,
        population.persistence,
        population.decisiveness,
        population.party_edge,
    )
    if learned != (config.size_edge, config.persistence, config.decisiveness, config.party_edge):
        config = dataclasses.replace(
            config,
            size_edge=population.size_edge,
            persistence=population.persistence,
            decisiveness=population.decisiveness,
            party_edge=population.party_edge,
        )
    experience = mode.experience
    offset = population.debut_offset
    # 0 is never learned (it would switch the term off): a population that says 0 carries the
    # offset of a mode whose term was off (the cache's, written before the modes file changed).
    if offset and experience.active and offset != experience.debut_offset:
        experience = dataclasses.replace(experience, debut_offset=offset)
    if algorithm is mode.algorithm and config is mode.population and experience is mode.experience:
        return mode
    return dataclasses.replace(mode, algorithm=algorithm, population=config, experience=experience)
