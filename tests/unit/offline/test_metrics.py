"""Prediction metrics (stream.offline.metrics) on hand-computed cases."""

from __future__ import annotations

import math
from collections.abc import Iterable

import pytest

from stream.offline.metrics import PredictionMetrics


def metrics_of(pairs: Iterable[tuple[float, float]]) -> PredictionMetrics:
    m = PredictionMetrics()
    for p, actual in pairs:
        m.add(p, actual)
    return m


def test_two_confident_correct_predictions() -> None:
    m = metrics_of([(0.8, 1.0), (0.3, 0.0)])
    assert m.predictions == 2
    assert m.log_loss == pytest.approx(-(math.log(0.8) + math.log(0.7)) / 2, rel=1e-12)
    assert m.brier == pytest.approx((0.2**2 + 0.3**2) / 2, rel=1e-12)
    assert m.brier == pytest.approx(0.065, rel=1e-12)
    assert m.accuracy == 1.0


def test_wrong_predictions() -> None:
    m = metrics_of([(0.9, 0.0), (0.6, 1.0)])
    assert m.log_loss == pytest.approx(-(math.log(0.1) + math.log(0.6)) / 2, rel=1e-12)
    assert m.brier == pytest.approx((0.81 + 0.16) / 2, rel=1e-12)
    assert m.accuracy == 0.5


def test_a_coin_flip_prediction_counts_half() -> None:
    m = metrics_of([(0.5, 1.0), (0.5, 0.0), (0.7, 1.0)])
    assert m.accuracy == pytest.approx((0.5 + 0.5 + 1.0) / 3)
    assert m.log_loss == pytest.approx(-(2 * math.log(0.5) + math.log(0.7)) / 3, rel=1e-12)


def test_a_draw_counts_half() -> None:
    m = metrics_of([(0.9, 0.5), (0.2, 0.5)])
    assert m.accuracy == 0.5
    # Cross-entropy with a half target: -(0.5 ln p + 0.5 ln(1 - p)).
    expected = -(
        0.5 * math.log(0.9) + 0.5 * math.log(0.1) + 0.5 * math.log(0.2) + 0.5 * math.log(0.8)
    )
    assert m.log_loss == pytest.approx(expected / 2, rel=1e-12)
    assert m.brier == pytest.approx((0.4**2 + 0.3**2) / 2, rel=1e-12)


def test_certain_and_wrong_stays_finite() -> None:
    m = metrics_of([(0.0, 1.0)])
    assert math.isfinite(m.log_loss)
    assert m.log_loss == pytest.approx(-math.log(1e-15), rel=1e-9)  # about 34.54
    assert m.brier == 1.0
    assert m.accuracy == 0.0
    m.add(1.0, 0.0)
    assert math.isfinite(m.log_loss)
    assert m.log_loss > 30.0


def test_certain_and_right_costs_almost_nothing() -> None:
    m = metrics_of([(1.0, 1.0), (0.0, 0.0)])
    assert 0.0 <= m.log_loss < 1e-12
    assert m.brier == 0.0
    assert m.accuracy == 1.0


def test_calibration_bins() -> None:
    m = metrics_of([(0.05, 0.0), (0.15, 0.0), (0.12, 1.0), (0.95, 1.0), (1.0, 1.0), (0.55, 0.5)])
    table = m.calibration()
    assert len(table) == 4
    expected = [(0.05, 0.0, 1), (0.135, 0.5, 2), (0.55, 0.5, 1), (0.975, 1.0, 2)]
    for (pred, obs, n), (pred_e, obs_e, n_e) in zip(table, expected, strict=True):
        assert pred == pytest.approx(pred_e, rel=1e-12)
        assert obs == pytest.approx(obs_e, rel=1e-12)
        assert n == n_e


def test_calibration_bin_edges() -> None:
    # Bins are [0, 0.1), [0.1, 0.2), ... and 1.0 joins the last one.
    m = metrics_of([(0.1, 1.0), (0.2, 0.0), (0.9, 1.0), (0.0999, 0.0)])
    assert m.bin_count == [1, 1, 1, 0, 0, 0, 0, 0, 0, 1]
    assert [n for _, _, n in m.calibration()] == [1, 1, 1, 1]


def test_empty_metrics_are_nan() -> None:
    m = PredictionMetrics()
    assert math.isnan(m.log_loss)
    assert math.isnan(m.brier)
    assert math.isnan(m.accuracy)
    assert m.calibration() == []
    summary = m.summary()
    assert summary["matches"] == 0
    assert all(math.isnan(summary[k]) for k in ("log_loss", "brier", "accuracy"))


def test_summary_reports_matches_separately_from_predictions() -> None:
    m = metrics_of([(0.8, 1.0), (0.3, 0.0), (0.6, 1.0)])
    m.matches = 2  # the caller (evaluate) counts matches; a match can hold several pairs
    summary = m.summary()
    assert summary["matches"] == 2
    assert summary["log_loss"] == m.log_loss
    assert summary["accuracy"] == 1.0
