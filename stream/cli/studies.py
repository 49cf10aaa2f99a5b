"""`skillstream study newcomers|strategies HISTORY`: the two studies behind the built-in
defaults (docs/simulator.md), printed as tables. The studies themselves are offline library code
(stream/offline/newcomers.py, stream/offline/strategies.py); this module only reads the command
line and prints. A malformed history stops either with the reader's one-line error (exit 2).
"""

from __future__ import annotations

import argparse

from stream.cli.arguments import existing_file, int_at_least, rereadable
from stream.errors import UserError


def cmd_newcomers(args: argparse.Namespace) -> int:
    from stream.config.modes import Modes
    from stream.history import read_history
    from stream.offline.newcomers import newcomer_calibration
    from stream.offline.replayer import Replayer

    table = newcomer_calibration(read_history(args.history), Replayer(Modes()), args.matches)
    print("match  predictions  predicted  observed  observed-predicted")
    for row in table:
        n = max(row.predictions, 1)
        print(
            f"{row.match:>5}  {row.predictions:>11}  {row.predicted / n:>9.3f}"
            f"  {row.observed / n:>8.3f}  {row.gap:>+18.3f}"
        )
    return 0


def cmd_strategies(args: argparse.Namespace) -> int:
    from stream.offline.strategies import compare

    if not rereadable(args.history):
        raise UserError("the history is read once per strategy: give a file, not stdin or a pipe")
    rows = compare(args.history)
    print("strategy            log_loss  minus composite_team  standard_error  days  verdict")
    for run, diff in rows:
        print(
            f"{run.strategy.value:<19} {run.log_loss:.5f}  {diff.mean:+.5f}"
            f"              {diff.standard_error:.5f}         {diff.clusters:<5} {diff.verdict}"
        )
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    study = sub.add_parser(
        "study", help="the studies behind the built-in defaults (docs/simulator.md)"
    )
    studies = study.add_subparsers(dest="action", required=True, metavar="STUDY")
    newcomers = studies.add_parser(
        "newcomers",
        help="how well newcomers' early matches are predicted: for each player's 1st, 2nd, ..."
        " match, the mean predicted and observed score under the built-in defaults",
    )
    newcomers.add_argument("history", type=existing_file, help="a history file, or - for stdin")
    newcomers.add_argument(
        "--matches",
        type=int_at_least(1, 1000),
        default=10,
        help="rows: the 1st to Nth match, at most 1,000 (default 10)",
    )
    newcomers.set_defaults(func=cmd_newcomers)
    strategies = studies.add_parser(
        "strategies",
        help="the team strategies' log loss on one history, each paired with composite_team's"
        " (standard error clustered by day)",
    )
    strategies.add_argument(
        "history", type=existing_file, help="a history file (read per strategy)"
    )
    strategies.set_defaults(func=cmd_strategies)
