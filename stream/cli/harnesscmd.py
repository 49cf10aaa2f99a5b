"""What `skillstream chaos` and `skillstream soak` share: a harness run with a progress bar and
its lines, the report as text or JSON, and one exit code rule: 0 if every check passed, 1 if one
failed, 2 if an option is wrong or the run could not start (one line on stderr, no traceback);
the configuration read from the options named for its fields, and the options in seconds.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import fields
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

import orjson

from stream.config.stores import STORES

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

C = TypeVar("C")
D = TypeVar("D", bound="DataclassInstance")

# A line for the person watching; (done, total) for the progress bar.
Emit = Callable[[str], None]
Advance = Callable[[int, int], None]


class HarnessReport(Protocol):
    @property
    def passed(self) -> bool: ...

    def text(self) -> str: ...

    def to_json(self) -> dict[str, Any]: ...


def run_harness(
    name: str,
    args: argparse.Namespace,
    make_config: Callable[[], C],
    run: Callable[[C, Emit, Advance], HarnessReport],
    unit: str,
) -> int:
    """Build the configuration (a ValueError names the wrong option: exit 2), run it with a
    progress bar on stderr and its lines on stdout (on stderr with ``--json``, so that stdout
    carries only the report), print the report, and return the exit code."""
    from stream.cli.progress import Progress
    from stream.local.stack import StackError
    from stream.local.workers import WorkerError

    try:
        config = make_config()
    except ValueError as exc:
        print(f"skillstream {name}: error: {exc}", file=sys.stderr)
        return 2
    lines = sys.stderr if args.json else sys.stdout
    try:
        with Progress(None, name, unit=unit) as bar:

            def advance(done: int, total: int) -> None:
                bar.total = total
                bar.update(done)

            def emit(line: str) -> None:
                if bar.enabled:
                    # Clear the bar's line first: both are on the terminal.
                    sys.stderr.write("\r\x1b[K")
                lines.write(line + "\n")
                lines.flush()

            report = run(config, emit, advance)
    except ValueError as exc:
        print(f"skillstream {name}: error: {exc}", file=sys.stderr)
        return 2
    except (StackError, WorkerError) as exc:
        print(f"skillstream {name}: error: could not start: {exc}", file=sys.stderr)
        return 2
    if args.json:
        sys.stdout.write(orjson.dumps(report.to_json()).decode() + "\n")
    else:
        print(report.text())
    return 0 if report.passed else 1


def add_common(parser: argparse.ArgumentParser) -> None:
    """The options both harnesses take: the store, the workers' logs, JSON output."""
    parser.add_argument(
        "--store",
        choices=list(STORES),
        default="memory",
        help="the workers' table store (SKILLSTREAM_STORE; default memory)",
    )
    parser.add_argument(
        "--keep-logs", action="store_true", help="keep the workers' log files and print paths"
    )
    parser.add_argument("--json", action="store_true", help="print the report as one JSON object")


def config_from_args(kind: type[D], args: argparse.Namespace, **given: Any) -> D:
    """A harness's configuration: each field of ``kind`` that an option sets (``--team-size``
    sets ``team_size``), unless ``given`` names it (an option's value converted); the fields
    no option sets keep their defaults."""
    named = {f.name: getattr(args, f.name) for f in fields(kind) if hasattr(args, f.name)}
    return kind(**{**named, **given})


def add_seconds(parser: argparse.ArgumentParser, option: str, default: float, help: str) -> None:
    """An option in seconds; its help ends with its default, so the two cannot disagree."""
    parser.add_argument(
        option, type=float, default=default, metavar="SECONDS", help=f"{help} (default {default:g})"
    )
