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
    if args.kafka:
        return _to_kafka(args, config)
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


def _to_kafka(args: argparse.Namespace, config: SimulationConfig) -> int:
    """Publish the matches as match-started/match-finished events (a live fleet)."""
    import asyncio

    from stream.pipeline.reachability import check_kafka, kafka_errors, quiet_kafka_logs
    from stream.pipeline.settings import Settings
    from stream.simulation import Simulator
    from stream.simulation.fleet import FleetConfig, FleetReport, run_fleet

    try:
        # The worker's own settings: the same broker, topic names and defaults.
        settings = Settings.from_env()
        servers = settings.bootstrap_servers
        fleet = FleetConfig(
            rate=args.rate,
            realtime=not args.history_times,
            duplicate_rate=args.duplicate_rate,
            reorder_rate=args.reorder_rate,
            abandon_rate=args.abandon_rate,
            omit_teams_rate=args.omit_teams_rate,
            match_seconds=args.match_seconds,
            seed=config.seed,
            match_started_topic=settings.match_started_topic,
            match_finished_topic=settings.match_finished_topic,
        )
    except ValueError as exc:  # SettingsError is one too
        print(f"skillstream simulate: error: {exc}", file=sys.stderr)
        return 2

    def progress(report: FleetReport) -> None:
        print(f"{report.matches:,} matches, {report.messages:,} messages", file=sys.stderr)

    async def publish() -> FleetReport:
        await check_kafka(settings)
        with quiet_kafka_logs(), kafka_errors(settings):
            return await run_fleet(Simulator(config), servers, fleet, progress)

    report = asyncio.run(publish())
    print(
        f"published {report.matches:,} matches ({report.messages:,} messages, "
        f"{report.abandoned:,} never finished) to {servers} in {report.seconds:.1f} s",
        file=sys.stderr,
    )
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
    kafka = sim.add_argument_group("publishing to Kafka (KAFKA_BOOTSTRAP_SERVERS)")
    kafka.add_argument("--kafka", action="store_true", help="publish events instead of a file")
    kafka.add_argument("--rate", type=float, default=100.0, help="matches/s (0: flat out)")
    kafka.add_argument("--match-seconds", type=float, default=0.0, help="start-to-finish time")
    kafka.add_argument("--duplicate-rate", type=float, default=0.0)
    kafka.add_argument("--reorder-rate", type=float, default=0.0, help="finish before start")
    kafka.add_argument("--abandon-rate", type=float, default=0.0, help="matches never finished")
    kafka.add_argument("--omit-teams-rate", type=float, default=0.0)
    kafka.add_argument(
        "--history-times", action="store_true", help="keep simulated times, not the wall clock"
    )
    sim.set_defaults(func=cmd_simulate)
