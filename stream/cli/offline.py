"""`skillstream replay`, `evaluate` and `tune`: offline rating of a match history."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import IO

import orjson

from stream.cli.arguments import existing_file, iso_date, output_file
from stream.cli.progress import Progress
from stream.errors import UserError
from stream.history import HistoryMatch, read_seed_ratings
from stream.offline.evaluation import evaluate
from stream.offline.intake import Intake
from stream.offline.replayer import DEFAULT_MODE, Replayer
from stream.offline.tuning import Trial, modes_toml_section, tune
from stream.ratings.algorithm import ALGORITHMS
from stream.ratings.modes import ModeConfig, Modes, load_modes


class UsageError(UserError):
    """A command-line mistake; printed without a traceback."""


# The image formats matplotlib writes without extra packages.
PLOT_SUFFIXES = (".png", ".svg", ".pdf")


def plot_file(text: str) -> Path:
    """A writable image file, and matplotlib (an optional extra) there to draw it: checked
    before the history is read, not after."""
    path = output_file(*PLOT_SUFFIXES)(text)
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise argparse.ArgumentTypeError(
            "drawing needs matplotlib: pip install 'skillstream[plot]'"
        ) from None
    return path


def add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "history", type=existing_file, help="CSV or JSON-lines match history ('-': stdin)"
    )
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--mode", help="rate every match as this mode of the modes file")
    which.add_argument(
        "--algorithm", choices=sorted(ALGORITHMS), help="rate with this algorithm's defaults"
    )
    parser.add_argument(
        "--modes-file", type=existing_file, help="modes TOML (default: built-in defaults)"
    )
    parser.add_argument(
        "--seed-ratings",
        type=existing_file,
        help="JSON lines of starting states (player_id, rating, ...)",
    )


def add_on_error(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--on-error",
        choices=["stop", "skip"],
        default="stop",
        help="a bad row (or a mode the modes file rejects): stop with its line (default), or "
        "skip it, rate the rest and report how many were skipped",
    )


def resolve_modes(args: argparse.Namespace) -> tuple[Modes, str | None]:
    """The modes to rate with and the mode every match is forced into (or None)."""
    if args.algorithm:
        return Modes.single(ModeConfig(DEFAULT_MODE, ALGORITHMS[args.algorithm]())), None
    modes = load_modes(args.modes_file) if args.modes_file else Modes()
    if args.mode and not modes.accepts(args.mode):
        raise UsageError(
            f"mode {args.mode!r} is not in {args.modes_file} and unlisted modes are rejected"
        )
    return modes, args.mode


def make_replayer(args: argparse.Namespace) -> Replayer:
    modes, override = resolve_modes(args)
    if args.seed_ratings is not None and str(args.seed_ratings) == "-" == str(args.history):
        raise UsageError("the history and --seed-ratings cannot both be read from stdin ('-')")
    seeds = list(read_seed_ratings(args.seed_ratings)) if args.seed_ratings else []
    return Replayer(modes, override, seeds)


def stream_history(
    path: Path,
    label: str,
    replayer: Replayer | None = None,
    args: argparse.Namespace | None = None,
) -> Iterator[HistoryMatch]:
    """The matches to rate (see :class:`Intake`), with a progress bar of matches read when
    stderr is a terminal; what was left out is reported on stderr at the end.

    ``replayer`` supplies the modes and ``--mode`` (default: every mode accepted), ``args``
    ``--on-error`` and the modes file's name (default: a bad row stops the command).
    """
    modes, override = (Modes(), None) if replayer is None else replayer.mode_choice
    skip = args is not None and getattr(args, "on_error", "stop") == "skip"
    source = "the modes file"
    if args is not None and args.modes_file is not None:
        source = str(args.modes_file)
    total = None if str(path) == "-" else path.stat().st_size
    with Progress(total, label, unit="matches") as bar:
        intake = Intake(
            path, modes, override, skip_bad_rows=skip, progress=bar.update, modes_source=source
        )
        yield from intake
    for line in intake.report.lines():
        print(f"skillstream {label}: {line}", file=sys.stderr)


def cmd_replay(args: argparse.Namespace) -> int:
    replayer = make_replayer(args)
    for match in stream_history(args.history, "replay", replayer, args):
        replayer.apply(match)
    with ExitStack() as stack:
        out: IO[bytes] = stack.enter_context(args.out.open("wb")) if args.out else sys.stdout.buffer
        for final in replayer.ratings():
            out.write(orjson.dumps(final.to_json(), option=orjson.OPT_APPEND_NEWLINE))
    return 0


def cmd_evaluate(args: argparse.Namespace) -> int:
    replayer = make_replayer(args)
    metrics = evaluate(
        stream_history(args.history, "evaluate", replayer, args), replayer, since=args.since
    )
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
    add_on_error(replay)
    replay.add_argument(
        "--out", type=output_file(".jsonl"), help="output JSON lines, FILE.jsonl (default: stdout)"
    )
    replay.set_defaults(func=cmd_replay)

    ev = sub.add_parser("evaluate", help="how well ratings predict a history")
    add_common(ev)
    ev.add_argument("--since", type=iso_date, help="score only matches from this date on")
    ev.add_argument("--json", action="store_true", help="print one JSON object")
    add_on_error(ev)
    ev.add_argument(
        "--plot",
        type=plot_file,
        help="write a calibration diagram (FILE.png, .svg or .pdf)",
    )
    ev.set_defaults(func=cmd_evaluate)

    tn = sub.add_parser("tune", help="search parameters for the lowest held-out log loss")
    add_common(tn)
    tn.add_argument(
        "--holdout", type=float, default=0.2, help="fraction of matches scored (default 0.2)"
    )
    tn.add_argument("--rounds", type=int, default=2, help="coordinate-descent rounds")
    tn.set_defaults(func=cmd_tune)
