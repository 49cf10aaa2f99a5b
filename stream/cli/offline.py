"""`skillstream replay`, `evaluate` and `tune`: offline rating of a match history."""

from __future__ import annotations

import argparse
import datetime as dt
import os
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path

import orjson

from stream.cli.arguments import (
    add_force,
    existing_file,
    existing_file_ending,
    existing_named_file,
    fraction,
    iso_date,
    output_file,
    positive_int,
    rereadable,
)
from stream.cli.evaluation_report import comparison_lines, evaluation_lines
from stream.cli.outputs import (
    CHANGES,
    LEADERBOARD_CHANGE,
    PICTURE,
    POPULATIONS,
    PREDICTIONS,
    RATINGS,
    WORDED,
    Output,
    check_outputs,
    written,
    written_by,
)
from stream.cli.progress import Progress
from stream.cli.subcommands import add_command
from stream.config.modes import Modes, built_in_mode, load_modes
from stream.corrections.ledger import Ledger
from stream.errors import UserError, did_you_mean
from stream.history import HistoryMatch, SeedRating, read_seed_ratings
from stream.history.source import display_name
from stream.offline.corrected import (
    Applied,
    Rated,
    load_ledger,
    rated_in_order,
    refuse_unmatched,
)
from stream.offline.evaluation import Tally, evaluate_in_detail
from stream.offline.intake import Intake
from stream.offline.leaderboard_change import BOARDS
from stream.offline.pairing import Side, compare, side_from_file, side_of
from stream.offline.population_trace import trace_records
from stream.offline.predictions import Prediction, predictions
from stream.offline.predictions_file import read_predictions, write_predictions
from stream.offline.replayer import DEFAULT_MODE, Replayer
from stream.offline.search_space import knobs_for
from stream.offline.seeding import SeedBounds, SeedGames, check_seeds, with_games
from stream.offline.tuned_section import tuned_toml
from stream.offline.tuning import Plan, Trial, planned_trials, tune
from stream.ratings.algorithm import ALGORITHMS
from stream.ratings.settling import Settled

SAME_MODES, BUILT_IN = "same", "built-in"


def _baseline(text: str) -> Path | str:
    """A modes file to compare with (``same``: the replay's own modes; ``built-in``: the
    built-in defaults)."""
    if text in (SAME_MODES, BUILT_IN):
        return text
    if not Path(text).exists():
        hint = did_you_mean(text, (SAME_MODES, BUILT_IN))
        if hint:
            raise argparse.ArgumentTypeError(f"no such file: {text}{hint}")
    return existing_file(text)


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


def populations_file(text: str) -> Path:
    """``--populations``: JSON lines (.jsonl) or a picture (.png, .svg, .pdf: matplotlib)."""
    if Path(text).suffix.lower() in PLOT_SUFFIXES:
        return plot_file(text)
    return output_file(".jsonl", *PLOT_SUFFIXES)(text)


def add_populations(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--populations",
        type=populations_file,
        metavar="FILE",
        help="write what each learning mode learned: its start, every step and the evidence "
        "(FILE.jsonl), or the values over time (FILE.png, .svg or .pdf)",
    )


def check_populations(args: argparse.Namespace, replayer: Replayer) -> None:
    """Before the history is read: ``--populations`` needs a mode that learns (exit 2
    otherwise; where it may write: :func:`check_files`)."""
    path: Path | None = args.populations
    if path is None:
        return
    if getattr(args, "explain", None) is not None:
        raise UsageError("--explain prints one player's changes: use --populations without it")
    modes, override = replayer.mode_choice
    if override is not None:
        learning = modes.get(override).population.learns
    else:
        learning = modes.default.population.learns or any(
            mode.population.learns for mode in modes.listed.values()
        )
    if not learning:
        raise UsageError(
            "--populations: no mode learns its population ([population] window_days is 0)"
        )


def write_populations(args: argparse.Namespace, replayer: Replayer) -> None:
    """``--populations``: the learning modes' records (stream.offline.population_trace), as
    JSON lines or drawn (checked before by :func:`check_populations`)."""
    path: Path | None = args.populations
    if path is None:
        return
    records = list(trace_records(replayer.learners))
    output = populations_output(path)
    if path.suffix.lower() in PLOT_SUFFIXES:
        from stream.cli.plots import population_plot

        with written_by(args.command, output) as temporary:
            population_plot(records, temporary, title=f"Learned populations: {args.history.name}")
    else:
        with written(args.command, output) as out:
            for record in records:
                out.write(orjson.dumps(record, option=orjson.OPT_APPEND_NEWLINE))


def populations_output(path: Path | None) -> Output:
    picture = path is not None and path.suffix.lower() in PLOT_SUFFIXES
    return Output("--populations", path, PICTURE if picture else POPULATIONS)


def check_files(args: argparse.Namespace, *outputs: Output) -> None:
    """Before the history is read: no output over a file the command reads, over another
    output, or over a file that is not one of its own earlier outputs without --force
    (stream/cli/outputs.py)."""
    baseline = getattr(args, "leaderboard_change", None)
    reads = {
        "the history it reads": args.history,
        "the modes file it reads": args.modes_file,
        "the seed ratings it reads": args.seed_ratings,
        "the corrections file it reads": getattr(args, "corrections", None),
        "the baseline modes file it reads": baseline if isinstance(baseline, Path) else None,
    }
    for index, compared in enumerate(getattr(args, "compare", None) or ()):
        reads[f"the file it compares ({index + 1})"] = compared
    extra = [populations_output(args.populations)] if hasattr(args, "populations") else []
    check_outputs(reads, [*outputs, *extra], force=args.force)


def add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "history", type=existing_file, help="CSV or JSON-lines match history ('-': stdin)"
    )
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--mode", help="rate every match as this mode of the modes file")
    which.add_argument(
        "--algorithm",
        choices=sorted(ALGORITHMS),
        help="rate with this algorithm and the built-in defaults",
    )
    parser.add_argument(
        "--modes-file", type=existing_named_file, help="modes TOML (default: built-in defaults)"
    )
    parser.add_argument(
        "--seed-ratings",
        type=existing_file,
        help="JSON lines of starting states (player_id, rating, ...)",
    )
    parser.add_argument(
        "--seed-bounds",
        choices=[b.value for b in SeedBounds],
        help="a seed outside its mode's bounds: refuse it, naming its line (default), or clamp "
        "it, saying so",
    )
    parser.add_argument(
        "--seed-games",
        choices=[g.value for g in SeedGames],
        help="a seed without games: an established player (default) or a new one (0 games)",
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
        return Modes.single(built_in_mode(DEFAULT_MODE, args.algorithm)), None
    modes = offline_modes(args, args.modes_file) if args.modes_file else Modes()
    if args.mode:
        check_listed(args.command, args.mode, modes, args.modes_file)
    return modes, args.mode


def check_listed(command: str, mode: str, modes: Modes, path: Path | None) -> None:
    """``--mode`` names the mode every match is rated as. A mode the modes file rejects is
    refused; one it does not list (or any, without a modes file) is rated with the default
    rules under that name, which is said, with the closest listed name: most often a typo, but
    also how a history without modes (a CSV) is given one, so not refused."""
    if path is not None and mode in modes.listed:
        return
    listed = ", ".join(sorted(modes.listed)) or "none"
    hint = did_you_mean(mode, modes.listed)
    if path is not None and not modes.accepts(mode):
        raise UsageError(
            f"--mode {mode!r}: {path} lists no such mode and rejects unlisted modes (listed:"
            f" {listed}){hint}"
        )
    rated = (
        f"{path} lists no such mode (listed: {listed}), so every match is rated with its"
        " [default] under that name"
        if path is not None
        else "no --modes-file is given, so every match is rated with the built-in defaults"
        " under that name"
    )
    print(f"skillstream {command}: --mode {mode!r}: {rated}{hint}", file=sys.stderr)


def offline_modes(args: argparse.Namespace, path: Path) -> Modes:
    """A modes file as the offline commands read it (as a worker does)."""
    return load_modes(path)


def make_replayer(args: argparse.Namespace) -> Replayer:
    modes, override = resolve_modes(args)
    if args.seed_ratings is not None and str(args.seed_ratings) == "-" == str(args.history):
        raise UsageError("the history and --seed-ratings cannot both be read from stdin ('-')")
    return Replayer(modes, override, load_seeds(args, modes, override))


def load_seeds(args: argparse.Namespace, modes: Modes, override: str | None) -> list[SeedRating]:
    """The ``--seed-ratings`` as given, checked against the modes they start in
    (``--seed-bounds``: a refused seed stops the command with its line, each clamped one is
    reported on stderr), seeds without games as ``--seed-games`` says."""
    if not args.seed_ratings:
        for option, given in (
            ("--seed-games", args.seed_games),
            ("--seed-bounds", args.seed_bounds),
        ):
            if given is not None:
                raise UsageError(f"{option} says how seeds are taken: give --seed-ratings FILE")
        return []
    games = SeedGames(args.seed_games or SeedGames.ESTABLISHED.value)
    seeds = with_games(read_seed_ratings(args.seed_ratings), games)
    source = display_name(args.seed_ratings)
    bounds = SeedBounds(args.seed_bounds or SeedBounds.REFUSE.value)
    for note in check_seeds(seeds, modes, override, bounds, source):
        print(f"skillstream {args.command}: {note}", file=sys.stderr)
    return seeds


def seed_modes(replayer: Replayer, args: argparse.Namespace | None) -> dict[str, tuple[str, int]]:
    """The modes ``--seed-ratings`` names, each with the file and its first seed's line."""
    if args is None or not getattr(args, "seed_ratings", None):
        return {}
    source = display_name(args.seed_ratings)
    found: dict[str, tuple[str, int]] = {}
    for seed in sorted(replayer.seeds, key=lambda s: s.line):
        if seed.mode is not None:
            found.setdefault(seed.mode, (source, seed.line))
    return found


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
            path,
            modes,
            override,
            skip_bad_rows=skip,
            progress=bar.update,
            modes_source=source,
            play_order=args is not None and getattr(args, "in_play_order", False),
            seed_modes=None if replayer is None else seed_modes(replayer, args),
        )
        yield from intake
    for line in intake.report.lines():
        print(f"skillstream {label}: {line}", file=sys.stderr)


def replay_output(args: argparse.Namespace) -> Output:
    """What ``replay --out`` holds: final ratings, or what --explain or --leaderboard-change
    prints instead."""
    kind = RATINGS
    if args.explain is not None:
        kind = WORDED if args.worded else CHANGES
    elif args.leaderboard_change is not None:
        kind = LEADERBOARD_CHANGE
    if args.out is not None:
        text = kind in (WORDED, LEADERBOARD_CHANGE)
        if text != (args.out.suffix.lower() == ".txt"):
            what = "text" if text else "JSON lines"
            raise UsageError(
                f"--out {args.out}: replay writes {kind.name} here, {what}: name the file"
                f" {args.out.stem}{'.txt' if text else '.jsonl'}"
            )
    return Output("--out", args.out, kind)


def check_companions(args: argparse.Namespace) -> None:
    """An option that changes nothing without another one is refused, not ignored: the user
    asked for something the command would not do."""
    if args.leaderboard_change is None:
        for option, given in (("--board", args.board), ("--top", args.top)):
            if given is not None:
                raise UsageError(
                    f"{option} shapes --leaderboard-change's output; without it replay prints"
                    " the final ratings"
                )
    elif args.explain is not None:
        raise UsageError("--explain and --leaderboard-change print different things: give one")
    if args.worded and args.explain is None:
        raise UsageError("--worded words the changes --explain PLAYER prints: give --explain")


# How many places of a board --leaderboard-change shows by default.
TOP = 20


def cmd_replay(args: argparse.Namespace) -> int:
    check_companions(args)
    check_files(args, replay_output(args))
    replayer = make_replayer(args)
    check_populations(args, replayer)
    ledger = None
    if args.corrections is not None:
        ledger = load_ledger(args.corrections, *replayer.mode_choice)
    matches: Iterable[HistoryMatch] = stream_history(args.history, "replay", replayer, args)
    # --in-play-order: the live pipeline's order and its rule for overlapping matches.
    # Adjustments as applied, for --explain (each is a rating change of its own).
    applied: list[Applied] = []
    rated = rated_in_order(
        matches,
        replayer,
        play_order=args.in_play_order,
        ledger=ledger,
        on_adjust=lambda *adjustment: applied.append(adjustment),
    )
    if args.explain is not None:
        return _explain(args, replayer, rated, ledger, applied)
    if args.leaderboard_change is not None and not rereadable(args.history):
        raise UsageError(
            "--leaderboard-change rates the history twice: give a file, not stdin or a pipe"
        )
    apply_all(replayer, rated)
    refuse_unmatched(ledger)
    if not any(replayer.tables.values()):
        # Every row skipped, voided or rejected: nothing rated is not a result to write.
        raise UsageError(f"{display_name(args.history)}: no match was rated: nothing to write")
    if ledger is not None:
        print(f"skillstream replay: {ledger.source}: {ledger.applied()}", file=sys.stderr)
    write_populations(args, replayer)
    if args.leaderboard_change is not None:
        return _leaderboard_change(args, replayer)
    with written("replay", replay_output(args)) as out:
        for final in replayer.ratings():
            out.write(orjson.dumps(final.to_json(), option=orjson.OPT_APPEND_NEWLINE))
    return 0


def apply_all(replayer: Replayer, rated: Iterable[Rated]) -> None:
    for match, fates in rated:
        # Everyone settled by the result (nearly every match in play order): as without fates.
        if fates is None or all(f.how is Settled.RESULT for f in fates.values()):
            replayer.rate(match)
        else:
            replayer.apply_settled(match, fates)


def _leaderboard_change(args: argparse.Namespace, replayer: Replayer) -> int:
    """``--leaderboard-change [BASELINE]``: the history replayed again as it is rated today
    (the BASELINE modes file, or the same modes, and no corrections), and the boards of the
    two compared: what a re-rate would change, before it is done."""
    from stream.offline.leaderboard_change import change_lines, leaderboard_changes

    baseline_args = argparse.Namespace(**vars(args))
    if args.leaderboard_change == BUILT_IN:
        baseline_args.modes_file = None
    elif args.leaderboard_change != SAME_MODES:
        baseline_args.modes_file = args.leaderboard_change
    baseline = make_replayer(baseline_args)
    matches = stream_history(args.history, "replay", baseline, baseline_args)
    apply_all(baseline, rated_in_order(matches, baseline, play_order=args.in_play_order))
    board = args.board or BOARDS[0]
    changes = leaderboard_changes(baseline.tables, replayer.tables, board, args.top or TOP)
    with written("replay", replay_output(args)) as out:
        out.write("".join(line + "\n" for line in change_lines(changes, board)).encode())
    return 0


def _explain(
    args: argparse.Namespace,
    replayer: Replayer,
    rated: Iterable[Rated],
    ledger: Ledger | None,
    applied: list[Applied],
) -> int:
    """``--explain PLAYER``: the player's rating-changed events (JSON lines), or with
    ``--worded`` each change worded for a support agent; exit 1 when the player has none.
    Everything is rated first, so a void that voids nothing stops it before any output."""
    from stream.cache.entry import CachedRating
    from stream.cache.history import entry_of, worded
    from stream.offline.explaining import explained_changes

    player = args.explain if ledger is None else ledger.name(args.explain)
    events = list(explained_changes(rated, replayer, player, applied))
    refuse_unmatched(ledger)
    if ledger is not None:
        print(f"skillstream replay: {ledger.source}: {ledger.applied()}", file=sys.stderr)
    if not events:
        print(
            f"skillstream replay: nothing found: {args.explain!r} played no rated match",
            file=sys.stderr,
        )
        return 1
    with written("replay", replay_output(args)) as out:
        for event in events:
            if not args.worded:
                out.write(orjson.dumps(event, option=orjson.OPT_APPEND_NEWLINE))
                continue
            entry = entry_of(CachedRating.from_rating_changed(event))
            lines = [f"{event['at']} {event['mode']}:", *worded(entry, args.explain), ""]
            out.write("\n".join(lines).encode() + b"\n")
    return 0


def cmd_evaluate(args: argparse.Namespace) -> int:
    """Score the history once; ``--predictions`` is written while scoring, so a bad row stops
    the command with that file holding the predictions before it. Nothing to score is a
    mistake (exit 2), not a ``nan``. Running it again gives the same output."""
    if args.compare:
        return compare_configurations(args)
    predictions_output = Output("--predictions", args.predictions, PREDICTIONS)
    plot_output = Output("--plot", args.plot, PICTURE)
    check_files(args, predictions_output, plot_output)
    tally = Tally()
    replayer = make_replayer(args)
    check_populations(args, replayer)
    matches = tally.track(stream_history(args.history, "evaluate", replayer, args))
    scored = predictions(matches, replayer, since=args.since)
    if args.predictions:
        # Written while scoring, all at once: nothing to score leaves no file behind.
        with written("evaluate", predictions_output) as out:
            evaluation = evaluate_in_detail(write_predictions(out, scored))
            if not evaluation.overall.matches:
                raise UsageError(nothing_to_score(args, tally))
    else:
        evaluation = evaluate_in_detail(scored)
    if not evaluation.overall.matches:
        raise UsageError(nothing_to_score(args, tally))
    write_populations(args, replayer)
    if args.json:
        sys.stdout.buffer.write(
            orjson.dumps(evaluation.summary(), option=orjson.OPT_APPEND_NEWLINE)
        )
    else:
        print("\n".join(evaluation_lines(evaluation)))
    if args.plot:
        from stream.cli.plots import calibration_plot

        with written_by("evaluate", plot_output) as temporary:
            calibration_plot(evaluation, temporary, title=f"Calibration: {args.history.name}")
    return 0


def nothing_to_score(args: argparse.Namespace, tally: Tally) -> str:
    name = args.history
    if not tally.matches:
        return f"{name} has no matches: nothing to score"
    if args.since is not None and tally.last_at < args.since:
        return (
            f"no match of {name} is on or after --since {when(args.since)} "
            f"(its last match is at {when(tally.last_at)})"
        )
    return f"every scored match of {name} has quitters: nothing to score"


def when(at: float) -> str:
    """Epoch seconds as an ISO-8601 UTC date, or date and time when not at midnight."""
    moment = dt.datetime.fromtimestamp(at, dt.UTC)
    if moment.time() == dt.time():
        return moment.date().isoformat()
    return moment.isoformat().replace("+00:00", "Z")


def compare_configurations(args: argparse.Namespace) -> int:
    """``evaluate --compare [A] B``: modes files are replayed, predictions files read.

    With one file, A is the configuration the other options name. Every replay reads the
    history again (so not stdin). A predictions file that disagrees with the history's results
    or shares no prediction with it stops the command with one line naming it."""
    given: list[Path] = args.compare
    if len(given) > 2:
        raise UsageError(f"--compare takes one or two files, got {len(given)}")
    if len(given) == 2 and (args.modes_file or args.algorithm):
        raise UsageError("--compare A B compares A and B: drop --modes-file and --algorithm")
    if args.predictions or args.plot or args.populations:
        raise UsageError(
            "--compare prints a comparison only: use --predictions, --plot or --populations alone"
        )
    if not rereadable(args.history):
        raise UsageError(
            "--compare reads the history once per side: give a file, not stdin or a pipe"
        )
    own_modes = resolve_modes(args)
    seeds = load_seeds(args, *own_modes)
    tally = Tally()

    def replayed(modes: Modes, override: str | None) -> list[Prediction]:
        replayer = Replayer(modes, override, seeds)
        matches = tally.track(stream_history(args.history, "evaluate", replayer, args))
        return list(predictions(matches, replayer, since=args.since))

    scored: list[Prediction] | None = None
    sides: list[Side] = []
    if len(given) == 1:
        scored = replayed(*own_modes)
        sides.append(side_of(own_configuration(args), scored))
    for path in given:
        if path.suffix.lower() == ".toml":
            modes = offline_modes(args, path)
            if args.mode:
                check_listed(args.command, args.mode, modes, path)
            own = replayed(modes, args.mode)
            scored = own if scored is None else scored
            sides.append(side_of(str(path), own))
    if scored is None:  # two predictions files: the history still says what is scored
        scored = replayed(*own_modes)
    if not scored:
        raise UsageError(nothing_to_score(args, tally))
    for index, path in enumerate(given):
        if path.suffix.lower() == ".jsonl":
            position = index + (len(given) == 1)
            sides.insert(position, side_from_file(str(path), read_predictions(path), scored))
    try:
        comparison = compare(scored, sides[0], sides[1])
    except ValueError as exc:
        raise UsageError(f"{exc}: do the row numbers refer to {args.history}?") from None
    if args.json:
        sys.stdout.buffer.write(
            orjson.dumps(comparison.as_dict(), option=orjson.OPT_APPEND_NEWLINE)
        )
    else:
        print("\n".join(comparison_lines(comparison)))
    return 0


def own_configuration(args: argparse.Namespace) -> str:
    if args.algorithm:
        return f"--algorithm {args.algorithm}"
    return str(args.modes_file) if args.modes_file else "built-in defaults"


def cmd_tune(args: argparse.Namespace) -> int:
    """Search, then print the configuration to use as a modes-file section (stdout) and the
    verdict and warnings (stderr). Reads the history once per trial, so not stdin; the same
    arguments give the same output."""
    if not rereadable(args.history):
        raise UsageError("tune reads the history several times: give a file, not stdin or a pipe")
    modes, override = resolve_modes(args)
    base = modes.get(override or DEFAULT_MODE)
    seeds = load_seeds(args, modes, override)
    split: float | None = args.split
    total = Tally()
    before = Tally()
    intake = Intake(args.history, modes, override, modes_source=own_configuration(args))
    for match in total.track(intake):
        if split is not None and match.at < split:
            before.add(match)
    for line in intake.report.lines():
        print(f"skillstream tune: {line}", file=sys.stderr)
    searched = before.matches if split is not None else total.matches
    skip = int(searched * (1.0 - args.holdout))
    if split is not None and not searched:
        raise UsageError(f"no match of {args.history} is before --split: nothing to search on")
    if split is not None and searched == total.matches:
        raise UsageError(f"no match of {args.history} is on or after --split: nothing to judge on")
    if searched - skip < 1:
        raise UsageError("the held-out tail is empty: use a longer history or a larger --holdout")
    knobs = knobs_for(base.algorithm.name, teams=total.largest_team > 1, uneven=total.uneven > 0)
    plan = Plan(skip, split, args.rounds)
    planned = planned_trials(knobs, plan)
    # Counted in matches replayed (each trial replays the searched part): a true rate, and an
    # ETA from the planned trials (an upper bound: a search that settles early stops sooner).
    with Progress(planned * searched, "tune", unit="matches") as bar:
        trials = 0

        def count(trial: Trial) -> None:
            nonlocal trials
            trials += 1
            bar.update(trials * searched)

        result = tune(
            lambda: Intake(args.history, modes, override),
            base,
            plan,
            knobs,
            seeds,
            count,
            pending=modes.pending(base.name),
            jobs=args.jobs,
        )
        # A search that settles early skips the rest of the plan: the bar ends at what ran.
        bar.total = trials * searched or None
    for warning in result.warnings:
        print(f"skillstream tune: warning: {warning}", file=sys.stderr)
    if split is None:
        search = f"the last {args.holdout:.0%} of the history"
        verdict = "the same matches"
    else:
        search = f"the last {args.holdout:.0%} of the matches before {when(split)}"
        verdict = f"the matches from {when(split)} on"
    section = f"modes.{override}" if override else "default"
    text = tuned_toml(result, section, args.history.name, search, verdict)
    sys.stdout.write(text)
    # The verdict again where a user who sends the section to a file still reads it.
    judged = next(line for line in text.splitlines() if line.startswith("# verdict on "))
    print(f"skillstream tune: {judged[2:]}", file=sys.stderr)
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    replay = add_command(sub, "replay", "rate a match history offline", cmd_replay)
    add_common(replay)
    add_on_error(replay)
    replay.add_argument(
        "--out",
        type=output_file(".jsonl", ".txt"),
        help="output file (default: stdout): FILE.jsonl, or FILE.txt for --worded and"
        " --leaderboard-change, which print text",
    )
    replay.add_argument(
        "--in-play-order",
        action="store_true",
        help="apply the matches by start (JSON lines with started_at; else by time), then match "
        "id, as the live pipeline does, instead of in file order; with starts, overlapping "
        "matches are settled by the live rule (abandonment, timeout)",
    )
    replay.add_argument(
        "--corrections",
        type=existing_file,
        metavar="FILE",
        help="JSON lines of corrections (void, adjust, erase) to apply: the ratings as if the "
        "voided matches had never been played (docs/operations.md#correcting-the-past)",
    )
    replay.add_argument(
        "--leaderboard-change",
        nargs="?",
        const=SAME_MODES,
        type=_baseline,
        metavar="BASELINE",
        help="print how the boards change instead of the ratings: this replay (its modes file, "
        "its --corrections) against the history rated with the BASELINE modes file ('built-in' "
        "for the built-in defaults; default: the same) and no corrections: a re-rate's dry run",
    )
    replay.add_argument(
        "--board",
        choices=BOARDS,
        help=f"with --leaderboard-change: the board to show (default {BOARDS[0]})",
    )
    replay.add_argument(
        "--top",
        type=positive_int,
        help=f"with --leaderboard-change: how many places to show (default {TOP})",
    )
    replay.add_argument(
        "--explain",
        metavar="PLAYER",
        help="print this player's rating changes instead of the final ratings: the "
        "rating-changed events the worker publishes, each with its terms ('why')",
    )
    replay.add_argument(
        "--worded",
        action="store_true",
        help="with --explain: each change worded for a support agent instead of JSON",
    )
    add_populations(replay)
    add_force(replay)

    ev = add_command(sub, "evaluate", "how well ratings predict a history", cmd_evaluate)
    add_common(ev)
    ev.add_argument(
        "--since", type=iso_date, metavar="DATE", help="score only matches from this date on"
    )
    ev.add_argument("--json", action="store_true", help="print one JSON object")
    add_on_error(ev)
    ev.add_argument(
        "--plot",
        type=plot_file,
        metavar="FILE.png",
        help="write calibration diagrams with breakdowns (FILE.png, .svg or .pdf)",
    )
    ev.add_argument(
        "--predictions",
        type=output_file(".jsonl"),
        metavar="FILE.jsonl",
        help="write one JSON line per scored prediction (row, played_at, p, actual, ...)",
    )
    ev.add_argument(
        "--compare",
        nargs="+",
        metavar="FILE",
        type=existing_file_ending(".toml", ".jsonl"),
        help="A [B]: paired comparison of two modes files (.toml) or predictions files "
        "(.jsonl); with one file, this configuration is A",
    )
    add_populations(ev)
    add_force(ev)

    tn = add_command(sub, "tune", "search parameters; keep only changes beyond noise", cmd_tune)
    add_common(tn)
    tn.add_argument(
        "--holdout",
        type=fraction,
        default=0.2,
        metavar="FRACTION",
        help="fraction of the searched matches scored (default 0.2)",
    )
    tn.add_argument(
        "--split",
        type=iso_date,
        metavar="DATE",
        help="search on matches before this date; judge the winner on those from it on",
    )
    tn.add_argument(
        "--rounds",
        type=positive_int,
        default=2,
        metavar="N",
        help="coordinate-descent rounds (default 2)",
    )
    tn.add_argument(
        "--jobs",
        type=positive_int,
        default=os.cpu_count() or 1,
        metavar="N",
        help="processes that replay a knob's candidate values side by side (default: one per"
        " core; the result is the same for any N)",
    )
