"""`skillstream inputs export`: the retained match-started and match-finished as a history file
(stream/history/retained.py), for `replay --in-play-order`, `--corrections` and
`--leaderboard-change` on what the deployment holds."""

from __future__ import annotations

import argparse
import asyncio
import sys

from stream.cli.arguments import add_jsonl_out
from stream.cli.environment import settings_and_out
from stream.cli.outputs import HISTORY, written
from stream.cli.progress import Progress, counting
from stream.cli.subcommands import add_actions


def cmd_export(args: argparse.Namespace) -> int:
    from stream.history.retained import ExportReport, export_lines, read_inputs

    setup = settings_and_out("inputs export", args, HISTORY)
    if setup is None:
        return 2
    settings, output = setup
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
    actions = add_actions(sub, "inputs", "the deployment's retained inputs")
    export = actions.add_parser(
        "export",
        help="the retained match-started and match-finished as a JSON-lines history "
        "(refused when retention has removed any)",
    )
    add_jsonl_out(export)
    export.set_defaults(func=cmd_export)
