"""The paired comparison: its arithmetic by hand, and its properties."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from stream.offline.comparison import (
    Z_EVIDENCE,
    PairedDifference,
    critical_value,
    day_of,
    paired_difference,
)
from stream.quality import log_loss


def test_log_loss_of_known_values() -> None:
    assert log_loss(0.5, 1.0) == math.log(2)
    assert math.isclose(log_loss(0.8, 0.0), -math.log(0.2))
    assert math.isclose(log_loss(0.8, 0.5), -(0.5 * math.log(0.8) + 0.5 * math.log(0.2)))
    assert math.isfinite(log_loss(0.0, 1.0))


def test_day_of_splits_at_utc_midnight() -> None:
    assert day_of(86_399.9) == 0
    assert day_of(86_400.0) == 1
    assert day_of(-1.0) == -1


def test_standard_error_by_hand_with_independent_clusters() -> None:
    # Differences 1, 2, 3, 6 (mean 3), each its own cluster: deviations -2, -1, 0, 3.
    result = paired_difference([1, 2, 3, 6], [0, 0, 0, 0], ["a", "b", "c", "d"])
    assert result.mean == 3.0
    expected = math.sqrt((4 + 1 + 0 + 9) * 4 / 3 / 16)
    assert math.isclose(result.standard_error, expected)
    assert result.clusters == 4


def test_clustering_widens_the_error_for_correlated_days() -> None:
    diffs = [1.0, 1.0, -1.0, -1.0, 1.0, 1.0, -1.0, -1.0]
    zeros = [0.0] * len(diffs)
    alone = paired_difference(diffs, zeros, list(range(8)))
    by_day = paired_difference(diffs, zeros, [0, 0, 1, 1, 2, 2, 3, 3])
    assert by_day.standard_error > alone.standard_error


def test_verdicts() -> None:
    better = paired_difference([0.1] * 50 + [0.2] * 50, [0.5] * 100, list(range(100)))
    assert better.verdict == "better"
    worse = paired_difference([0.5] * 100, [0.1] * 50 + [0.2] * 50, list(range(100)))
    assert worse.verdict == "worse"
    noise = paired_difference([0.1, 0.9, 0.2, 0.8], [0.5] * 4, [0, 1, 2, 3])
    assert noise.verdict == "no evidence"
    one_day = paired_difference([0.1, 0.1], [0.9, 0.9], [7, 7])
    assert one_day.verdict == "no evidence"


def test_empty_input_has_no_verdict() -> None:
    result = paired_difference([], [], [])
    assert result.predictions == 0
    assert result.verdict == "no evidence"


losses = st.lists(
    st.tuples(st.floats(0, 5), st.floats(0, 5), st.integers(0, 6)),
    min_size=2,
    max_size=60,
)


@given(losses)
def test_swapping_sides_flips_the_sign_and_keeps_the_error(
    rows: list[tuple[float, float, int]],
) -> None:
    a, b, c = (list(x) for x in zip(*rows, strict=True))
    ab = paired_difference(a, b, c)
    ba = paired_difference(b, a, c)
    assert math.isclose(ab.mean, -ba.mean, abs_tol=1e-12)
    if not math.isnan(ab.standard_error):
        assert math.isclose(ab.standard_error, ba.standard_error, rel_tol=1e-9, abs_tol=1e-12)
        assert ab.standard_error >= 0


@given(losses)
def test_identical_predictions_differ_by_nothing(rows: list[tuple[float, float, int]]) -> None:
    a = [r[0] for r in rows]
    result = paired_difference(a, a, [r[2] for r in rows])
    assert result.mean == 0.0
    assert result.verdict == "no evidence"


def test_few_days_need_more_standard_errors() -> None:
    # z = 5 is evidence over three days but not over two (Student's t with 2 degrees: 4.3).
    assert critical_value(1) == math.inf
    assert critical_value(3) == 4.303
    assert 2.0 < critical_value(40) < 2.03
    assert critical_value(200) == 2.0
    assert 2.0 <= critical_value(31) < critical_value(30) <= 2.05
    three_days = PairedDifference(90, 3, -0.05, 0.01)
    assert three_days.verdict == "better"
    two_days = PairedDifference(60, 2, -0.05, 0.01)
    assert two_days.verdict == "no evidence"


@given(st.integers(2, 10_000))
def test_the_critical_value_falls_with_more_days_but_not_below_two(clusters: int) -> None:
    assert critical_value(clusters) >= critical_value(clusters + 1) >= Z_EVIDENCE


def test_a_negligible_difference_is_no_evidence_however_small_its_error() -> None:
    # Two systems that differ by a hair on every prediction: the error is tinier still.
    a = [0.5 + 1e-7 * (i % 3) for i in range(400)]
    b = [x + 2e-6 for x in a]
    diff = paired_difference(a, b, [i % 40 for i in range(400)])
    assert abs(diff.z) > 100
    assert diff.verdict == "no evidence"
    assert paired_difference(a, [x + 2e-4 for x in a], [i % 40 for i in range(400)]).verdict == (
        "better"
    )


def test_the_error_is_given_or_its_absence_explained_never_nan() -> None:
    assert PairedDifference(90, 3, -0.0012, 0.0004).error_text() == (
        "-0.00120 +- 0.00040 (standard error clustered by 3 days)"
    )
    one_day = PairedDifference(400, 1, 0.0, math.nan)
    assert one_day.error_text("paired standard error") == (
        "+0.00000 (no paired standard error: the matches span 1 day, and clustering by day needs"
        " two or more)"
    )
    assert "nan" not in one_day.error_text() and one_day.verdict == "no evidence"
