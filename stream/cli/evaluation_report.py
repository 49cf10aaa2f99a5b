"""What `skillstream evaluate` prints: the figures, the calibration breakdown, a comparison."""

from __future__ import annotations

from collections.abc import Iterator

from stream.offline.evaluation import DIMENSIONS, Evaluation
from stream.offline.pairing import Comparison

_DIMENSION_NAMES = {
    "experience": "games of the less experienced",
    "team_size": "team size",
    "sides": "sides",
    "mode": "mode",
}
_VERDICTS = {
    "better": "A predicts better than B",
    "worse": "A predicts worse than B",
    "no evidence": "no evidence either way",
}


def evaluation_lines(evaluation: Evaluation) -> Iterator[str]:
    overall = evaluation.overall
    yield f"matches   {overall.matches}"
    yield f"log_loss  {overall.log_loss:.5f}"
    yield f"brier     {overall.brier:.5f}"
    yield f"accuracy  {overall.accuracy:.4f}"
    yield ""
    # The favourite's view: a bucket whose favourites win less often than predicted is
    # overconfident, whatever order the teams were listed in.
    yield (
        f"{'calibration by':<36} {'matches':>8} {'log_loss':>9} "
        f"{'favourite predicted':>20} {'observed':>9}"
    )
    for dimension in DIMENSIONS:
        for name, m in evaluation.breakdown(dimension):
            label = f"{_DIMENSION_NAMES[dimension]}: {name}"
            yield (
                f"{label:<36} {m.matches:>8} {m.log_loss:>9.5f} "
                f"{m.favourite_predicted:>20.3f} {m.favourite_observed:>9.3f}"
            )
    bigger = evaluation.bigger
    if bigger.predictions:
        yield ""
        yield (
            f"uneven sides ({bigger.matches} matches): the bigger side was given "
            f"{bigger.mean_predicted:.3f} on average and won {bigger.mean_observed:.3f}"
        )


def comparison_lines(comparison: Comparison) -> Iterator[str]:
    c = comparison
    paired = c.paired
    yield f"A  {c.a}: log loss {c.a_log_loss:.5f}"
    yield f"B  {c.b}: log loss {c.b_log_loss:.5f}"
    missing = [
        f"{side} has no prediction for {n} of them"
        for side, n in (("A", c.a_missing), ("B", c.b_missing))
        if n
    ]
    yield f"paired on {paired.predictions} scored predictions" + (
        f" ({'; '.join(missing)})" if missing else ""
    )
    yield f"A - B  {paired.error_text()}: {_VERDICTS[paired.verdict]}"
