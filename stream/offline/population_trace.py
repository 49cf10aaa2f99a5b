"""What a replay learned about each mode's population, as records a person or a plot can read.

``replay --populations`` and ``evaluate --populations`` write them: for each learning mode its
start, then every step (the window from which a new population was in force, and its values),
then the evidence of the whole history (the sums every step was taken from). With a value held
(``[population] hold``) the evidence still sums what the matches said about it, so a held
value's score over its information (a Newton step on all of it) says which way learning would
have moved it from there, and roughly how far (learning's own steps add a prior's information
and are capped per window).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Iterator, Mapping
from typing import Any

from stream.offline.learning import PopulationLearner
from stream.ratings.population import LEARNED_VALUES, Population, PopulationStats


def population_values(population: Population) -> dict[str, float | None]:
    """The seven values by the names of rating-changed's population (public units; a Population's
    fields have those names)."""
    return {name: getattr(population, name) for name in LEARNED_VALUES}


def evidence_values(stats: PopulationStats) -> dict[str, float | int]:
    """The evidence sums by their PopulationStats names (a value's step is its score over its
    information; the prior deviation's and the drift's are in their logs)."""
    return {f.name: getattr(stats, f.name) for f in dataclasses.fields(stats)}


def trace_records(learners: Mapping[str, PopulationLearner]) -> Iterator[dict[str, Any]]:
    """Per learning mode (in name order): its start (``from``: the earliest match's window), each
    step (``from``: the window it is in force from), both as ISO 8601 UTC; then one record with
    ``until`` (the end of the latest match's window), ``hold`` and ``evidence``. A mode that does
    not learn has none; a mode without a match has null times."""
    for name in sorted(learners):
        learner = learners[name]
        if not learner.learns:
            continue
        config = learner.config
        first = learner.first_window
        yield {
            "mode": name,
            "from": None if first is None else _iso(config.boundary(first)),
            "population": population_values(learner.chain.initial),
        }
        for step in learner.steps:
            yield {
                "mode": name,
                "from": _iso(config.boundary(step.window)),
                "population": population_values(step.population),
            }
        last = learner.last_window
        yield {
            "mode": name,
            "until": None if last is None else _iso(config.boundary(last + 1)),
            "hold": list(learner.config.hold),
            "evidence": evidence_values(learner.evidence()),
        }


def _iso(at: float) -> str:
    return dt.datetime.fromtimestamp(at, dt.UTC).isoformat().replace("+00:00", "Z")
