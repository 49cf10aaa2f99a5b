"""Opening history and seed files (or stdin) as buffered binary streams."""

from __future__ import annotations

import io
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import cast

from stream.history.model import HistoryError

STDIN = "-"
BOM = b"\xef\xbb\xbf"


def display_name(path: Path | str) -> str:
    return "<stdin>" if str(path) == STDIN else str(path)


def is_stdin(path: Path | str) -> bool:
    return str(path) == STDIN


@contextmanager
def open_binary(path: Path | str) -> Iterator[io.BufferedReader]:
    """Open ``path`` for buffered binary reading; ``-`` is stdin, which is left open."""
    if is_stdin(path):
        yield cast(io.BufferedReader, sys.stdin.buffer)
        return
    try:
        # Not a with-statement: an OSError from the body must not be reported as "cannot open".
        handle = open(path, "rb")  # noqa: SIM115
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise HistoryError(display_name(path), None, f"cannot open: {reason}") from None
    with handle:
        yield handle


def first_utf8_error(path: Path | str) -> tuple[int, str] | None:
    """Line number and reason of the first line that is not UTF-8, by a second binary pass.

    Text streams decode in chunks, so the error surfaces lines before or after the bad byte;
    only on that error path is the file read again to name the exact line.
    """
    if is_stdin(path):
        return None
    try:
        with open(path, "rb") as handle:
            for number, line in enumerate(handle, start=1):
                try:
                    line.decode("utf-8")
                except UnicodeDecodeError as exc:
                    return number, f"not UTF-8 text (byte {line[exc.start]:#04x})"
    except OSError:
        return None
    return None
