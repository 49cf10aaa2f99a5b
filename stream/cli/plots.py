"""Pictures people would rather see than read (matplotlib, imported only when asked for)."""

from __future__ import annotations

from pathlib import Path

from stream.offline.metrics import PredictionMetrics


def calibration_plot(metrics: PredictionMetrics, path: Path, title: str) -> None:
    """Predicted probability against observed frequency, with how many predictions each bin has."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    bins = metrics.calibration()
    predicted = [b[0] for b in bins]
    observed = [b[1] for b in bins]
    counts = [b[2] for b in bins]
    fig, (top, bottom) = plt.subplots(
        2, 1, figsize=(6, 7), gridspec_kw={"height_ratios": [3, 1]}, sharex=True
    )
    top.plot([0, 1], [0, 1], linestyle="--", color="grey", label="perfect calibration")
    top.plot(predicted, observed, marker="o", label="ratings")
    top.set_ylabel("observed win frequency")
    top.set_title(
        f"{title}\n{metrics.matches:,} matches: log loss {metrics.log_loss:.4f}, "
        f"brier {metrics.brier:.4f}, accuracy {metrics.accuracy:.3f}",
        fontsize=10,
    )
    top.legend(loc="upper left")
    top.set_xlim(0, 1)
    top.set_ylim(0, 1)
    bottom.bar(predicted, counts, width=0.08)
    bottom.set_xlabel("predicted win probability")
    bottom.set_ylabel("predictions")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
