"""Pictures people would rather see than read (matplotlib, imported only when asked for)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from stream.offline.evaluation import Evaluation
from stream.offline.metrics import PredictionMetrics
from stream.offline.ratingdrift import DriftPoint

_PANEL_TITLES = {
    "experience": "by games of the less experienced participant",
    "team_size": "by team size",
    "sides": "by sides (even or uneven)",
    "mode": "by mode",
}
# More curves than this in one panel are unreadable: the largest buckets are drawn.
_MAX_CURVES = 6


def calibration_plot(evaluation: Evaluation, path: Path, title: str) -> None:
    """Predicted probability against observed frequency: overall with how many predictions each
    bin has, then one panel per breakdown with a curve per bucket."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    overall = evaluation.overall
    fig, axes = plt.subplots(2, 3, figsize=(16, 10))
    top = axes[0][0]
    _diagonal(top)
    _curve(top, overall, "all predictions", marker_counts=True)
    top.set_title(
        f"{title}\n{overall.matches:,} matches: log loss {overall.log_loss:.4f}, "
        f"brier {overall.brier:.4f}, accuracy {overall.accuracy:.3f}",
        fontsize=10,
    )
    top.legend(loc="upper left", fontsize=8)
    panels = (axes[0][1], axes[0][2], axes[1][0], axes[1][1])
    for ax, dimension in zip(panels, _PANEL_TITLES, strict=True):
        _diagonal(ax)
        buckets = evaluation.breakdown(dimension)
        largest = sorted(buckets, key=lambda b: -b[1].predictions)[:_MAX_CURVES]
        for name, metrics in [b for b in buckets if b in largest]:
            label = (
                f"{name}: {metrics.matches:,} matches, favourite "
                f"{metrics.favourite_predicted:.2f} predicted / "
                f"{metrics.favourite_observed:.2f} won"
            )
            _curve(ax, metrics, label, marker_counts=False)
        ax.set_title(_PANEL_TITLES[dimension], fontsize=10)
        ax.legend(loc="upper left", fontsize=7)
    side = axes[1][2]
    _diagonal(side)
    bigger = evaluation.bigger
    if bigger.predictions:
        label = (
            f"{bigger.matches:,} uneven matches: {bigger.mean_predicted:.2f} predicted / "
            f"{bigger.mean_observed:.2f} won"
        )
        _curve(side, bigger, label, marker_counts=True)
    side.set_title("uneven sides, from the bigger side", fontsize=10)
    side.legend(loc="upper left", fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def _diagonal(ax: Any) -> None:
    ax.plot([0, 1], [0, 1], linestyle="--", color="grey", label="perfect calibration")
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_xlabel("predicted win probability")
    ax.set_ylabel("observed win frequency")


def _curve(ax: Any, metrics: PredictionMetrics, label: str, *, marker_counts: bool) -> None:
    bins = metrics.calibration()
    predicted = [b[0] for b in bins]
    observed = [b[1] for b in bins]
    ax.plot(predicted, observed, marker="o", label=label)
    if marker_counts:
        for x, y, n in bins:
            ax.annotate(f"{n:,}", (x, y), textcoords="offset points", xytext=(4, -10), fontsize=7)


_VALUE_TITLES = {
    "deviation": "prior deviation (points)",
    "size_edge": "size edge (points for twice the players)",
    "persistence": "persistence (teammates kept)",
    "decisiveness": "decisiveness (logit factor)",
    "drift_period": "drift period (days)",
    "debut_offset": "debut offset (points)",
    "party_edge": "party edge (points per partied player)",
}


def population_plot(records: Sequence[Mapping[str, Any]], path: Path, title: str) -> None:
    """Each learned value over event time, one step curve per learning mode
    (stream.offline.population_trace's records) from its first match to its last; a value no
    mode has is left blank, and so is a mode without a match."""
    import datetime as dt

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def moment(text: str) -> dt.datetime:
        return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))

    curves: dict[str, list[tuple[dt.datetime, Mapping[str, Any]]]] = {}
    held: dict[str, list[str]] = {}
    for record in records:
        if "population" in record and record["from"] is not None:
            curves.setdefault(record["mode"], []).append(
                (moment(record["from"]), record["population"])
            )
        elif "hold" in record:
            held[record["mode"]] = list(record["hold"])
            points = curves.get(record["mode"])
            if points and record["until"] is not None:
                # The last values hold to the end of the history.
                points.append((moment(record["until"]), points[-1][1]))
    fig, axes = plt.subplots(2, 4, figsize=(20, 9))
    panels = [ax for row in axes for ax in row]
    for ax in panels[len(_VALUE_TITLES) :]:
        ax.set_visible(False)  # one panel per learned value: the grid has one more
    for ax, (key, label) in zip(panels, _VALUE_TITLES.items(), strict=False):
        for mode, points in curves.items():
            if points[0][1][key] is None:
                continue  # not learned for this mode's algorithm or experience term
            name = f"{mode} (held)" if key in held.get(mode, []) else mode
            ax.step([at for at, _ in points], [v[key] for _, v in points], where="post", label=name)
        ax.set_title(label, fontsize=10)
        ax.tick_params(axis="x", labelrotation=30, labelsize=8)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(loc="best", fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def drift_plot(points: Sequence[DriftPoint], path: Path, title: str) -> None:
    """A mode's drift points (stream.offline.ratingdrift): ratings above, Rank Points below,
    each as its mean, its median and the bands p10-p90 and p25-p75, over event time (over the
    seasons' numbers when a point has no time), and the active players on a second axis."""
    import datetime as dt

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    timed = all(p.at is not None for p in points)
    xs: list[Any] = [
        dt.datetime.fromtimestamp(p.at, dt.UTC) if timed and p.at is not None else p.season
        for p in points
    ]
    fig, axes = plt.subplots(2, 1, figsize=(12, 8), sharex=True)
    for ax, name in zip(axes, ("rating", "rank_points"), strict=True):
        spreads = [getattr(p, name) for p in points]
        q = [s.quantiles for s in spreads]
        low, high = [v[0] for v in q], [v[4] for v in q]
        ax.fill_between(xs, low, high, color="C0", alpha=0.15, label="p10-p90")
        ax.fill_between(xs, [v[1] for v in q], [v[3] for v in q], color="C0", alpha=0.3)
        ax.plot(xs, [v[2] for v in q], color="C0", linestyle="--", label="median (p25-p75)")
        ax.plot(xs, [s.mean for s in spreads], color="C3", label="mean")
        ax.set_ylabel("rating" if name == "rating" else "Rank Points")
        ax.legend(loc="upper left", fontsize=8)
    active = axes[1].twinx()
    active.plot(xs, [p.active for p in points], color="grey", linewidth=0.8)
    active.set_ylabel("active players", color="grey")
    axes[1].set_xlabel("event time" if timed else "season")
    axes[1].tick_params(axis="x", labelrotation=30, labelsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
