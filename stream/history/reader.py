"""Streaming reader for offline match histories: two-player CSV or JSON lines.

The format is detected from the content, not the file name: a first non-blank character ``{``
means JSON lines of match-finished events, anything else a CSV with a header. Both are read
row by row in bounded memory, so million-row exports work.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import orjson

from stream.events import (
    DEFAULT_LIMITS,
    FINISHED_FIELDS,
    MAX_EPOCH_MS,
    MIN_EPOCH_MS,
    EventError,
    decode_match_finished,
    describe_value,
    parse_time,
)
from stream.history.model import HistoryError, HistoryMatch, new_history_match
from stream.history.source import BOM, display_name, first_utf8_error, is_stdin, open_binary

if TYPE_CHECKING:
    from _csv import Reader

# Called with (matches read so far, bytes read so far).
Progress = Callable[[int, int], None]
# Called with each bad row's error when the caller skips bad rows instead of stopping.
OnBadRow = Callable[[HistoryError], None]
# Called with a JSON line's number and the names of the fields it carries that skillstream does
# not read (stream.events.FINISHED_FIELDS, and started_at).
OnUnknownFields = Callable[[int, tuple[str, ...]], None]
# A history's match-finished lines may also say when the match started.
HISTORY_FIELDS = FINISHED_FIELDS | {"started_at"}

CSV_COLUMNS = ("played_at", "player_a", "player_b", "score_a")
CSV_OPTIONAL = ("mode",)
# A CSV row has no match id: it gets this prefix and its line number, which never repeat.
CSV_ID_PREFIX = "row-"

# How often (in rows) to report progress: often enough for a smooth bar, rare enough to cost
# nothing on the hot path.
PROGRESS_EVERY = 4096

# A legal row has at most 5 fields of at most csv.field_size_limit() (131072) characters, so
# no legal physical line comes near this; reading lines in pieces of this size bounds memory
# even for a file without newlines, and a split line then fails the field-size or field-count
# check instead of being accepted.
_MAX_LINE_CHARS = 4 << 20

_EMPTY: frozenset[str] = frozenset()
_WIN = (0, 1)
_DRAW = (0, 0)
_LOSS = (1, 0)
_SCORES = {"1": _WIN, "1.0": _WIN, "0.5": _DRAW, ".5": _DRAW, "0": _LOSS, "0.0": _LOSS}
_SCORE_VALUES = {1.0: _WIN, 0.5: _DRAW, 0.0: _LOSS}
_EPOCH = datetime(1970, 1, 1)
_EPOCH_UTC = datetime(1970, 1, 1, tzinfo=UTC)
_EMPTY_FILE = (
    "file is empty (expected a CSV with the header played_at,player_a,player_b,score_a "
    "or JSON lines of match-finished events)"
)


def read_history(
    path: Path | str,
    progress: Progress | None = None,
    on_bad_row: OnBadRow | None = None,
    on_unknown_fields: OnUnknownFields | None = None,
) -> Iterator[HistoryMatch]:
    """Yield the matches of a history file in file order; ``-`` reads stdin.

    CSV: a header naming ``played_at,player_a,player_b,score_a`` and optionally ``mode``, in
    any order (other columns are an error, so a typo is not silently ignored). ``score_a`` is
    player A's score: 1 (win), 0.5 (draw) or 0 (loss). ``played_at`` is ISO-8601 or integer
    epoch milliseconds; an ISO time WITHOUT a zone is taken as UTC, because spreadsheet and
    database exports often drop the zone (live events, by contrast, must carry one). Each CSV
    match gets the id ``row-<line>``. An empty ``mode`` cell means the default mode.

    JSON lines: one match-finished event per line (see ``stream.events``), with ``teams``
    required since a history has no match-started events. Blank lines are skipped.

    ``progress``, if given, is called with the number of matches read and the approximate
    number of bytes consumed so far, every few thousand rows and once at the end (never for
    stdin). Matches are not sorted or checked for order: that is the caller's concern.

    A bad row raises :class:`HistoryError` naming the file and the line, unless ``on_bad_row``
    is given: then the error is passed to it and reading goes on with the next row. Problems
    with the file as a whole (missing, empty, a bad header, not UTF-8, an unclosed quote that
    swallows the rest of a CSV) always raise.

    ``on_unknown_fields``, if given, is called for each JSON line that carries fields no
    reader reads (a misspelt ``quitters`` would otherwise rate its player as a plain loss with
    nothing said); the line is read as if they were absent.
    """
    name = display_name(path)
    if is_stdin(path):
        progress = None
    with open_binary(path) as handle:
        if not handle.seekable():
            # A pipe named as a path (/dev/stdin, <(...)): no position to read progress from.
            progress = None
        head = handle.peek(256)
        if head.startswith(BOM):
            head = head[len(BOM) :]
        # Blank lines beyond the peeked bytes fall through to CSV, whose reader skips them.
        if head.lstrip().startswith(b"{"):
            yield from _read_jsonl(handle, name, progress, on_bad_row, on_unknown_fields)
        else:
            yield from _read_csv(handle, path, name, progress, on_bad_row)


# --- JSON lines --------------------------------------------------------------------------------


def _read_jsonl(
    handle: io.BufferedReader,
    name: str,
    progress: Progress | None,
    on_bad_row: OnBadRow | None,
    on_unknown_fields: OnUnknownFields | None,
) -> Iterator[HistoryMatch]:
    limits = DEFAULT_LIMITS
    # Room for the line ending, so an event of exactly max_bytes still fits.
    piece = limits.max_bytes + 2
    consumed = 0
    number = 0
    count = 0
    while True:
        raw = handle.readline(piece)
        if not raw:
            break
        number += 1
        consumed += len(raw)
        try:
            match = _jsonl_match(raw, number, name, handle, piece, on_unknown_fields)
        except HistoryError as exc:
            if on_bad_row is None:
                raise
            on_bad_row(exc)
            continue
        if match is None:
            continue
        yield match
        count += 1
        if progress is not None and count % PROGRESS_EVERY == 0:
            progress(count, consumed)
    if progress is not None:
        progress(count, consumed)


def _jsonl_match(
    raw: bytes,
    number: int,
    name: str,
    handle: io.BufferedReader,
    piece: int,
    on_unknown_fields: OnUnknownFields | None,
) -> HistoryMatch | None:
    """The match on one line (None for a blank line); HistoryError names the line."""
    limits = DEFAULT_LIMITS
    if len(raw) == piece and not raw.endswith(b"\n"):
        # Read past the rest of the line, so that a caller who skips it resumes on the next.
        while raw and not raw.endswith(b"\n"):
            raw = handle.readline(piece)
        raise HistoryError(name, number, f"line is longer than {limits.max_bytes} bytes")
    if number == 1 and raw.startswith(BOM):
        raw = raw[len(BOM) :]
    raw = raw.strip()
    if not raw:
        return None
    try:
        event = decode_match_finished(raw, limits)
    except EventError as exc:
        raise HistoryError(name, number, str(exc)) from None
    if event.teams is None:
        raise HistoryError(
            name, number, "teams: required in a history (there is no match-started event)"
        )
    started_at = None
    if b'"started_at"' in raw:
        # Optional in a history (live events keep it in match-started): the order of play.
        value = orjson.loads(raw).get("started_at")
        if value is not None:
            try:
                started_at = parse_time(value)
            except EventError as exc:
                raise HistoryError(name, number, f"started_at: {exc}") from None
            if started_at > event.finished_at:
                raise HistoryError(name, number, "started_at: after finished_at")
    if event.unknown_fields and on_unknown_fields is not None:
        unknown = tuple(n for n in event.unknown_fields if n != "started_at")
        if unknown:
            on_unknown_fields(number, unknown)
    return HistoryMatch(
        number,
        event.match_id,
        event.mode,
        event.finished_at,
        event.teams,
        event.ranks,
        event.stats,
        event.quitters,
        started_at,
        event.parties or None,
    )


# --- CSV ---------------------------------------------------------------------------------------


def _columns(header: list[str], name: str, line: int) -> dict[str, int]:
    names = [column.strip().lower() for column in header]
    known = set(CSV_COLUMNS) | set(CSV_OPTIONAL)
    expected = ",".join(CSV_COLUMNS)
    if not known.intersection(names):
        shown = ",".join(header)
        if len(shown) > 80:
            shown = shown[:80] + "..."
        raise HistoryError(
            name,
            line,
            f"expected a CSV header {expected} (and optionally mode), got {shown!r}",
        )
    unknown = [column for column in names if column not in known]
    if unknown:
        listed = ", ".join(repr(column) for column in unknown)
        raise HistoryError(
            name,
            line,
            f"unknown column{'s' if len(unknown) > 1 else ''} {listed}; "
            f"expected {expected} and optionally mode",
        )
    index: dict[str, int] = {}
    for position, column in enumerate(names):
        if column in index:
            raise HistoryError(name, line, f"column {column!r} appears twice")
        index[column] = position
    missing = [column for column in CSV_COLUMNS if column not in index]
    if missing:
        raise HistoryError(
            name,
            line,
            f"missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)}; "
            f"the header must name {expected} (mode is optional)",
        )
    return index


def _read_csv(
    handle: io.BufferedReader,
    path: Path | str,
    name: str,
    progress: Progress | None,
    on_bad_row: OnBadRow | None,
) -> Iterator[HistoryMatch]:
    text = io.TextIOWrapper(handle, encoding="utf-8-sig", newline="")
    try:
        reader = csv.reader(
            iter(partial(text.readline, _MAX_LINE_CHARS), ""), skipinitialspace=True
        )
        try:
            yield from _csv_rows(reader, name, handle, progress, on_bad_row)
        except UnicodeDecodeError:
            found = first_utf8_error(path)
            if found is None:
                raise HistoryError(name, None, "not UTF-8 text") from None
            line, reason = found
            raise HistoryError(name, line, reason) from None
    finally:
        # Detach so that closing (or collecting) the text wrapper never closes stdin.
        text.detach()


def _csv_rows(
    reader: Reader,
    name: str,
    handle: io.BufferedReader,
    progress: Progress | None,
    on_bad_row: OnBadRow | None,
) -> Iterator[HistoryMatch]:
    # Line where the row being read starts: csv.Error only knows where reading stopped, which
    # for an unclosed quote can be thousands of lines later.
    previous = 0
    try:
        header, previous = _header(reader, name)
        index = _columns(header, name, previous + 1)
        width = len(header)
        i_time = index["played_at"]
        i_a = index["player_a"]
        i_b = index["player_b"]
        i_score = index["score_a"]
        i_mode = index.get("mode")
        max_id = DEFAULT_LIMITS.max_id_length
        scores, empty = _SCORES, _EMPTY
        new_match = new_history_match
        previous = reader.line_num
        count = 0
        for fields in reader:
            line = previous + 1
            previous = reader.line_num
            try:
                if len(fields) != width:
                    if not "".join(fields).strip():  # blank or whitespace-only line
                        continue
                    raise HistoryError(
                        name,
                        line,
                        f"expected {width} fields ({','.join(header)}), got {len(fields)}",
                    )
                stamp = fields[i_time]
                at = _epoch_ms(stamp, name, line) if stamp.isdigit() else _iso(stamp, name, line)
                player_a = fields[i_a]
                player_b = fields[i_b]
                if not player_a or not player_b or player_a == player_b:
                    raise HistoryError(name, line, _players_problem(player_a, player_b))
                if len(player_a) > max_id or len(player_b) > max_id:
                    which = "player_a" if len(player_a) > max_id else "player_b"
                    raise HistoryError(name, line, f"{which} is longer than {max_id} characters")
                ranks = scores.get(fields[i_score])
                if ranks is None:
                    ranks = _score(fields[i_score], name, line)
                mode: str | None = None
                if i_mode is not None:
                    mode = fields[i_mode] or None
                    if mode is not None and len(mode) > max_id:
                        raise HistoryError(name, line, f"mode is longer than {max_id} characters")
            except HistoryError as exc:
                if on_bad_row is None:
                    raise
                on_bad_row(exc)
                continue
            yield new_match(
                HistoryMatch,
                (
                    line,
                    f"{CSV_ID_PREFIX}{line}",
                    mode,
                    at,
                    ((player_a,), (player_b,)),
                    ranks,
                    None,
                    empty,
                    None,
                    None,
                ),
            )
            count += 1
            if progress is not None and count % PROGRESS_EVERY == 0:
                progress(count, handle.tell())
    except csv.Error as exc:
        raise HistoryError(name, previous + 1, f"bad CSV: {exc}") from None
    if progress is not None:
        progress(count, handle.tell())


def _header(reader: Reader, name: str) -> tuple[list[str], int]:
    """The first line that is not blank, and the line it ends on; HistoryError: none."""
    previous = 0
    for fields in reader:
        if "".join(fields).strip():
            return fields, previous
        previous = reader.line_num
    raise HistoryError(name, None, _EMPTY_FILE)


def _iso(stamp: str, name: str, line: int) -> float:
    """``played_at`` as an ISO-8601 time, in epoch seconds."""
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        raise HistoryError(
            name,
            line,
            "played_at must be an ISO-8601 time (e.g. 2026-01-02T03:04:05Z) or "
            f"integer epoch milliseconds, got {describe_value(stamp)}",
        ) from None
    # Subtracting the epoch is timestamp() without its method-call overhead.
    at: float = (moment - (_EPOCH if moment.tzinfo is None else _EPOCH_UTC)).total_seconds()
    if at < 0.0:
        raise HistoryError(name, line, f"played_at is before 1970: {describe_value(stamp)}")
    return at


def _epoch_ms(stamp: str, name: str, line: int) -> float:
    try:
        ms = int(stamp)
    except ValueError:  # Unicode digits such as '²' pass isdigit() but not int()
        raise HistoryError(
            name,
            line,
            f"played_at must be ISO-8601 or epoch milliseconds, got {describe_value(stamp)}",
        ) from None
    if ms < MIN_EPOCH_MS:
        raise HistoryError(
            name,
            line,
            f"played_at {stamp} is before March 1973 as epoch milliseconds "
            "(epoch seconds? multiply by 1000)",
        )
    if ms > MAX_EPOCH_MS:
        raise HistoryError(name, line, f"played_at {stamp} is after the year 9999")
    return ms / 1000.0


def _score(value: str, name: str, line: int) -> tuple[int, int]:
    try:
        ranks = _SCORE_VALUES.get(float(value))
    except ValueError:
        ranks = None
    if ranks is None:
        raise HistoryError(name, line, f"score_a must be 1, 0.5 or 0, got {describe_value(value)}")
    return ranks


def _players_problem(player_a: str, player_b: str) -> str:
    if not player_a:
        return "player_a is empty"
    if not player_b:
        return "player_b is empty"
    return f"player_a and player_b are the same player {describe_value(player_a)}"
