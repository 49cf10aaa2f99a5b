"""What a replay learned about a mode's population, as records (stream.offline.population_trace):
the start, every step and the evidence, the same steps the learner took."""

from __future__ import annotations

import math

from stream.config.modes import Modes
from stream.history import HistoryMatch
from stream.offline.population_trace import trace_records
from stream.offline.replayer import Replayer
from stream.ratings.modeconfig import ModeConfig
from stream.ratings.population import PopulationConfig, next_population
from stream.simulation import SimulationConfig, simulate

DAY = 86_400.0


def replayed(population: PopulationConfig, seed: int = 2) -> Replayer:
    config = SimulationConfig(
        matches=600, players=300, skill_sd=450.0, seed=seed, matches_per_second=600 / (4 * DAY)
    )
    replayer = Replayer(Modes.single(ModeConfig("m", population=population)), "m")
    for n, m in enumerate(simulate(config), 1):
        replayer.apply(
            HistoryMatch(n, m.match_id, m.mode, m.at, m.teams, m.ranks, None, m.quitters, None)
        )
    return replayer


def test_the_records_are_the_start_every_step_and_the_evidence() -> None:
    replayer = replayed(PopulationConfig(window_days=0.25))
    learner = replayer.learners["m"]
    records = list(trace_records(replayer.learners))
    first, *steps, last = records
    assert len(learner.steps) >= 3 and len(steps) == len(learner.steps)
    # The start is in force from the first match's window.
    assert first["from"] is not None and first["population"]["decisiveness"] == 1.0
    for record, step in zip(steps, learner.steps, strict=True):
        assert record["population"]["deviation"] == step.population.deviation
        assert record["population"]["debut_offset"] == step.population.debut_offset
    assert [r["from"] for r in steps] == sorted(r["from"] for r in steps)
    assert last["hold"] == [] and last["evidence"]["newcomer_updates"] > 0.0
    # The last values hold until the end of the last match's window.
    assert first["from"] < steps[0]["from"] and steps[-1]["from"] < last["until"]
    assert {r["mode"] for r in records} == {"m"}


def test_a_held_value_s_evidence_is_summed_and_says_which_way_it_would_move() -> None:
    held = replayed(PopulationConfig(window_days=0.25, hold=("deviation",)))
    records = list(trace_records(held.learners))
    assert {r["population"]["deviation"] for r in records if "population" in r} == {
        held.learners["m"].chain.initial.deviation
    }
    evidence = records[-1]["evidence"]
    assert records[-1]["hold"] == ["deviation"]
    # The summed evidence is what learning would have stepped on: its sign says which way.
    step = evidence["prior_score"] / evidence["prior_information"]
    assert math.isfinite(step) and step != 0.0
    free = held.learners["m"].chain.initial
    moved, _ = next_population(
        PopulationConfig(window_days=0.25),
        free,
        held.learners["m"].evidence(),
        held.learners["m"].evidence(),
    )
    assert (moved.deviation > free.deviation) == (step > 0)  # type: ignore[operator]


def test_a_mode_with_fixed_values_has_no_records() -> None:
    assert list(trace_records(replayed(PopulationConfig()).learners)) == []
