"""Reading a corrections file: JSON lines, one correction each (stream.corrections.records),
as ``skillstream corrections new`` prints them and the audit topic holds them."""

from __future__ import annotations

from pathlib import Path

import orjson

from stream.corrections.records import Correction, parse_correction
from stream.history.model import HistoryError
from stream.history.source import BOM, display_name, open_binary

__all__ = ["read_corrections"]

_MAX_LINE = 4 * 1024 * 1024  # a void of 100,000 match ids fits


def read_corrections(path: Path | str) -> list[tuple[int, Correction]]:
    """Every correction of the file with its line number, in file order. Blank lines are
    skipped. HistoryError names the line of the first problem: not JSON, a field that is
    wrong, an id used twice; a file without a correction is an error too."""
    name = display_name(path)
    found: list[tuple[int, Correction]] = []
    ids: dict[str, int] = {}
    with open_binary(path) as handle:
        for number, read in enumerate(iter(lambda: handle.readline(_MAX_LINE + 2), b""), start=1):
            if len(read) == _MAX_LINE + 2 and not read.endswith(b"\n"):
                raise HistoryError(name, number, f"line is longer than {_MAX_LINE:,} bytes")
            text = read[len(BOM) :] if number == 1 and read.startswith(BOM) else read
            text = text.strip()
            if not text:
                continue
            try:
                correction = parse_correction(orjson.loads(text))
            except orjson.JSONDecodeError as exc:
                raise HistoryError(name, number, f"not valid JSON: {exc}") from None
            except ValueError as exc:
                raise HistoryError(name, number, str(exc)) from None
            earlier = ids.get(correction.audit.id)
            if earlier is not None:
                raise HistoryError(
                    name, number, f"correction id {correction.audit.id!r} is used on line {earlier}"
                )
            ids[correction.audit.id] = number
            found.append((number, correction))
    if not found:
        raise HistoryError(name, None, "holds no correction")
    return found
