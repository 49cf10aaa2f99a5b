"""Calibration broken down by experience, team size and mode (stream.offline.evaluation)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stream.offline.evaluation import DIMENSIONS, Evaluation, evaluate_in_detail
from stream.offline.predictions import Prediction


def prediction(
    row: int, p: float, actual: float, games: int, size: int = 1, mode: str = "m"
) -> Prediction:
    return Prediction(row, (0, 1), 0.0, p, actual, games, size, mode)


def test_buckets_hold_their_own_predictions_in_a_fixed_order() -> None:
    evaluation = evaluate_in_detail(
        [
            prediction(1, 0.9, 1.0, 25),
            prediction(2, 0.2, 1.0, 0, size=2, mode="duo"),
            prediction(3, 0.6, 0.0, 7, size=10),
            prediction(4, 0.7, 1.0, 3),
            prediction(5, 0.3, 0.0, 20),
        ]
    )
    assert [name for name, _ in evaluation.breakdown("experience")] == ["0", "1-4", "5-19", "20+"]
    assert [name for name, _ in evaluation.breakdown("team_size")] == ["1", "2", "10"]
    assert [name for name, _ in evaluation.breakdown("mode")] == ["duo", "m"]
    veterans = evaluation.by["experience"]["20+"]
    assert veterans.matches == 2
    # Favourites: 0.9 (won) and 0.7 for the other side of 0.3 (which lost: the favourite won).
    assert veterans.favourite_predicted == pytest.approx(0.8)
    assert veterans.favourite_observed == 1.0
    newcomer = evaluation.by["experience"]["0"]
    assert newcomer.favourite_predicted == pytest.approx(0.8)
    assert newcomer.favourite_observed == 0.0


def test_a_free_for_all_match_counts_once_per_bucket() -> None:
    rows = [
        Prediction(1, (0, 1), 0.0, 0.5, 1.0, 0, 1, "ffa"),
        Prediction(1, (0, 2), 0.0, 0.5, 1.0, 9, 1, "ffa"),
        Prediction(1, (1, 2), 0.0, 0.5, 0.5, 9, 1, "ffa"),
    ]
    evaluation = evaluate_in_detail(rows)
    assert evaluation.overall.matches == 1
    assert evaluation.overall.predictions == 3
    assert evaluation.by["experience"]["0"].matches == 1
    assert evaluation.by["experience"]["5-19"].matches == 1
    assert evaluation.by["experience"]["5-19"].predictions == 2


def test_the_summary_is_json_ready_with_calibration_per_bucket() -> None:
    summary = evaluate_in_detail(
        [prediction(1, 0.8, 1.0, 0), prediction(2, 0.15, 0.0, 5)]
    ).summary()
    assert summary["matches"] == 2
    assert summary["calibration"] == [
        {"predicted": 0.15, "observed": 0.0, "predictions": 1},
        {"predicted": 0.8, "observed": 1.0, "predictions": 1},
    ]
    assert set(summary["breakdown"]) == set(DIMENSIONS)
    newcomers = summary["breakdown"]["experience"]["0"]
    assert newcomers["predictions"] == 1
    assert newcomers["favourite_predicted"] == 0.8
    assert newcomers["calibration"] == [{"predicted": 0.8, "observed": 1.0, "predictions": 1}]


# Probabilities within 1e-9 of 0 or 1 are left out: there 1 - (1 - p) is not p in floating
# point, and the log loss is clipped at 1e-15, so turning a match round moves its loss by more
# than rounding (found by hypothesis with p = 3e-15).
predictions_strategy = st.lists(
    st.builds(
        prediction,
        st.integers(1, 40),
        st.sampled_from([0.0, 1.0]) | st.floats(1e-9, 1.0 - 1e-9),
        st.sampled_from([0.0, 0.5, 1.0]),
        st.integers(0, 50),
        st.integers(1, 4),
        st.sampled_from(["a", "b", "c"]),
    ),
    min_size=1,
    max_size=80,
).map(lambda rows: sorted(rows, key=lambda p: p.row))


@given(predictions_strategy)
def test_each_breakdown_partitions_the_predictions(rows: list[Prediction]) -> None:
    evaluation = Evaluation()
    for row in rows:
        evaluation.add(row)
    overall = evaluation.overall
    for dimension in DIMENSIONS:
        parts = [m for _, m in evaluation.breakdown(dimension)]
        assert sum(m.predictions for m in parts) == overall.predictions == len(rows)
        weighted = math.fsum(m.log_loss * m.predictions for m in parts)
        assert weighted == pytest.approx(overall.log_loss * overall.predictions, rel=1e-9, abs=1e-9)
        # A match falls in at least one bucket and at most one per prediction.
        assert overall.matches <= sum(m.matches for m in parts) <= overall.predictions


@given(predictions_strategy)
def test_the_favourite_is_predicted_at_least_even(rows: list[Prediction]) -> None:
    m = evaluate_in_detail(rows).overall
    assert 0.5 <= m.favourite_predicted <= 1.0
    assert 0.0 <= m.favourite_observed <= 1.0


@given(predictions_strategy)
def test_listing_the_teams_the_other_way_round_changes_no_favourite_figure(
    rows: list[Prediction],
) -> None:
    flipped = [
        Prediction(p.row, p.teams, p.at, 1.0 - p.p, 1.0 - p.actual, p.games, p.team_size, p.mode)
        for p in rows
        if p.p != 0.5  # an even prediction has no favourite to keep
    ]
    kept = [p for p in rows if p.p != 0.5]
    if not kept:
        return
    a, b = evaluate_in_detail(kept).overall, evaluate_in_detail(flipped).overall
    assert a.favourite_predicted == pytest.approx(b.favourite_predicted, abs=1e-12)
    assert a.favourite_observed == pytest.approx(b.favourite_observed, abs=1e-12)
    # Only the clamp of certain predictions (1e-15 from 0 and 1) is not exactly symmetric.
    assert a.log_loss == pytest.approx(b.log_loss, rel=1e-4)


def test_uneven_sides_are_a_bucket_and_are_seen_from_the_bigger_side() -> None:
    rows = [
        Prediction(1, (0, 1), 0.0, 0.5, 1.0, 9, 2, "m", (2, 2)),
        # teams[0] is the smaller side: 0.3 for it is 0.7 for the bigger, which won.
        Prediction(2, (0, 1), 0.0, 0.3, 0.0, 9, 3, "m", (2, 3)),
        # teams[0] is the bigger side, given 0.6; it lost.
        Prediction(3, (0, 1), 0.0, 0.6, 0.0, 9, 4, "m", (4, 3)),
    ]
    evaluation = evaluate_in_detail(rows)
    assert [name for name, _ in evaluation.breakdown("sides")] == ["even", "uneven"]
    assert evaluation.by["sides"]["uneven"].matches == 2
    bigger = evaluation.bigger
    assert bigger.matches == 2
    assert bigger.mean_predicted == pytest.approx(0.65)
    assert bigger.mean_observed == pytest.approx(0.5)
    summary = evaluation.summary()
    assert summary["bigger_side"]["won"] == pytest.approx(0.5)
    assert set(summary["breakdown"]["sides"]) == {"even", "uneven"}


def test_without_uneven_sides_there_is_no_bigger_side() -> None:
    summary = evaluate_in_detail([prediction(1, 0.8, 1.0, 0, size=2)]).summary()
    assert "bigger_side" not in summary
    assert list(summary["breakdown"]["sides"]) == ["even"]
