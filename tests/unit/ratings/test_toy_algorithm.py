"""A new rating algorithm is one module and one registry line (docs/architecture.md, "What a
change touches"): a toy algorithm defined here only, registered under a name, is configured
from a modes file, rates a history in replay, and has its seeds and an operator's adjustment
held to its limits, with nothing else of the project told about it."""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import ClassVar

import pytest

from stream.config.modes import parse_modes
from stream.corrections.ledger import adjusted
from stream.corrections.records import Adjust, Audit
from stream.history import HistoryMatch, SeedRating
from stream.offline.replayer import Replayer
from stream.offline.seeding import out_of_bounds
from stream.ratings import algorithm
from stream.ratings.ranges import Limits, Range, check_ranges
from stream.ratings.skill import Rated, Result, Skill, SkillLike


@dataclass(frozen=True, slots=True)
class ToyConfig:
    """Each result moves the rating by ``step`` times (score - 1/2): a win is +step/2."""

    name: ClassVar[str] = "toy"
    step: float = 20.0
    RANGES: ClassVar[dict[str, Range]] = {"step": Range(0.0, 100.0, "a toy's step", low_open=True)}

    def __post_init__(self) -> None:
        check_ranges(self, self.RANGES)

    def initial(self) -> Skill:
        return Skill(1000.0, 0.0, None)

    def decay(self, skill: SkillLike, elapsed_seconds: float) -> SkillLike:
        return skill

    def rate(self, skill: SkillLike, results: Sequence[Result]) -> SkillLike:
        change = sum(self.step * (r.score - 0.5) for r in results)
        return Skill(self.limits.rating_held(skill.rating + change), 0.0, None)

    def update_terms(self, skill: SkillLike, result: Result) -> tuple[float, float]:
        return 0.5, 1.0 / self.logistic_scale

    def expected_score(self, a: Rated, b: Rated) -> float:
        return 1.0 / (1.0 + math.exp((b.rating - a.rating) / self.logistic_scale))

    @property
    def decay_step_seconds(self) -> float:
        return math.inf

    @property
    def logistic_scale(self) -> float:
        return 100.0

    @property
    def rating_bounds(self) -> tuple[float, float]:
        return (0.0, 2000.0)

    @property
    def limits(self) -> Limits:
        return Limits(rating=(0.0, 2000.0))


@pytest.fixture
def registered(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # The one registry line a real algorithm adds to stream/ratings/algorithm.py.
    monkeypatch.setitem(algorithm.ALGORITHMS, "toy", ToyConfig)
    yield


def duel(row: int, winner: str, loser: str) -> HistoryMatch:
    teams = ((winner,), (loser,))
    return HistoryMatch(
        row, f"m{row}", "toy-1v1", 1_780_000_000.0 + row, teams, (0, 1), None, frozenset()
    )


def test_a_toy_algorithm_rates_from_a_modes_file(registered: None) -> None:
    modes = parse_modes(
        {"modes": {"toy-1v1": {"algorithm": "toy", "toy": {"step": 30.0}}}}, "toy.toml"
    )
    configured: object = modes.get("toy-1v1").algorithm  # the union lists the built-in four
    assert configured == ToyConfig(step=30.0)
    replayer = Replayer(modes)
    for row, (winner, loser) in enumerate([("a", "b"), ("a", "c"), ("b", "c")], 1):
        replayer.apply(duel(row, winner, loser))
    ratings = {r.player_id: r.state.rating for r in replayer.ratings()}
    assert ratings == {"a": 1030.0, "b": 1000.0, "c": 970.0}


def test_a_toy_algorithm_is_refused_a_parameter_out_of_its_range(registered: None) -> None:
    with pytest.raises(ValueError, match="step"):
        parse_modes({"modes": {"toy-1v1": {"algorithm": "toy", "toy": {"step": 500.0}}}})


def test_seeds_and_adjustments_are_held_to_the_toy_limits(registered: None) -> None:
    mode = parse_modes({"modes": {"toy-1v1": {"algorithm": "toy"}}}).get("toy-1v1")
    seed = SeedRating(2, "a", "toy-1v1", 2500.0, None, None)
    assert out_of_bounds(mode, seed) == "rating 2500 is outside mode 'toy-1v1''s bounds, 0 to 2000"
    replayer = Replayer(parse_modes({"modes": {"toy-1v1": {"algorithm": "toy"}}}))
    _, before, after = replayer.adjust(
        "a", "toy-1v1", lambda config, state: adjusted(config, state, _shift(-5000.0))
    )
    assert (before.rating, after.rating) == (1000.0, 0.0)


def _shift(points: float) -> Adjust:
    return Adjust(Audit("adj-1", "ops", 0.0, "test"), "toy-1v1", "a", points, True, 0.0)
