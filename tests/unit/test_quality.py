"""The live prediction-quality windows: the figures by hand, their bounds, a calibrated source
converging, the window forgetting, and what a rating-changed event counts as."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream.offline.metrics import PredictionMetrics
from stream.quality import BUCKETS, ModeQuality, PredictionQuality, actual_score, bucket_label

# The offline metrics clip probabilities to [1e-15, 1 - 1e-15]: one observation's log loss is at
# most about 34.5 (1 - (1 - 1e-15) is a little above 1e-15 in floating point).
MAX_LOG_LOSS = max(-math.log(1e-15), -math.log(1.0 - (1.0 - 1e-15)))

probabilities = st.floats(min_value=0.0, max_value=1.0)
scores = st.sampled_from([0.0, 0.5, 1.0])
observations = st.lists(st.tuples(probabilities, scores), min_size=1, max_size=200)


def event(
    mode: object = "ranked-1v1", expected: object = 0.7, outcome: object = "win"
) -> dict[str, object]:
    return {"mode": mode, "expected_score": expected, "outcome": outcome, "player_id": "p"}


def test_figures_by_hand() -> None:
    quality = PredictionQuality()
    quality.observe("m", 0.8, 1.0)
    quality.observe("m", 0.8, 0.0)
    quality.observe("m", 0.25, 0.5)
    (summary,) = quality.summaries().values()
    assert summary.observations == 3
    expected_loss = (
        -math.log(0.8) - math.log(0.2) - (0.5 * math.log(0.25) + 0.5 * math.log(0.75))
    ) / 3
    assert math.isclose(summary.log_loss, expected_loss)
    assert math.isclose(summary.brier, (0.2**2 + 0.8**2 + 0.25**2) / 3)
    by_label = {b.label: b for b in summary.buckets}
    assert by_label["0.8-0.9"].count == 2
    assert math.isclose(by_label["0.8-0.9"].predicted, 0.8)
    assert by_label["0.8-0.9"].observed == 0.5
    assert by_label["0.2-0.3"].count == 1
    assert by_label["0.2-0.3"].observed == 0.5
    assert math.isnan(by_label["0.5-0.6"].predicted)
    # |0.8 - 0.5| for two observations, |0.25 - 0.5| for one
    assert math.isclose(summary.calibration_error, (2 * 0.3 + 0.25) / 3)


def test_bucket_labels_cover_zero_to_one() -> None:
    labels = [bucket_label(i) for i in range(BUCKETS)]
    assert labels[0] == "0.0-0.1"
    assert labels[-1] == "0.9-1.0"
    assert len(set(labels)) == BUCKETS


def test_modes_are_kept_apart() -> None:
    quality = PredictionQuality()
    quality.observe("a", 0.9, 1.0)
    quality.observe("b", 0.9, 0.0)
    summaries = quality.summaries()
    assert summaries["a"].brier < 0.02 < 0.8 < summaries["b"].brier


@pytest.mark.parametrize(
    ("outcome", "score"),
    [("win", 1.0), ("draw", 0.5), ("loss", 0.0), ("abandoned", None), ("timeout", None)],
)
def test_actual_score_of_each_outcome(outcome: str, score: float | None) -> None:
    assert actual_score(outcome) == score


@pytest.mark.parametrize(
    "bad",
    [
        event(outcome="abandoned"),
        event(outcome="timeout"),
        event(outcome="victory"),
        event(outcome=None),
        event(expected=None),
        event(expected="0.7"),
        event(expected=True),
        event(expected=1.5),
        event(expected=-0.1),
        event(expected=math.nan),
        event(mode=7),
        {"outcome": "win", "expected_score": 0.5},
    ],
)
def test_events_without_a_usable_prediction_are_skipped(bad: dict[str, object]) -> None:
    quality = PredictionQuality()
    assert quality.observe_event(bad) is False
    assert quality.summaries() == {}
    assert quality.skipped == 1


def test_event_counts_with_its_outcome() -> None:
    quality = PredictionQuality()
    assert quality.observe_event(event(expected=0.25, outcome="draw"))
    assert quality.observe_event(event(expected=1, outcome="loss"))  # an int is a number too
    summary = quality.summaries()["ranked-1v1"]
    assert summary.observations == 2
    assert math.isclose(summary.brier, (0.25**2 + 1.0) / 2)


def test_modes_beyond_the_limit_are_not_tracked() -> None:
    quality = PredictionQuality(max_modes=2)
    assert quality.observe("a", 0.5, 1.0)
    assert quality.observe("b", 0.5, 1.0)
    assert not quality.observe("c", 0.5, 1.0)
    assert quality.observe("a", 0.5, 0.0)  # known modes go on
    assert set(quality.summaries()) == {"a", "b"}
    assert quality.skipped == 1


def test_window_must_hold_something() -> None:
    with pytest.raises(ValueError, match="window must be at least 1"):
        PredictionQuality(window=0)


@given(observations)
def test_bounds(pairs: list[tuple[float, float]]) -> None:
    quality = PredictionQuality(window=50)
    for p, actual in pairs:
        quality.observe("m", p, actual)
    summary = quality.summaries()["m"]
    assert summary.observations == min(len(pairs), 50)
    assert 0.0 <= summary.brier <= 1.0
    assert 0.0 <= summary.log_loss <= MAX_LOG_LOSS
    assert 0.0 <= summary.calibration_error <= 1.0
    assert sum(b.count for b in summary.buckets) == summary.observations
    for b in summary.buckets:
        if b.count:
            assert 0.0 <= b.observed <= 1.0
            low, high = (float(x) for x in b.label.split("-"))
            assert low <= b.predicted <= high


@given(observations)
def test_agrees_with_the_offline_evaluation(pairs: list[tuple[float, float]]) -> None:
    quality = PredictionQuality(window=len(pairs))
    offline = PredictionMetrics()
    for p, actual in pairs:
        quality.observe("m", p, actual)
        offline.add(p, actual)
    summary = quality.summaries()["m"]
    assert math.isclose(summary.log_loss, offline.log_loss, rel_tol=1e-12)
    assert math.isclose(summary.brier, offline.brier, rel_tol=1e-12, abs_tol=1e-15)
    calibration = [(b.predicted, b.observed, b.count) for b in summary.buckets if b.count]
    for (p, o, n), (p_off, o_off, n_off) in zip(calibration, offline.calibration(), strict=True):
        assert n == n_off
        assert math.isclose(p, p_off) and math.isclose(o, o_off)


@given(old=observations, recent=observations)
def test_window_forgets_what_slid_out(
    old: list[tuple[float, float]], recent: list[tuple[float, float]]
) -> None:
    window = len(recent)
    quality = PredictionQuality(window=window)
    fresh = PredictionQuality(window=window)
    for p, actual in old:
        quality.observe("m", p, actual)
    for p, actual in recent:
        quality.observe("m", p, actual)
        fresh.observe("m", p, actual)
    assert_same(quality.summaries()["m"], fresh.summaries()["m"])


def assert_same(got: ModeQuality, expected: ModeQuality) -> None:
    """Equal counts, and figures equal up to the rounding of running sums (an empty bucket's
    NaN mean equals NaN)."""
    assert got.observations == expected.observations
    for a, b in [
        (got.log_loss, expected.log_loss),
        (got.brier, expected.brier),
        (got.calibration_error, expected.calibration_error),
        *((x.predicted, y.predicted) for x, y in zip(got.buckets, expected.buckets, strict=True)),
        *((x.observed, y.observed) for x, y in zip(got.buckets, expected.buckets, strict=True)),
    ]:
        assert math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9) or (math.isnan(a) and math.isnan(b))
    assert [x.count for x in got.buckets] == [y.count for y in expected.buckets]


@settings(deadline=None)
@given(st.lists(st.tuples(probabilities, scores), min_size=1, max_size=3000), st.integers(1, 40))
def test_running_sums_stay_exact_over_many_evictions(
    pairs: list[tuple[float, float]], window: int
) -> None:
    # Every observation added and, once out of the window, subtracted again: the sums must not
    # drift from the window's own figures however many have passed through.
    quality = PredictionQuality(window=window)
    for p, actual in pairs:
        quality.observe("m", p, actual)
    fresh = PredictionQuality(window=window)
    for p, actual in pairs[-window:]:
        fresh.observe("m", p, actual)
    assert_same(quality.summaries()["m"], fresh.summaries()["m"])


def observe_calibrated(
    quality: PredictionQuality, rng: random.Random, n: int, *, coin_flip: bool = False
) -> None:
    """``n`` uniform predictions whose outcomes are drawn with the predicted probability (or,
    with ``coin_flip``, with 0.5 whatever was predicted)."""
    for _ in range(n):
        p = rng.random()
        quality.observe("m", p, 1.0 if rng.random() < (0.5 if coin_flip else p) else 0.0)


def calibrated(window: int, seed: int) -> tuple[PredictionQuality, random.Random]:
    """A quality window of ``window`` observations, filled with calibrated ones drawn from
    ``seed``; and the generator, to draw more."""
    rng = random.Random(seed)
    quality = PredictionQuality(window=window)
    observe_calibrated(quality, rng, window)
    return quality, rng


SEEDS = st.integers(0, 2**32 - 1)


@settings(max_examples=20, deadline=None)
@given(seed=SEEDS)
def test_a_calibrated_source_converges(seed: int) -> None:
    # Outcomes drawn with exactly the predicted probability: every bucket's observed rate
    # approaches its mean prediction, the calibration error goes to 0 (about 0.008 expected
    # at 20,000 observations: 10 buckets of ~2,000, each off by ~0.01 by chance), and the Brier
    # score to E[p(1 - p)] = 1/6 for uniform p.
    summary = calibrated(20_000, seed)[0].summaries()["m"]
    assert summary.calibration_error < 0.03
    assert abs(summary.brier - 1 / 6) < 0.01
    for b in summary.buckets:
        assert abs(b.predicted - b.observed) < 0.06, b


@settings(max_examples=20, deadline=None)
@given(seed=SEEDS)
def test_an_overconfident_source_shows(seed: int) -> None:
    # The drift the windows exist for: predictions as before, but the game turned into a coin
    # flip (a patch that made it random, a matchmaker pairing at random).
    quality, rng = calibrated(5_000, seed)
    before = quality.summaries()["m"]
    observe_calibrated(quality, rng, 5_000, coin_flip=True)
    drifted = quality.summaries()["m"]
    assert drifted.calibration_error > before.calibration_error + 0.15
    assert drifted.log_loss > before.log_loss + 0.1


def test_a_buckets_mean_prediction_stays_in_its_range_despite_rounding() -> None:
    # Found by hypothesis: three predictions of 0.7 summed to a mean of 0.6999999999999998.
    quality = PredictionQuality(window=50)
    for _ in range(3):
        quality.observe("m", 0.7, 0.0)
    (bucket,) = [b for b in quality.summaries()["m"].buckets if b.count]
    assert bucket.label == "0.7-0.8"
    assert 0.7 <= bucket.predicted <= 0.8
