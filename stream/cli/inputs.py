"""`skillstream inputs export`: the retained match-started and match-finished as a history file
(stream/history/retained.py), for `replay --in-play-order`, `--corrections` and
`--leaderboard-change` on what the deployment holds."""

from __future__ import annotations

import argparse
import asyncio
import sys

from stream.cli.arguments import add_force, output_file
from stream.cli.environment import settings_or_none
from stream.cli.outputs import HISTORY, Output, check_outputs, written
from stream.cli.progress import Progress, counting


def cmd_export(args: argparse.Namespace) -> int:
    from stream.history.retained import ExportReport, export_lines, read_inputs

    settings = settings_or_none("inputs export")
    if settings is None:
        return 2
    output = Output("--out", args.out, HISTORY)
    check_outputs({}, [output], force=args.force)
    with Progress(None, "reading the retained inputs", unit="records") as bar:
        starts, finishes = asyncio.run(read_inputs(settings, counting(bar)))
    report = ExportReport()
    with written("inputs export", output) as out:
        for record in export_lines(starts, finishes, settings.worker.limits, report):
            out.write(record)
    for line in report.lines():
        print(f"skillstream inputs export: {line}", file=sys.stderr)
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    inputs = sub.add_parser("inputs", help="the deployment's retained inputs")
    actions = inputs.add_subparsers(dest="action", required=True, metavar="ACTION")
    export = actions.add_parser(
        "export",
        help="the retained match-started and match-finished as a JSON-lines history "
        "(refused when retention has removed any)",
    )
    export.add_argument("--out", type=output_file(".jsonl"), help="FILE.jsonl (default: stdout)")
    add_force(export)
    export.set_defaults(func=cmd_export)
