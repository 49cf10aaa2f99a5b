"""Argument types that check a value when it is parsed, so mistakes stop a command up front.

Each is an ``argparse`` ``type=``: a bad value raises ``argparse.ArgumentTypeError`` with a
message naming the value, which :class:`OneLineParser` prints as one line (exit code 2).
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import NoReturn

from stream.errors import did_you_mean


class OneLineParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (``PROG: error: MESSAGE``), exit code 2.

    argparse prints the whole usage block before the error; a user who mistyped one value
    wants to read what was wrong, and ``--help`` still shows the usage.
    """

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message}{_choice_hint(message)}\n")

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        """As argparse's, but an unknown option is named by the (sub)command that was given,
        with the closest option it has: ``skillstream replay: error: unrecognized arguments:
        --modes-fle; did you mean '--modes-file'?``."""
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            parser = _deepest(self, parsed)
            options = [o for action in parser._actions for o in action.option_strings]
            first = next((e for e in extras if e.startswith("-")), extras[0])
            hint = did_you_mean(first.split("=", 1)[0], options) if first.startswith("-") else ""
            parser.error(f"unrecognized arguments: {' '.join(extras)}{hint}")
        return parsed


def _choice_hint(message: str) -> str:
    """The closest choice, after argparse's "invalid choice: 'X' (choose from ...)"."""
    found = re.search(r"invalid choice: '(.*?)' \(choose from (.*)\)$", message)
    if found is None:
        return ""
    choices = re.findall(r"'([^']*)'", found.group(2))
    return did_you_mean(found.group(1), choices)


def _deepest(
    parser: argparse.ArgumentParser, parsed: argparse.Namespace
) -> argparse.ArgumentParser:
    """The subcommand's own parser (``replay``, ``corrections void``) that ``parsed`` went
    through: the one whose options an unknown one is compared with."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            chosen = getattr(parsed, action.dest, None)
            sub = action.choices.get(chosen) if isinstance(chosen, str) else None
            if isinstance(sub, argparse.ArgumentParser):
                return _deepest(sub, parsed)
    return parser


# The refusals below echo the argument stripped: float() accepts surrounding whitespace, form
# feeds and line separators included, which would otherwise break the one-line message.
def _check(condition: bool, message: str) -> None:
    if not condition:
        raise argparse.ArgumentTypeError(message)


def existing_file(text: str) -> Path:
    """A readable file, or ``-`` for standard input."""
    path = Path(text)
    if text == "-":
        return path
    _check(path.exists(), f"no such file: {text}")
    _check(not path.is_dir(), f"{text} is a directory, not a file")
    _check(os.access(path, os.R_OK), f"{text} is not readable")
    return path


def rereadable(path: Path) -> bool:
    """Whether ``path`` can be read more than once: a regular file, not ``-`` (stdin) or a
    pipe named as a path (``/dev/stdin``, ``<(...)``), which the first reading empties."""
    return str(path) != "-" and path.is_file()


def existing_named_file(text: str) -> Path:
    """An :func:`existing_file` that is not stdin: a file read by name (a modes file)."""
    _check(text != "-", "must be a file, not - (stdin)")
    return existing_file(text)


def existing_file_ending(*suffixes: str) -> Callable[[str], Path]:
    """An :func:`existing_file` (not stdin) whose name ends with one of ``suffixes``."""

    def parse(text: str) -> Path:
        _check(
            Path(text).suffix.lower() in suffixes,
            f"{text}: the file name must end with {' or '.join(suffixes)}",
        )
        return existing_file(text)

    return parse


def output_file(*suffixes: str) -> Callable[[str], Path]:
    """A file that can be written: its folder exists and is writable, it is not a folder, and
    (when ``suffixes`` are given) its name ends with one of them."""

    def parse(text: str) -> Path:
        path = Path(text)
        _check(not path.is_dir(), f"{text} is a directory, not a file")
        if suffixes:
            # ".jsonl" alone is a hidden file without a suffix, not a nameless .jsonl file.
            _check(
                path.name.lower() not in suffixes,
                f"{text}: the file needs a name before its suffix ({path.parent / 'out'}"
                f"{path.name})",
            )
            _check(
                path.suffix.lower() in suffixes,
                f"{text}: the file name must end with {' or '.join(suffixes)}",
            )
        folder = path.parent if str(path.parent) else Path(".")
        _check(folder.is_dir(), f"{text}: the folder {folder} does not exist")
        _check(os.access(folder, os.W_OK), f"{text}: the folder {folder} is not writable")
        _check(not path.exists() or os.access(path, os.W_OK), f"{text} is not writable")
        return path

    return parse


def int_at_least(low: int, high: int | None = None) -> Callable[[str], int]:
    """A whole number of at least ``low`` (and at most ``high``, when given)."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        _check(value >= low, f"must be at least {low}, got {value}")
        if high is not None:
            _check(value <= high, f"must be at most {high:,}, got {value}")
        return value

    return parse


positive_int = int_at_least(1)
non_negative_int = int_at_least(0)


def port_or_zero(text: str) -> int:
    """A TCP port (1-65535), or 0 for one the system picks."""
    port = non_negative_int(text)
    _check(port <= 65535, f"a port is at most 65535, got {port}")
    return port


def fraction(text: str) -> float:
    """A number strictly between 0 and 1."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    _check(0.0 < value < 1.0, f"must be between 0 and 1 (exclusive), got {text.strip()}")
    return value


def iso_date(text: str) -> float:
    """An ISO-8601 date or date-time (UTC unless it says otherwise), as epoch seconds."""
    try:
        when = dt.datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an ISO-8601 date: {text!r}") from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    return when.timestamp()


def finite_float(text: str) -> float:
    """A finite number (no inf or nan)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    _check(math.isfinite(value), f"must be a finite number, got {text.strip()}")
    return value


def non_negative_float(text: str) -> float:
    """A finite number of at least 0."""
    value = finite_float(text)
    _check(value >= 0.0, f"must not be negative, got {text.strip()}")
    return value


def positive_float(text: str) -> float:
    """A finite number above 0."""
    value = finite_float(text)
    _check(value > 0.0, f"must be above 0, got {text.strip()}")
    return value


def probability(text: str) -> float:
    """A number from 0 to 1, both included."""
    value = finite_float(text)
    _check(0.0 <= value <= 1.0, f"must be between 0 and 1, got {text.strip()}")
    return value


def output_folder(text: str) -> Path:
    """A folder to write into: it exists and is writable, or it can be created."""
    path = Path(text)
    _check(not path.exists() or path.is_dir(), f"{text} is a file, not a folder")
    existing = path
    while not existing.exists():
        existing = existing.parent
    _check(existing.is_dir(), f"{text}: {existing} is a file, not a folder")
    _check(os.access(existing, os.W_OK), f"{text}: the folder {existing} is not writable")
    return path


def team_sizes(text: str) -> tuple[int, ...]:
    """Two or more whole numbers of at least 1, separated by commas or 'v': ``2,3`` or ``2v3``."""
    parts = text.replace("v", ",").split(",")
    _check(
        len(parts) >= 2 and all(part.strip().isdigit() for part in parts),
        f"expected two or more team sizes such as 2,3 or 2v3, got {text!r}",
    )
    sizes = tuple(int(part) for part in parts)
    _check(min(sizes) >= 1, f"every team needs a player, got {text!r}")
    return sizes


def size_range(text: str) -> tuple[int, int]:
    """The fewest and most players a team has, ``1-10``: whole numbers, 1 <= fewest <= most."""
    parts = text.split("-")
    _check(
        len(parts) == 2 and all(part.strip().isdigit() for part in parts),
        f"expected the fewest and most players a side, such as 1-10, got {text!r}",
    )
    low, high = (int(part) for part in parts)
    _check(1 <= low <= high, f"expected 1 <= fewest <= most, got {text!r}")
    return low, high


def add_force(parser: argparse.ArgumentParser) -> None:
    """``--force``: the one way to replace an existing file that is not one of the command's
    earlier outputs (stream/cli/outputs.py)."""
    parser.add_argument(
        "--force",
        action="store_true",
        help="replace an existing output file that is not one of this command's earlier "
        "outputs (never a file the command reads)",
    )


def add_jsonl_out(parser: argparse.ArgumentParser) -> None:
    """``--out FILE.jsonl`` (without it: stdout), and :func:`add_force` to replace a file."""
    parser.add_argument("--out", type=output_file(".jsonl"), help="FILE.jsonl (default: stdout)")
    add_force(parser)
