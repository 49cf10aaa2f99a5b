"""`skillstream replay`, `evaluate` and `tune`: offline rating of a match history."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import IO

import orjson

from stream.cli.arguments import iso_date
from stream.cli.progress import Progress
from stream.errors import UserError
from stream.history import HistoryMatch, read_history, read_seed_ratings
from stream.offline.evaluation import evaluate
from stream.offline.replayer import DEFAULT_MODE, Replayer
from stream.offline.tuning import Trial, modes_toml_section, tune
from stream.ratings.algorithm import ALGORITHMS
from stream.ratings.modes import Modes, built_in_mode, load_modes


class UsageError(UserError):
    """A command-line mistake; printed without a traceback."""


def add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("history", type=Path, help="CSV or JSON-lines match history ('-': stdin)")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--mode", help="rate every match as this mode of the modes file")
    which.add_argument(
        "--algorithm",
        choices=sorted(ALGORITHMS),
        help="rate with this algorithm and the built-in defaults",
    )
    parser.add_argument("--modes-file", type=Path, help="modes TOML (default: built-in defaults)")
    parser.add_argument(
        "--seed-ratings", type=Path, help="JSON lines of starting states (player_id, rating, ...)"
    )


def resolve_modes(args: argparse.Namespace) -> tuple[Modes, str | None]:
    """The modes to rate with and the mode every match is forced into (or None)."""
    if args.algorithm:
        return Modes.single(built_in_mode(DEFAULT_MODE, args.algorithm)), None
    modes = load_modes(args.modes_file) if args.modes_file else Modes()
    if args.mode and not modes.accepts(args.mode):
        raise UsageError(
            f"mode {args.mode!r} is not in {args.modes_file} and unlisted modes are rejected"
        )
    return modes, args.mode


def make_replayer(args: argparse.Namespace) -> Replayer:
    modes, override = resolve_modes(args)
    seeds = list(read_seed_ratings(args.seed_ratings)) if args.seed_ratings else []
    return Replayer(modes, override, seeds)


def stream_history(path: Path, label: str) -> Iterator[HistoryMatch]:
    """The history's matches, with a progress bar by bytes read when stderr is a terminal."""
    total = None if str(path) == "-" else path.stat().st_size
    with Progress(total, label) as bar:
        yield from read_history(path, progress=bar.update)


def cmd_replay(args: argparse.Namespace) -> int:
    replayer = make_replayer(args)
    for match in stream_history(args.history, "replay"):
        replayer.apply(match)
    with ExitStack() as stack:
        out: IO[bytes] = stack.enter_context(args.out.open("wb")) if args.out else sys.stdout.buffer
        for final in replayer.ratings():
            out.write(orjson.dumps(final.to_json(), option=orjson.OPT_APPEND_NEWLINE))
    return 0


def cmd_evaluate(args: argparse.Namespace) -> int:
    replayer = make_replayer(args)
    metrics = evaluate(stream_history(args.history, "evaluate"), replayer, since=args.since)
    summary = metrics.summary()
    if args.json:
        sys.stdout.buffer.write(orjson.dumps(summary, option=orjson.OPT_APPEND_NEWLINE))
    else:
        print(f"matches   {summary['matches']}")
        print(f"log_loss  {summary['log_loss']:.5f}")
        print(f"brier     {summary['brier']:.5f}")
        print(f"accuracy  {summary['accuracy']:.4f}")
    if args.plot:
        from stream.cli.plots import calibration_plot

        calibration_plot(metrics, args.plot, title=f"Calibration: {args.history.name}")
        if not args.json:
            print(f"calibration diagram written to {args.plot}")
    return 0


def count_matches(path: Path) -> int:
    return sum(1 for _ in stream_history(path, "count"))


def cmd_tune(args: argparse.Namespace) -> int:
    if str(args.history) == "-":
        raise UsageError("tune reads the history several times: give a file, not stdin")
    modes, override = resolve_modes(args)
    base = modes.get(override or DEFAULT_MODE)
    total = count_matches(args.history)
    skip = int(total * (1.0 - args.holdout))
    if total - skip < 1:
        raise UsageError("the held-out tail is empty: use a longer history or a larger --holdout")

    def report(trial: Trial) -> None:
        params = " ".join(f"{k}={v:g}" for k, v in trial.params.items())
        print(f"trial  log_loss {trial.log_loss:.5f}  {params}", file=sys.stderr)

    result = tune(
        lambda: stream_history(args.history, "tune"), base, skip, args.rounds, on_trial=report
    )
    section = f"modes.{override}" if override else "default"
    sys.stdout.write(modes_toml_section(result, section, args.history.name))
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    replay = sub.add_parser("replay", help="rate a match history offline")
    add_common(replay)
    replay.add_argument("--out", type=Path, help="output JSON lines (default: stdout)")
    replay.set_defaults(func=cmd_replay)

    ev = sub.add_parser("evaluate", help="how well ratings predict a history")
    add_common(ev)
    ev.add_argument("--since", type=iso_date, help="score only matches from this date on")
    ev.add_argument("--json", action="store_true", help="print one JSON object")
    ev.add_argument("--plot", type=Path, help="write a calibration diagram (PNG)")
    ev.set_defaults(func=cmd_evaluate)

    tn = sub.add_parser("tune", help="search parameters for the lowest held-out log loss")
    add_common(tn)
    tn.add_argument(
        "--holdout", type=float, default=0.2, help="fraction of matches scored (default 0.2)"
    )
    tn.add_argument("--rounds", type=int, default=2, help="coordinate-descent rounds")
    tn.set_defaults(func=cmd_tune)
