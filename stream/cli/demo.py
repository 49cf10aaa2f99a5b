"""`skillstream demo` (what `make run` runs until the live stack lands): rate a simulated
season offline and show the leaderboard next to the players' hidden true skills."""

from __future__ import annotations

import argparse
from pathlib import Path

from stream.cli.arguments import int_at_least, output_folder, positive_int
from stream.cli.offline import stream_history
from stream.cli.progress import Progress, tracked
from stream.config.modes import Modes
from stream.offline.evaluation import evaluate
from stream.offline.replayer import Replayer
from stream.simulation import SimulationConfig, Simulator, write_csv


def _ranks(values: list[float]) -> list[float]:
    order = sorted(range(len(values)), key=values.__getitem__)
    ranks = [0.0] * len(values)
    for rank, index in enumerate(order):
        ranks[index] = float(rank)
    return ranks


def spearman(xs: list[float], ys: list[float]) -> float:
    """Rank correlation (no ties expected among float skills)."""
    n = len(xs)
    if n < 2:
        return float("nan")
    rx, ry = _ranks(xs), _ranks(ys)
    d2 = sum((a - b) ** 2 for a, b in zip(rx, ry, strict=True))
    return 1.0 - 6.0 * d2 / (n * (n * n - 1))


def cmd_demo(args: argparse.Namespace) -> int:
    args.out_dir.mkdir(parents=True, exist_ok=True)
    history = args.out_dir / "demo-history.csv"
    simulator = Simulator(SimulationConfig(matches=args.matches, players=args.players, seed=1))
    with (
        history.open("w", newline="") as f,
        Progress(args.matches, "simulate", unit="matches") as bar,
    ):
        write_csv(tracked(simulator, bar), f)
    print(f"simulated {args.matches} 1v1 matches of {args.players} players -> {history}")

    replayer = Replayer(Modes())
    metrics = evaluate(stream_history(history, "rating"), replayer)
    table = replayer.tables["default"]
    truth = simulator.true_skills
    print(
        f"rated with glicko2 defaults: log loss {metrics.log_loss:.4f}, "
        f"accuracy {metrics.accuracy:.3f} over {metrics.matches} predictions"
    )
    players = [p for p in table if table[p].games >= 10]
    rho = spearman([table[p].rating for p in players], [truth[p] for p in players])
    print(f"rank correlation of rating with hidden true skill (>= 10 games): {rho:.3f}\n")
    top = sorted(table, key=lambda p: (-table[p].rank_points, -table[p].rating))[: args.top]
    print(f"{'#':>3}  {'player':<9} {'RP':>6} {'rating':>14} {'games':>6} {'true skill':>11}")
    for i, pid in enumerate(top, 1):
        s = table[pid]
        print(
            f"{i:>3}  {pid:<9} {s.rank_points:>6} {s.rating:>7.0f} ±{2 * s.deviation:<5.0f} "
            f"{s.games:>6} {truth[pid]:>11.0f}"
        )
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    demo = sub.add_parser("demo", help="rate a simulated season and print the leaderboard")
    demo.add_argument("--matches", type=positive_int, default=50_000, help="default 50000")
    demo.add_argument("--players", type=int_at_least(2), default=2_000, help="default 2000")
    demo.add_argument(
        "--top", type=positive_int, default=15, help="leaderboard lines shown (default 15)"
    )
    demo.add_argument(
        "--out-dir",
        type=output_folder,
        default=Path("out"),
        help="folder for the simulated history (default out/)",
    )
    demo.set_defaults(func=cmd_demo)
