"""`skillstream simulate`: a fleet simulator that writes a match history file.

(The live pipeline's producer mode builds on the same simulator core.)
"""

from __future__ import annotations

import argparse
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import TextIO

from stream.simulation import SimulationConfig, simulate, write_csv, write_jsonl


def config_from_args(args: argparse.Namespace) -> SimulationConfig:
    return SimulationConfig(
        seed=args.seed,
        matches=args.matches,
        players=args.players,
        mode=args.mode,
        team_size=args.team_size,
        teams=args.teams,
        draw_probability=args.draw_rate,
        quit_probability=args.quit_rate,
        drift_sd=args.drift,
    )


def cmd_simulate(args: argparse.Namespace) -> int:
    try:
        config = config_from_args(args)
    except ValueError as exc:
        print(f"skillstream simulate: error: {exc}", file=sys.stderr)
        return 2
    fmt = args.format or ("jsonl" if args.out and args.out.suffix == ".jsonl" else "csv")
    if fmt == "csv" and (config.teams != 2 or config.team_size != 1):
        print(
            "skillstream simulate: error: CSV holds 1v1 matches; use --format jsonl",
            file=sys.stderr,
        )
        return 2
    with ExitStack() as stack:
        out: TextIO = (
            stack.enter_context(args.out.open("w", newline="")) if args.out else sys.stdout
        )
        writer = write_csv if fmt == "csv" else write_jsonl
        writer(simulate(config), out)
    return 0


def add_simulation_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--matches", type=int, default=10_000)
    parser.add_argument("--players", type=int, default=1_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--mode", help="mode name (default from the format, e.g. 1v1)")
    parser.add_argument("--team-size", type=int, default=1)
    parser.add_argument("--teams", type=int, default=2, help="teams per match (>2: free-for-all)")
    parser.add_argument("--draw-rate", type=float, default=0.0)
    parser.add_argument("--quit-rate", type=float, default=0.0)
    parser.add_argument("--drift", type=float, default=0.0, help="true-skill drift per match (sd)")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    sim = sub.add_parser("simulate", help="generate a match history from simulated players")
    add_simulation_options(sim)
    sim.add_argument("--out", type=Path, help="output file (default: stdout)")
    sim.add_argument(
        "--format", choices=["csv", "jsonl"], help="default: by --out suffix, else csv"
    )
    sim.set_defaults(func=cmd_simulate)
