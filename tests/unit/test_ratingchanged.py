"""stream/ratingchanged.py: the population a learning mode's rating change carries, per
algorithm, each configuration with its own values (the check of what an algorithm has is made
once per type)."""

from __future__ import annotations

import pytest

from stream.ratingchanged import population_of
from stream.ratings.elo import EloConfig
from stream.ratings.glicko1 import Glicko1Config
from stream.ratings.glicko2 import Glicko2Config
from stream.ratings.modeconfig import ModeConfig
from stream.ratings.zonestats import ZoneStatsConfig


@pytest.mark.parametrize(
    ("algorithm", "deviation", "period"),
    [
        (Glicko2Config(), Glicko2Config().prior_deviation, Glicko2Config().drift_period),
        (Glicko1Config(), Glicko1Config().prior_deviation, None),
        (EloConfig(), None, None),
        (ZoneStatsConfig(), None, None),
    ],
)
def test_the_population_names_what_the_algorithm_has(
    algorithm: object, deviation: float | None, period: float | None
) -> None:
    carried = population_of(ModeConfig("m", algorithm=algorithm))  # type: ignore[arg-type]
    assert carried["deviation"] == deviation
    assert carried["drift_period"] == period


def test_each_configuration_of_a_type_carries_its_own_values() -> None:
    first = Glicko2Config()
    other = first.with_prior_deviation(200.0).with_drift_period(first.drift_period * 2)
    assert population_of(ModeConfig("m", algorithm=first))["deviation"] == first.prior_deviation
    carried = population_of(ModeConfig("m", algorithm=other))
    assert carried["deviation"] == pytest.approx(200.0)
    assert carried["drift_period"] == first.drift_period * 2
