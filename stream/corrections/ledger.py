"""Corrections applied to a history: which matches are void, whose ids are read as pseudonyms,
and when each adjustment applies. Pure (no clock, no I/O): replay and the re-rating of the
retained inputs use the same ledger, so a correction acts identically in both.

How each acts on a history (docs/operations.md#correcting-the-past):
- a voided match is left out before anything is rated, as if it had never been played (it
  neither rates nor supersedes any other match);
- an erased player's id is read as their pseudonym in every match (teams, stats, quitters), so
  everything rated is rated as before and nothing names them;
- an adjustment applies to the player's state just before the first match (in the order the
  history is rated) whose time is at or after its ``effective`` time, or after the last match
  when none is; ``set`` replaces the rating, ``shift`` adds to it, the deviation, games and
  Rank Points stay (:func:`adjusted`);
- a re-rate's record changes nothing (what it applied is in the records before it).
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TypeVar

from stream.corrections.pseudonyms import ErasedNames, key_fingerprint
from stream.corrections.records import Adjust, Correction, Erase, Rerate, Void
from stream.errors import UserError, did_you_mean
from stream.events import format_time
from stream.history.model import HistoryMatch
from stream.ratings.modeconfig import ModeConfig
from stream.ratings.skill import PlayerState

__all__ = ["Ledger", "adjusted", "interleaved"]

T = TypeVar("T")


class Ledger:
    """The corrections of one file or audit log, ready to apply (module docstring).

    ``key`` is the pseudonym key (stream.corrections.pseudonyms); needed only when some
    correction is an erasure, UserError otherwise. ``source`` names the file in messages.
    """

    def __init__(
        self,
        corrections: Sequence[tuple[int, Correction]],
        key: bytes | None = None,
        source: str = "corrections",
    ) -> None:
        self.source = source
        self._voided: dict[str, int] = {}
        self._windows: dict[str, list[tuple[float, float, str | None, int]]] = {}
        self._void_lines: dict[int, Void] = {}
        self._hits: set[int] = set()
        self._hit_ids: set[str] = set()
        erased: set[str] = set()
        self._erase_lines: dict[int, Erase] = {}
        self.adjustments: list[tuple[int, Adjust]] = []
        # How many matches were left out as void, and the (player as rated, mode) pairs of the
        # adjustments' players that some match rated (one that none did adjusts nobody here).
        self.voided = 0
        self._played: set[tuple[str, str]] = set()
        # The modes matches were rated in (kept while some adjustment may need naming one).
        self._modes: set[str] = set()
        for line, correction in corrections:
            if isinstance(correction, Void):
                self._void_lines[line] = correction
                for match_id in correction.matches:
                    self._voided.setdefault(match_id, line)
                if correction.player is not None:
                    assert correction.since is not None and correction.until is not None
                    self._windows.setdefault(correction.player, []).append(
                        (correction.since, correction.until, correction.mode, line)
                    )
            elif isinstance(correction, Erase):
                erased.add(correction.pseudonym)
                self._erase_lines[line] = correction
            elif isinstance(correction, Adjust):
                self.adjustments.append((line, correction))
            else:
                assert isinstance(correction, Rerate)  # a record only (records.py)
        self.adjustments.sort(key=lambda item: (item[1].effective, item[0]))
        if erased and key is None:
            raise UserError(
                f"{source}: holds erasures; they need the key their pseudonyms were made with"
            )
        if key is not None:
            mine = key_fingerprint(key)
            for line, erase in sorted(self._erase_lines.items()):
                if erase.key is not None and erase.key != mine:
                    raise UserError(
                        f"{source} line {line}: erase {erase.audit.id!r} was made with another"
                        f" SKILLSTREAM_PSEUDONYM_KEY (fingerprint {erase.key}; this key's is"
                        f" {mine}): with this key it would erase nobody; set the key it was"
                        " made with"
                    )
        self._erased = frozenset(erased)
        self._names = ErasedNames(self._erased, key)
        # The adjustments' players as rated, in their modes.
        self._targets = {(self._names.rated_as(a.player), a.mode) for _, a in self.adjustments}

    def admit(self, match: HistoryMatch, mode: str) -> HistoryMatch | None:
        """``match`` as it is rated (erased ids read as pseudonyms), or None when it is void.
        ``mode`` is the mode the match is rated in."""
        void = False
        if match.match_id in self._voided:
            self._hit_ids.add(match.match_id)
            void = True
        if self._windows:
            # Every window that holds it counts as used, not only the first.
            for line in self._in_windows(match, mode):
                self._hits.add(line)
                void = True
        if void:
            self.voided += 1
            return None
        kept = match if not self._erased else self._renamed(match)
        if self.adjustments:
            self._modes.add(mode)
            self._note_played(kept, mode)
        return kept

    def _note_played(self, match: HistoryMatch, mode: str) -> None:
        targets = self._targets
        for team in match.teams:
            for pid in team:
                if (pid, mode) in targets:
                    self._played.add((pid, mode))

    def name(self, player_id: str) -> str:
        """The id ``player_id`` is rated under: its pseudonym once erased, else itself."""
        return self._names.name(player_id)

    def applied(self) -> str:
        """What the corrections did to the history read so far, in one line."""
        erased = len(self._names.matched)
        return (
            f"voided {_count(self.voided, 'match', 'matches')}, adjusted "
            f"{_count(len(self.adjustments), 'rating', 'ratings')}, erased "
            f"{_count(erased, 'player', 'players')}"
        )

    def unmatched(self) -> list[str]:
        """One line for every correction that did nothing to the history read so far: a void
        whose match id is not in it or whose player finished no match in its window, an erase
        whose pseudonym no player of it has, an adjust of a player without a match in its mode
        (a typo would otherwise do nothing, or invent a player, silently). An erase or an
        adjust that says it may match nothing is left alone."""
        problems = []
        for line, void in sorted(self._void_lines.items()):
            if void.matches:
                missing = sorted(m for m in void.matches if m not in self._hit_ids)
                if missing:
                    shown = ", ".join(repr(m) for m in missing[:5])
                    more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
                    problems.append(
                        f"{self.source} line {line}: void {void.audit.id!r}: match {shown}{more} "
                        "is not in the history"
                    )
                elif all(self._voided[m] != line for m in void.matches):
                    # A repeated record: counted once, it would read as done twice.
                    first = min(self._voided[m] for m in void.matches)
                    problems.append(
                        f"{self.source} line {line}: void {void.audit.id!r} voids nothing more:"
                        f" every match it names is voided from line {first} on"
                    )
            elif line not in self._hits:
                assert void.since is not None and void.until is not None
                where = "" if void.mode is None else f" in mode {void.mode!r}"
                problems.append(
                    f"{self.source} line {line}: void {void.audit.id!r} voids nothing: "
                    f"{void.player!r} finished no match{where} from {format_time(void.since)} "
                    f"until {format_time(void.until)}"
                )
        for line, erase in sorted(self._erase_lines.items()):
            if not erase.may_match_nothing and erase.pseudonym not in self._names.matched:
                problems.append(
                    f"{self.source} line {line}: erase {erase.audit.id!r} erases nobody: no "
                    "player of the history has its pseudonym (a player in no match here, or a "
                    "key other than the one it was made with); one of another deployment: "
                    '"may_match_nothing": true'
                )
        for line, adjust in self.adjustments:
            rated = (self._names.rated_as(adjust.player), adjust.mode)
            if adjust.may_match_nothing or rated in self._played:
                continue
            if adjust.mode not in self._modes:
                problems.append(
                    f"{self.source} line {line}: adjust {adjust.audit.id!r} adjusts nobody: no"
                    f" match of the history is in mode {adjust.mode!r}"
                    f"{did_you_mean(adjust.mode, self._modes)}"
                )
                continue
            problems.append(
                f"{self.source} line {line}: adjust {adjust.audit.id!r} adjusts nobody: "
                f"{adjust.player!r} played no match in mode {adjust.mode!r} (a typo would "
                'start a new player); one who is to start adjusted: "may_match_nothing": true'
            )
        return problems

    def _in_windows(self, match: HistoryMatch, mode: str) -> Iterator[int]:
        at = match.at
        for team in match.teams:
            for pid in team:
                for since, until, only, line in self._windows.get(pid, ()):
                    if since <= at < until and (only is None or only == mode):
                        yield line

    def _renamed(self, match: HistoryMatch) -> HistoryMatch:
        name = self.name
        teams = tuple(tuple(name(p) for p in team) for team in match.teams)
        if teams == match.teams:
            return match
        stats = match.stats
        return match._replace(
            teams=teams,
            stats=None if stats is None else {name(p): s for p, s in stats.items()},
            quitters=frozenset(name(p) for p in match.quitters),
        )


def _count(n: int, one: str, many: str) -> str:
    return f"{n:,} {one if n == 1 else many}"


def adjusted(mode: ModeConfig, state: PlayerState, adjust: Adjust) -> PlayerState:
    """``state`` after ``adjust``: the rating set or shifted (held to the algorithm's limits:
    Glicko-2's bounds, the one algorithm that clamps, +-1e6 for every other), nothing else
    changed: an adjustment is not a match, so it adds no game and does not restart inactivity."""
    rating = state.rating + adjust.value if adjust.shift else adjust.value
    return dataclasses.replace(state, rating=mode.algorithm.limits.rating_held(rating))


def interleaved(
    items: Iterable[T],
    time_of: Callable[[T], float],
    adjustments: Sequence[tuple[int, Adjust]],
    apply: Callable[[Adjust], None],
) -> Iterator[T]:
    """``items`` in their order, each adjustment applied (``apply``) just before the first item
    whose time is at or after its effective time; those left, after the last item."""
    pending = deque(a for _, a in adjustments)
    for item in items:
        at = time_of(item)
        while pending and pending[0].effective <= at:
            apply(pending.popleft())
        yield item
    while pending:
        apply(pending.popleft())
