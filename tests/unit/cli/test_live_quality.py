"""The live view's prediction-quality lines: one per mode, from the same windows the worker
exports."""

from __future__ import annotations

from stream.cli.live import quality_lines
from stream.quality import PredictionQuality


def test_one_line_per_mode_in_name_order() -> None:
    quality = PredictionQuality()
    quality.observe_event({"mode": "z-mode", "expected_score": 0.5, "outcome": "win"})
    quality.observe_event({"mode": "a-mode", "expected_score": 0.9, "outcome": "win"})
    quality.observe_event({"mode": "a-mode", "expected_score": 0.9, "outcome": "abandoned"})
    lines = quality_lines(quality.summaries())
    assert lines == [
        "  prediction a-mode: log loss 0.105  brier 0.010  calibration error 0.100"
        "  over 1 rating changes",
        "  prediction z-mode: log loss 0.693  brier 0.250  calibration error 0.500"
        "  over 1 rating changes",
    ]


def test_nothing_scored_yet_no_lines() -> None:
    assert quality_lines(PredictionQuality().summaries()) == []
