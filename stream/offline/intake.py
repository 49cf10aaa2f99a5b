"""What the offline commands rate from a history: the rows that can be read, in modes the
modes file accepts, each match id once (as the live worker recognises a repeat).

The live worker dead-letters an event in a mode the modes file rejects and ignores a repeated
match id (a redelivered or resent match-finished): so does this intake. A bad row stops the
command with the file and the line, unless bad rows are skipped (``--on-error skip``); then
they are counted and the first few named.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from stream.config.modes import Modes
from stream.history import HistoryError, HistoryMatch, read_history
from stream.history.reader import CSV_ID_PREFIX, Progress
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
    """What the intake left out: bad rows (skipped) and repeated match ids (rated once)."""

    skipped: int = 0
    first_skipped: list[HistoryError] = field(default_factory=list)
    duplicates: int = 0

    def skip(self, error: HistoryError) -> None:
        self.skipped += 1
        if len(self.first_skipped) < NAMED_ROWS:
            self.first_skipped.append(error)

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
            out.append(
                f"{self.duplicates} repeated match {ids} left out: each match is rated once,"
                " as the live worker rates it"
            )
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


class Intake:
    """Iterate the history's matches that are to be rated; ``report`` says what was left out.

    ``skip_bad_rows`` False (the default, ``--on-error stop``): the first bad row, or a match in
    a mode the modes file rejects, raises :class:`HistoryError` naming the file and the line.
    True: such rows are counted in ``report`` and reading goes on. ``modes_source`` names the
    modes file in the message about a rejected mode. Nothing is written: iterating again reads
    the file again, yields the same matches and starts ``report`` afresh.
    """

    def __init__(
        self,
        path: Path | str,
        modes: Modes,
        mode_override: str | None = None,
        *,
        skip_bad_rows: bool = False,
        progress: Progress | None = None,
        modes_source: str = "the modes file",
    ) -> None:
        self.path = path
        self.modes = modes
        self.mode_override = mode_override
        self.skip_bad_rows = skip_bad_rows
        self.progress = progress
        self.modes_source = modes_source
        self.report = IntakeReport()

    def __iter__(self) -> Iterator[HistoryMatch]:
        name = display_name(self.path)
        report = self.report = IntakeReport()
        on_bad_row = report.skip if self.skip_bad_rows else None
        recent = RecentMatchIds()
        # CSV rows get their line as id, which never repeats: their ids need no checking.
        check_ids: bool | None = None
        override = self.mode_override
        accept_all = self.modes.accept_unlisted or override is not None
        for match in read_history(self.path, self.progress, on_bad_row):
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
                continue
            yield match
