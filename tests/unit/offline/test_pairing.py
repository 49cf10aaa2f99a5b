"""Pairing two sides' predictions of one history (stream.offline.pairing)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stream.history import HistoryError
from stream.offline.pairing import Side, compare, side_from_file, side_of
from stream.offline.predictions import Prediction
from stream.offline.predictions_file import ReadPrediction
from stream.quality import log_loss

DAY = 86_400.0


def scored_history(n: int) -> list[Prediction]:
    return [
        Prediction(r, (0, 1), (r // 3) * DAY, 0.6, float(r % 2), 5, 1, "m") for r in range(1, n + 1)
    ]


def test_paired_only_where_both_sides_predict() -> None:
    scored = scored_history(9)
    a = Side("a", {p.key: 0.7 for p in scored})
    b = Side("b", {p.key: 0.5 for p in scored[:6]})
    result = compare(scored, a, b)
    assert result.paired.predictions == 6
    assert (result.a_missing, result.b_missing) == (0, 3)
    expected_a = sum(log_loss(0.7, p.actual) for p in scored[:6]) / 6
    assert result.a_log_loss == pytest.approx(expected_a)
    assert result.b_log_loss == pytest.approx(math.log(2))
    # Rows 1-6 fall on days 0, 1 and 2.
    assert result.paired.clusters == 3
    assert result.as_dict()["b"] == {"source": "b", "log_loss": result.b_log_loss, "missing": 3}


def test_sides_that_share_nothing_are_an_error() -> None:
    scored = scored_history(3)
    with pytest.raises(ValueError, match="share no scored prediction"):
        compare(scored, Side("a", {(1, 0, 1): 0.5}), Side("b", {(2, 0, 1): 0.5}))


def test_a_file_whose_results_disagree_with_the_history_names_its_line() -> None:
    scored = scored_history(4)
    read = {p.key: ReadPrediction(0.5, p.actual, p.row + 10) for p in scored}
    read[(3, 0, 1)] = ReadPrediction(0.5, 0.0, 13)  # row 3 ended 1
    with pytest.raises(HistoryError, match=r"peer.jsonl line 13: actual 0 for row 3.*ended 1"):
        side_from_file("peer.jsonl", read, scored)
    read[(3, 0, 1)] = ReadPrediction(0.5, None, 13)  # no result given: nothing to check
    assert side_from_file("peer.jsonl", read, scored).probabilities[(3, 0, 1)] == 0.5


probabilities = st.lists(st.floats(0.01, 0.99), min_size=12, max_size=12)


@given(probabilities, probabilities)
def test_swapping_the_sides_flips_the_difference(pa: list[float], pb: list[float]) -> None:
    scored = scored_history(12)
    a = Side("a", {p.key: x for p, x in zip(scored, pa, strict=True)})
    b = Side("b", {p.key: x for p, x in zip(scored, pb, strict=True)})
    ab, ba = compare(scored, a, b), compare(scored, b, a)
    assert ab.paired.mean == pytest.approx(-ba.paired.mean, abs=1e-12)
    assert ab.paired.standard_error == pytest.approx(ba.paired.standard_error, abs=1e-12)
    assert ab.a_log_loss - ab.b_log_loss == pytest.approx(ab.paired.mean, abs=1e-12)
    assert {ab.paired.verdict, ba.paired.verdict} in ({"no evidence"}, {"better", "worse"})


def test_a_side_compared_with_itself_has_no_evidence() -> None:
    scored = scored_history(30)
    same = side_of("x", scored)
    result = compare(scored, same, same)
    assert result.paired.mean == 0.0
    assert result.paired.verdict == "no evidence"
