"""Corrections applied to a history: which matches are void, whose ids are read as pseudonyms,
and when each adjustment applies. Pure (no clock, no I/O): replay and the re-rating of the
retained inputs use the same ledger, so a correction acts identically in both.

How each acts on a history (docs/operations.md#correcting-the-past):
- a voided match is left out before anything is rated, as if it had never been played (it
  neither rates nor supersedes any other match);
- an erased player's id is read as their pseudonym in every match (teams, parties, stats,
  quitters), so everything rated is rated as before and nothing names them;
- a player change (an adjustment) applies to the player's state just before the first match
  (in the order the history is rated) whose time is at or after its ``effective`` time, or
  after the last match when none is (:func:`interleaved`);
- a refund (a ban's) undoes the results of the banned player and of the players their side beat,
  in the banned player's matches of its mode and window: the replayer asks :meth:`Ledger.refund_of`
  for each rated player and leaves a refunded one's state as it was;
- a re-rate's record changes nothing (what it applied is in the records before it).

Each kind says which of these it does (stream.corrections.effects); the ledger applies them.
"""

from __future__ import annotations

import dataclasses
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TypeVar

from stream.corrections.effects import PlayerChange, Refund, Seen, Window, refunds_for
from stream.corrections.pseudonyms import ErasedNames, key_fingerprint
from stream.corrections.records import Correction, effects_of, kind_of
from stream.errors import UserError
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
        self._corrections = tuple(corrections)
        effects = effects_of(self._corrections)
        self._voided = effects.voided
        self._windows: dict[str, list[Window]] = {}
        for window in effects.windows:
            self._windows.setdefault(window.player, []).append(window)
        # Player changes by effective time, then in the file's order.
        self.adjustments = sorted(effects.changes, key=lambda item: (item[1].effective, item[0]))
        # How many matches were left out as void.
        self.voided = 0
        if effects.erased and key is None:
            raise UserError(
                f"{source}: holds erasures; they need the key their pseudonyms were made with"
            )
        if key is not None:
            mine = key_fingerprint(key)
            for line, record_id, theirs in sorted(effects.fingerprints):
                if theirs != mine:
                    raise UserError(
                        f"{source} line {line}: erase {record_id!r} was made with another"
                        f" SKILLSTREAM_PSEUDONYM_KEY (fingerprint {theirs}; this key's is"
                        f" {mine}): with this key it would erase nobody; set the key it was"
                        " made with"
                    )
        self._erased = frozenset(effects.erased)
        self._names = ErasedNames(self._erased, key)
        self._seen = Seen(self._voided, self._names.rated_as, pseudonyms=self._names.matched)
        # Refunds, each naming the banned player as rated (their pseudonym once erased).
        self.refunds = tuple(
            dataclasses.replace(r, player=self.name(r.player)) for r in effects.refunds
        )
        # How many players' results in a match were refunded.
        self.refunded = 0
        # The changed players as rated, in their modes.
        self._targets = {(self._names.rated_as(a.player), a.mode) for _, a in self.adjustments}

    def admit(self, match: HistoryMatch, mode: str) -> HistoryMatch | None:
        """``match`` as it is rated (erased ids read as pseudonyms), or None when it is void.
        ``mode`` is the mode the match is rated in."""
        void = False
        seen = self._seen
        if match.match_id in self._voided:
            seen.hit_ids.add(match.match_id)
            void = True
        if self._windows:
            # Every window that holds it counts as used, not only the first.
            for line in self._in_windows(match, mode):
                seen.window_hits.add(line)
                void = True
        if void:
            self.voided += 1
            return None
        kept = match if not self._erased else self._renamed(match)
        if self.adjustments:
            seen.modes.add(mode)
            self._note_played(kept, mode)
        elif self.refunds:
            seen.modes.add(mode)
        return kept

    def refund_of(
        self,
        mode: str,
        player_id: str,
        teams: tuple[tuple[str, ...], ...],
        ranks: Sequence[int],
        at: float,
    ) -> Refund | None:
        """The refund that undoes ``player_id``'s result in a match of ``mode`` finished at
        ``at`` (stream.corrections.effects.refund_for), None when none does; counted as
        applied (asked once per player and match, by the replayer), and a later one covering
        the same result noted (it refunds nothing more there)."""
        covering = refunds_for(self.refunds, mode, player_id, teams, ranks, at)
        found = next(covering, None)
        if found is not None:
            self._seen.refund_hits.add(found.line)
            self.refunded += 1
            for again in covering:
                self._seen.refund_covered.setdefault(again.line, found.line)
        return found

    def _note_played(self, match: HistoryMatch, mode: str) -> None:
        targets, played = self._targets, self._seen.played
        for team in match.teams:
            for pid in team:
                if (pid, mode) in targets:
                    played.add((pid, mode))

    def name(self, player_id: str) -> str:
        """The id ``player_id`` is rated under: its pseudonym once erased, else itself."""
        return self._names.name(player_id)

    def applied(self) -> str:
        """What the corrections did to the history read so far, in one line."""
        erased = len(self._names.matched)
        refunded = (
            f", refunded {_count(self.refunded, 'result', 'results')}" if self.refunds else ""
        )
        return (
            f"voided {_count(self.voided, 'match', 'matches')}, adjusted "
            f"{_count(len(self.adjustments), 'rating', 'ratings')}, erased "
            f"{_count(erased, 'player', 'players')}{refunded}"
        )

    def unmatched(self) -> list[str]:
        """One line for every correction that did nothing to the history read so far (each
        kind says when: a void whose match id is not in it, an erase whose pseudonym no player
        of it has, an adjust of a player without a match in its mode...): a typo would
        otherwise do nothing, or invent a player, silently."""
        problems = []
        for line, correction in self._corrections:
            why = kind_of(correction).unmatched(correction, line, self._seen)
            if why is not None:
                problems.append(f"{self.source} line {line}: {why}")
        return problems

    def _in_windows(self, match: HistoryMatch, mode: str) -> Iterator[int]:
        at = match.at
        for team in match.teams:
            for pid in team:
                for window in self._windows.get(pid, ()):
                    if window.since <= at < window.until and window.mode in (None, mode):
                        yield window.line

    def _renamed(self, match: HistoryMatch) -> HistoryMatch:
        name = self.name
        teams = tuple(tuple(name(p) for p in team) for team in match.teams)
        if teams == match.teams:
            return match
        stats, parties = match.stats, match.parties
        return match._replace(
            teams=teams,
            stats=None if stats is None else {name(p): s for p, s in stats.items()},
            quitters=frozenset(name(p) for p in match.quitters),
            parties=None
            if parties is None
            else tuple(tuple(name(p) for p in party) for party in parties),
        )


def _count(n: int, one: str, many: str) -> str:
    return f"{n:,} {one if n == 1 else many}"


def adjusted(mode: ModeConfig, state: PlayerState, change: PlayerChange) -> PlayerState:
    """``state`` after ``change``, held to the limits of ``mode``'s algorithm."""
    return change.changed(mode.algorithm.limits, state)


def interleaved(
    items: Iterable[T],
    time_of: Callable[[T], float],
    adjustments: Sequence[tuple[int, PlayerChange]],
    apply: Callable[[PlayerChange], None],
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
