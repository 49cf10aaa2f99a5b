"""What the offline commands rate from a history: the rows that can be read, in modes the
modes file accepts, each match id once (as the live worker recognises a repeat).

The live worker dead-letters an event in a mode the modes file rejects and ignores a repeated
match id (a redelivered or resent match-finished): so does this intake. A bad row stops the
command with the file and the line, unless bad rows are skipped (``--on-error skip``); then
they are counted and the first few named.
"""

from __future__ import annotations

import difflib
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path

from stream.config.modes import Modes
from stream.errors import did_you_mean
from stream.events import unknown_fields_text
from stream.history import HistoryError, HistoryMatch, read_history
from stream.history.reader import CSV_ID_PREFIX, HISTORY_FIELDS, Progress
from stream.history.source import display_name
from stream.offline.replayer import DEFAULT_MODE
from stream.protocol import RECENT_MATCHES

# The live worker's default SKILLSTREAM_RETENTION_SECONDS: how long (in event time) a settled
# match is kept to recognise a late duplicate (a test holds the two equal).
DUPLICATE_WINDOW_SECONDS = 3600.0
# How many skipped rows are named in the report.
NAMED_ROWS = 5


@dataclass
class IntakeReport:
    """What the intake left out (bad rows skipped, repeated match ids rated once) and what it
    read that may not be what the file meant: fields no reader reads, matches earlier than one
    above them, a mode that may be a misspelt listed one."""

    skipped: int = 0
    first_skipped: list[HistoryError] = field(default_factory=list)
    duplicates: int = 0
    # The first repeated match id and its line.
    first_duplicate: tuple[str, int] | None = None
    # Lines carrying fields no reader reads; the first such line and the names seen.
    unknown_lines: int = 0
    first_unknown_line: int | None = None
    unknown_names: set[str] = field(default_factory=set)
    # Matches earlier in play (start, or finish) than one above them, and the first's line;
    # None when the command rates in play order anyway.
    backwards: int | None = 0
    first_backwards: int | None = None
    # One line per history mode that looks like a misspelt listed mode (see Intake).
    mode_notes: list[str] = field(default_factory=list)

    def skip(self, error: HistoryError) -> None:
        self.skipped += 1
        if len(self.first_skipped) < NAMED_ROWS:
            self.first_skipped.append(error)

    def unknown(self, line: int, names: tuple[str, ...]) -> None:
        self.unknown_lines += 1
        if self.first_unknown_line is None:
            self.first_unknown_line = line
        if len(self.unknown_names) < NAMED_ROWS:
            self.unknown_names.update(names)

    def lines(self) -> list[str]:
        """One line per kind of row left out, for stderr; none when nothing was."""
        out: list[str] = []
        if self.skipped:
            first = self.first_skipped[0]
            where = ", ".join(str(e.line) for e in self.first_skipped if e.line is not None)
            more = ", ..." if self.skipped > len(self.first_skipped) else ""
            rows = "row" if self.skipped == 1 else "rows"
            out.append(
                f"skipped {self.skipped} bad {rows} of {first.path} (lines {where}{more});"
                f" the first: {first.reason}"
            )
        if self.duplicates:
            ids = "id" if self.duplicates == 1 else "ids"
            again = ""
            if self.first_duplicate is not None:
                match_id, line = self.first_duplicate
                again = f" (the first: {match_id!r} again on line {line})"
            out.append(
                f"{self.duplicates} repeated match {ids} left out{again}: each match is rated"
                " once, as the live worker rates it"
            )
        if self.unknown_lines:
            lines = "line carries" if self.unknown_lines == 1 else "lines carry"
            names = unknown_fields_text(tuple(sorted(self.unknown_names)), HISTORY_FIELDS)
            out.append(
                f"{self.unknown_lines} {lines} fields no reader reads, read as if absent:"
                f" {names} (the first: line {self.first_unknown_line})"
            )
        if self.backwards:
            matches = "match is" if self.backwards == 1 else "matches are"
            out.append(
                f"{self.backwards} {matches} earlier than a match above it (the first: line"
                f" {self.first_backwards}); rated in file order: replay --in-play-order rates"
                " by time, as the live pipeline does"
            )
        out.extend(self.mode_notes)
        return out


class RecentMatchIds:
    """Recognises a repeated match id the way the live worker does.

    The live worker keeps a settled match for its retention window of event time (any repeat
    within it is ignored) and, in each player's rating record, the player's last
    ``RECENT_MATCHES`` match ids (a later repeat is ignored for a player who has it). Here
    event time is the latest match time seen so far, as the worker's partition clock is; memory
    holds one window's ids plus ``RECENT_MATCHES`` per player and mode.
    """

    def __init__(
        self, window_seconds: float = DUPLICATE_WINDOW_SECONDS, per_player: bool = True
    ) -> None:
        self.window = window_seconds
        # Off only to show what the per-player records add (tests).
        self.per_player = per_player
        self._seen: dict[str, float] = {}
        self._order: deque[tuple[float, str]] = deque()
        self._clock = float("-inf")
        self._players: dict[tuple[str, str], tuple[str, ...]] = {}

    def repeated(self, match_id: str, at: float, mode: str, teams: Iterable[Iterable[str]]) -> bool:
        """Whether ``match_id`` was seen within the window, or is among the recent matches in
        ``mode`` of every player of ``teams``; if not, it is remembered."""
        if at > self._clock:
            self._clock = at
            horizon = at - self.window
            order = self._order
            seen = self._seen
            while order and order[0][0] < horizon:
                old_at, old_id = order.popleft()
                if seen.get(old_id) == old_at:
                    del seen[old_id]
        if match_id in self._seen:
            return True
        self._seen[match_id] = at
        self._order.append((at, match_id))
        if not self.per_player:
            return False
        recent = self._players
        keys = [(mode, pid) for team in teams for pid in team]
        if all(match_id in recent.get(key, ()) for key in keys):
            return True
        for key in keys:
            recent[key] = (*recent.get(key, ())[-(RECENT_MATCHES - 1) :], match_id)
        return False


# Compared by identity: an intake is one reading of a file, its report filled as it goes.
@dataclass(eq=False)
class Intake:
    """Iterate the history's matches that are to be rated; ``report`` says what was left out.

    ``skip_bad_rows`` False (the default, ``--on-error stop``): the first bad row, or a match in
    a mode the modes file rejects, raises :class:`HistoryError` naming the file and the line.
    True: such rows are counted in ``report`` and reading goes on. ``modes_source`` names the
    modes file in the message about a rejected mode. Nothing is written: iterating again reads
    the file again, yields the same matches and starts ``report`` afresh.
    """

    path: Path | str
    modes: Modes
    mode_override: str | None = None
    _: KW_ONLY
    skip_bad_rows: bool = False
    progress: Progress | None = None
    modes_source: str = "the modes file"
    # The caller rates in play order (replay --in-play-order): matches out of file order
    # are not worth a line.
    play_order: bool = False
    # The modes seeds name, each with the seeds file and the line of its first seed (None: no
    # seeds): a mode no match is rated in starts nobody, which is said (a misspelt mode).
    seed_modes: Mapping[str, tuple[str, int]] | None = None
    report: IntakeReport = field(default_factory=IntakeReport, init=False)

    def __iter__(self) -> Iterator[HistoryMatch]:
        name = display_name(self.path)
        report = self.report = IntakeReport(backwards=None if self.play_order else 0)
        on_bad_row = report.skip if self.skip_bad_rows else None
        recent = RecentMatchIds()
        # CSV rows get their line as id, which never repeats: their ids need no checking.
        check_ids: bool | None = None
        override = self.mode_override
        accept_all = self.modes.accept_unlisted or override is not None
        latest = float("-inf")
        seen_modes: set[str] = set()
        for match in read_history(self.path, self.progress, on_bad_row, report.unknown):
            seen_modes.add(match.mode or DEFAULT_MODE)
            played = match.at if match.started_at is None else match.started_at
            if played < latest and report.backwards is not None:
                report.backwards += 1
                if report.first_backwards is None:
                    report.first_backwards = match.row
            latest = max(latest, played)
            mode = override or match.mode or DEFAULT_MODE
            if not accept_all and not self.modes.accepts(mode):
                error = HistoryError(
                    name,
                    match.row,
                    f"mode {mode!r} is not in {self.modes_source}, which rejects unlisted modes",
                )
                if on_bad_row is None:
                    raise error
                on_bad_row(error)
                continue
            if check_ids is None:
                check_ids = match.match_id != f"{CSV_ID_PREFIX}{match.row}"
            if check_ids and recent.repeated(match.match_id, match.at, mode, match.teams):
                report.duplicates += 1
                if report.first_duplicate is None:
                    report.first_duplicate = (match.match_id, match.row)
                continue
            yield match
        if override is None:
            report.mode_notes = misspelt_modes(seen_modes, self.modes, self.modes_source)
        rated = {override} if override is not None else seen_modes
        report.mode_notes += unseeded_modes(self.seed_modes or {}, rated)


def unseeded_modes(seed_modes: Mapping[str, tuple[str, int]], rated: set[str]) -> list[str]:
    """One line per mode of the seeds that no match of the history is rated in: its seeds
    start nobody (most often a misspelt mode), with the closest mode that is rated."""
    notes = []
    for mode in sorted(set(seed_modes) - rated):
        source, line = seed_modes[mode]
        notes.append(
            f"{source} line {line}: the seeds' mode {mode!r} has no match in the history, so"
            f" its seeds start nobody{did_you_mean(mode, rated)}"
        )
    return notes


def misspelt_modes(seen: set[str], modes: Modes, source: str) -> list[str]:
    """One line per mode of the history that the modes file does not list while it lists a
    mode close to it that no match is in: most likely a misspelling on one side (``[modes.1vs1]``
    for a history of ``1v1``), which rates the mode with ``[default]`` and nothing said."""
    unused = [name for name in modes.listed if name not in seen]
    notes = []
    for mode in sorted(seen - set(modes.listed)):
        close = difflib.get_close_matches(mode, unused, n=1, cutoff=0.6)
        if close:
            rated = "is rated with [default]" if modes.accepts(mode) else "is rejected"
            notes.append(
                f"the history's mode {mode!r} is not listed in {source}, so it {rated}; no match"
                f" is in its listed mode {close[0]!r}: is one of them misspelt?"
            )
    return notes
