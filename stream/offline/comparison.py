"""Paired comparison of two sets of predictions of the same matches.

Two configurations (or a configuration and a peer) predict the same matches; the question is
whether one's log loss is lower by more than chance. Per prediction the difference of the two
losses is taken (pairing removes the matches' own difficulty, which both share), and its mean
gets a standard error *clustered by day*: matches of one day share form, injuries, patches and
tournaments, so treating them as independent would understate the error.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Hashable, Sequence
from dataclasses import dataclass

# A difference is called evidence when it is this many standard errors from zero (about 95%).
Z_EVIDENCE = 2.0
# ... and at least this large: a change that moves log loss by less (a parameter the history
# hardly uses, such as Glicko-2's tau with one game per period) is no difference, however
# small its standard error.
NEGLIGIBLE = 1e-5
# Student's t, 97.5% quantile, by degrees of freedom (clusters - 1) up to 30: with few days the
# clustered error is itself uncertain (two days give one degree of freedom, t = 12.7), and
# comparing to 2 would call noise evidence.
_T_975 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip


def critical_value(clusters: int) -> float:
    """How many standard errors from zero count as evidence with this many clusters."""
    df = clusters - 1
    if df < 1:
        return math.inf
    if df <= len(_T_975):
        return max(_T_975[df - 1], Z_EVIDENCE)
    # Beyond the table t is 1.96 + 2.4/df within 0.003; never below the plain threshold.
    return max(1.96 + 2.4 / df, Z_EVIDENCE)


DAY_SECONDS = 86_400.0


def day_of(at: float) -> int:
    """The UTC day (days since the epoch) of a time in epoch seconds: the default cluster."""
    return math.floor(at / DAY_SECONDS)


@dataclass(frozen=True, slots=True)
class PairedDifference:
    """Mean of ``a - b`` per prediction, with its clustered standard error.

    Negative ``mean`` means A's losses are lower (A predicts better)."""

    predictions: int
    clusters: int
    mean: float
    standard_error: float

    @property
    def z(self) -> float:
        if self.standard_error > 0:
            return self.mean / self.standard_error
        return 0.0 if self.mean == 0 else math.copysign(math.inf, self.mean)

    @property
    def verdict(self) -> str:
        """``better`` (A beats B beyond noise), ``worse``, or ``no evidence``.

        Beyond noise means at least :func:`critical_value` standard errors from zero, and at
        least :data:`NEGLIGIBLE`."""
        if (
            self.clusters < 2
            or abs(self.mean) < NEGLIGIBLE
            or abs(self.z) < critical_value(self.clusters)
        ):
            return "no evidence"
        return "better" if self.mean < 0 else "worse"

    def error_text(self, what: str = "standard error") -> str:
        """``+0.00120 +- 0.00040 (standard error clustered by 12 days)``; with fewer than two
        days there is no standard error to give, and the text says why instead of ``nan``."""
        if self.clusters < 2:
            days = "1 day" if self.clusters == 1 else "no day"
            return (
                f"{self.mean:+.5f} (no {what}: the matches span {days}, and clustering by day"
                " needs two or more)"
            )
        spread = f"+- {self.standard_error:.5f} ({what} clustered by {self.clusters} days)"
        return f"{self.mean:+.5f} {spread}"

    def as_dict(self) -> dict[str, float | int | str]:
        return {
            "predictions": self.predictions,
            "clusters": self.clusters,
            "difference": self.mean,
            "standard_error": self.standard_error,
            "verdict": self.verdict,
        }


def paired_difference(
    a: Sequence[float], b: Sequence[float], clusters: Sequence[Hashable]
) -> PairedDifference:
    """The paired difference of losses ``a[i] - b[i]`` with a cluster-robust standard error.

    ``clusters[i]`` names the group of prediction ``i`` (for example its day): differences
    within a group may be correlated, those of different groups are taken as independent.
    The standard error is the usual sandwich estimate with the G/(G-1) small-sample factor.
    """
    n = len(a)
    if len(b) != n or len(clusters) != n:
        raise ValueError(f"unequal lengths: {n}, {len(b)}, {len(clusters)}")
    if n == 0:
        return PairedDifference(0, 0, math.nan, math.nan)
    diffs = [x - y for x, y in zip(a, b, strict=True)]
    mean = math.fsum(diffs) / n
    sums: defaultdict[Hashable, float] = defaultdict(float)
    for d, c in zip(diffs, clusters, strict=True):
        sums[c] += d - mean
    g = len(sums)
    if g < 2:
        return PairedDifference(n, g, mean, math.nan)
    variance = math.fsum(s * s for s in sums.values()) * g / (g - 1) / (n * n)
    return PairedDifference(n, g, mean, math.sqrt(variance))
