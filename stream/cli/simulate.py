"""`skillstream simulate`: a fleet simulator that writes a match history file.

(The live pipeline's producer mode builds on the same simulator core.) docs/simulator.md
describes the model behind every option.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from typing import Any

from stream.cli.arguments import (
    add_force,
    finite_float,
    int_at_least,
    non_negative_float,
    output_file,
    positive_int,
    probability,
    size_range,
    team_sizes,
)
from stream.cli.outputs import HISTORY, Output, check_outputs, written_text
from stream.cli.progress import Progress, tracked
from stream.errors import UserError
from stream.simulation import Matchmaker, SimulationConfig, simulate, write_csv, write_jsonl

_DEFAULTS: dict[str, Any] = {f.name: f.default for f in dataclasses.fields(SimulationConfig)}
# Command-line option (without --) -> SimulationConfig field, for the model's knobs.
MODEL_OPTIONS = {
    "matches": "matches",
    "players": "players",
    "initial-players": "initial_players",
    "seed": "seed",
    "mode": "mode",
    "team-size": "team_size",
    "teams": "teams",
    "team-sizes": "team_sizes",
    "size-range": "size_range",
    "uneven-rate": "uneven_rate",
    "skill-mean": "skill_mean",
    "skill-sd": "skill_sd",
    "draw-rate": "draw_probability",
    "quit-rate": "quit_probability",
    "part-time-rate": "part_time_probability",
    # Not --party-rate: that is the matchmaker's parties (party_rate) since before this knob.
    "team-party-rate": "party_probability",
    "party-edge": "party_edge",
    "drift": "drift_sd",
    "newcomer-deficit": "newcomer_deficit",
    "learning-matches": "learning_matches",
    "matchmaker": "matchmaker",
    "matchmaking-k": "matchmaking_k",
    "matchmaking-noise": "matchmaking_noise",
    "pool-size": "pool_size",
    "carry": "carry",
    "extra-player-edge": "extra_player_edge",
    "party-rate": "party_rate",
    "break-rate": "break_probability",
    "break-days": "break_days",
    "matches-per-second": "matches_per_second",
    "match-length": "match_seconds",
}
_HELP = {
    "initial-players": "players present at the start (veterans; default: a tenth)",
    "mode": "mode name (default from the format, e.g. 1v1, 2v3, ffa8)",
    "teams": "teams per match (>2: free-for-all)",
    "team-sizes": "one size per team for uneven teams, e.g. 2,3 (overrides --team-size/--teams)",
    "size-range": "each match draws one size for all its teams from this range, e.g. 1-10",
    "uneven-rate": "share of matches where one team has one player more or fewer",
    "part-time-rate": "chance that a player of a team match plays only 20-90%% of it",
    "team-party-rate": "chance that a side of a team match holds a party that queued together"
    " (2 to all of its players, written as the event's parties)",
    "party-edge": "points each member of such a party performs above their skill",
    "skill-sd": "spread of the players' eventual true skills",
    "drift": "true-skill random walk per match played (sd)",
    "newcomer-deficit": "how far below their eventual skill newcomers start",
    "learning-matches": "matches for a newcomer's deficit to shrink by a factor e",
    "matchmaker": "elo: its own rating from results; oracle: true skill plus noise",
    "matchmaking-k": "K factor of the matchmaker's Elo",
    "matchmaking-noise": "noise (sd) on the matchmaker's view, redrawn after each match",
    "pool-size": "players the matchmaker looks at per match",
    "carry": "weight of a team's best performance against its mean (0..1)",
    "extra-player-edge": "points per player a bigger team keeps after the handicap",
    "party-rate": "share of joining players who join the previous player's party",
    "break-rate": "probability of a break after a match",
    "break-days": "mean length of a break",
    "matches-per-second": "simulated (game-time) match rate",
    "match-length": "mean seconds a simulated match lasts",
}
# Options whose range the parser checks (the config checks the rest, as a one-line error too).
_TYPES: dict[str, Any] = {
    "matches": positive_int,
    "players": int_at_least(2),
    "team-size": positive_int,
    "teams": int_at_least(2),
    "draw-rate": probability,
    "quit-rate": probability,
    "part-time-rate": probability,
    "team-party-rate": probability,
    "drift": non_negative_float,
    "team-sizes": team_sizes,
    "size-range": size_range,
    "uneven-rate": probability,
    "matchmaker": str,
    "mode": str,
    "initial-players": int,
}

# The options of publishing to Kafka (option, its argparse destination): refused without
# --kafka, where they would change nothing.
KAFKA_ONLY = (
    ("--rate", "rate"),
    ("--match-seconds", "match_seconds"),
    ("--duplicate-rate", "duplicate_rate"),
    ("--reorder-rate", "reorder_rate"),
    ("--abandon-rate", "abandon_rate"),
    ("--omit-teams-rate", "omit_teams_rate"),
    ("--history-times", "history_times"),
)

# What --out may be: the format follows the suffix unless --format says otherwise.
OUT_SUFFIXES = (".csv", ".jsonl")


def config_from_args(args: argparse.Namespace) -> SimulationConfig:
    """The SimulationConfig of the parsed options; ValueError names a value out of range."""
    return SimulationConfig(
        **{
            field: getattr(args, option.replace("-", "_"))
            for option, field in MODEL_OPTIONS.items()
        }
    )


def cmd_simulate(args: argparse.Namespace) -> int:
    try:
        config = config_from_args(args)
    except ValueError as exc:
        raise UserError(str(exc)) from None
    if args.kafka:
        return _to_kafka(args, config)
    # "is", not "in": --rate 0 is given, and 0.0 == False.
    given = [
        o for o, dest in KAFKA_ONLY if (v := getattr(args, dest)) is not None and v is not False
    ]
    if given:
        raise UserError(
            f"{given[0]} shapes how matches are published to Kafka: add --kafka (a file keeps"
            " the simulation's own times)"
        )
    suffix = args.out.suffix.lower().lstrip(".") if args.out else None
    fmt = args.format or suffix or "csv"
    if suffix is not None and fmt != suffix:
        raise UserError(f"--format {fmt} does not match --out {args.out}")
    if fmt == "csv" and not config.one_on_one:
        raise UserError("CSV holds 1v1 matches; use --format jsonl (or --out FILE.jsonl)")
    output = Output("--out", args.out, HISTORY)
    check_outputs({}, [output], force=args.force)
    with (
        written_text("simulate", output) as out,
        Progress(config.matches, "simulate", unit="matches") as bar,
    ):
        writer = write_csv if fmt == "csv" else write_jsonl
        writer(tracked(simulate(config), bar), out)
    return 0


def _to_kafka(args: argparse.Namespace, config: SimulationConfig) -> int:
    """Publish the matches as match-started/match-finished events (a live fleet)."""
    import asyncio

    from stream.config.settings import Settings
    from stream.reachability import check_kafka, kafka_errors, quiet_kafka_logs
    from stream.simulation import Simulator
    from stream.simulation.gamefleet import FleetConfig, FleetReport, run_fleet

    try:
        # The worker's own settings: the same broker, topic names and defaults.
        settings = Settings.from_env()
        servers = settings.kafka.bootstrap_servers
        fleet = FleetConfig(
            rate=100.0 if args.rate is None else args.rate,
            realtime=not args.history_times,
            duplicate_rate=args.duplicate_rate or 0.0,
            reorder_rate=args.reorder_rate or 0.0,
            abandon_rate=args.abandon_rate or 0.0,
            omit_teams_rate=args.omit_teams_rate or 0.0,
            match_seconds=args.match_seconds or 0.0,
            seed=config.seed,
            match_started_topic=settings.topics.match_started,
            match_finished_topic=settings.topics.match_finished,
        )
    except ValueError as exc:  # SettingsError is one too
        print(f"skillstream simulate: error: {exc}", file=sys.stderr)
        return 2

    def progress(report: FleetReport) -> None:
        print(f"{report.matches:,} matches, {report.messages:,} messages", file=sys.stderr)

    async def publish() -> FleetReport:
        await check_kafka(settings)
        with quiet_kafka_logs(), kafka_errors(settings):
            options = settings.kafka.security.aiokafka_options()
            return await run_fleet(
                Simulator(config), servers, fleet, progress, client_options=options
            )

    report = asyncio.run(publish())
    print(
        f"published {report.matches:,} matches ({report.messages:,} messages, "
        f"{report.abandoned:,} never finished) to {servers} in {report.seconds:.1f} s",
        file=sys.stderr,
    )
    return 0


def add_simulation_options(parser: argparse.ArgumentParser) -> None:
    """One option per model knob, each defaulting to the SimulationConfig field."""
    for option, field in MODEL_OPTIONS.items():
        default = _DEFAULTS[field]
        kind = _TYPES.get(option) or (finite_float if isinstance(default, float) else type(default))
        help_text = _HELP.get(option, "")
        if default is not None:
            help_text = f"{help_text} (default: {default})".strip()
        choices = [m.value for m in Matchmaker] if option == "matchmaker" else None
        parser.add_argument(
            f"--{option}", type=kind, default=default, choices=choices, help=help_text or None
        )


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    sim = sub.add_parser("simulate", help="generate a match history from simulated players")
    add_simulation_options(sim)
    sim.add_argument(
        "--out",
        type=output_file(*OUT_SUFFIXES),
        help="output file, FILE.csv or FILE.jsonl (default: stdout)",
    )
    sim.add_argument(
        "--format", choices=["csv", "jsonl"], help="default: by --out suffix, else csv"
    )
    add_force(sim)
    kafka = sim.add_argument_group("publishing to Kafka (KAFKA_BOOTSTRAP_SERVERS)")
    kafka.add_argument("--kafka", action="store_true", help="publish events instead of a file")
    kafka.add_argument(
        "--rate",
        type=non_negative_float,
        default=None,
        help="matches/s (default 100; 0: flat out)",
    )
    kafka.add_argument(
        "--match-seconds",
        type=non_negative_float,
        default=None,
        help="start-to-finish time, seconds (default 0)",
    )
    kafka.add_argument(
        "--duplicate-rate",
        type=probability,
        default=None,
        help="share of events published twice, as a retrying producer may (default 0)",
    )
    kafka.add_argument(
        "--reorder-rate",
        type=probability,
        default=None,
        help="share of matches whose finish is published before their start (default 0)",
    )
    kafka.add_argument(
        "--abandon-rate",
        type=probability,
        default=None,
        help="share of matches never finished (default 0)",
    )
    kafka.add_argument(
        "--omit-teams-rate",
        type=probability,
        default=None,
        help="share of finishes without teams, left to their start (default 0)",
    )
    kafka.add_argument(
        "--history-times", action="store_true", help="keep simulated times, not the wall clock"
    )
    sim.set_defaults(func=cmd_simulate)
