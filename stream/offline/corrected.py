"""A history as the offline commands rate it: in file order or in the order of play, with the
corrections of a corrections file applied (stream.corrections.ledger)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

from stream.config.modes import Modes
from stream.corrections.corrections_file import read_corrections
from stream.corrections.effects import PlayerChange, Where
from stream.corrections.ledger import Ledger, adjusted, interleaved
from stream.corrections.pseudonyms import pseudonym_key
from stream.corrections.records import needs_key, refusal
from stream.errors import UserError
from stream.history import HistoryMatch
from stream.history.model import HistoryError
from stream.history.source import display_name
from stream.offline.replayer import Replayer, in_play_order
from stream.ratings.modeconfig import ModeConfig
from stream.ratings.settling import Fate
from stream.ratings.skill import PlayerState

__all__ = ["Applied", "OnAdjust", "Rated", "load_ledger", "rated_in_order", "refuse_unmatched"]

Rated = tuple[HistoryMatch, Mapping[str, Fate] | None]
# An adjustment as applied: the player as rated, it, the mode's configuration, the states
# before and after.
Applied = tuple[str, PlayerChange, ModeConfig, PlayerState, PlayerState]
OnAdjust = Callable[[str, PlayerChange, ModeConfig, PlayerState, PlayerState], None]


def load_ledger(path: Path, modes: Modes, override: str | None) -> Ledger:
    """The corrections of ``path``; HistoryError names the line of an adjustment in a mode the
    modes file does not accept (or another than ``--mode``), UserError a missing pseudonym key
    when the file erases someone."""
    name = display_name(path)
    corrections = read_corrections(path)
    where = Where(
        accepts=lambda mode: (override is None or mode == override) and modes.accepts(mode),
        rated=f"every match is rated as {override!r}" if override else "the modes file",
        live=False,
    )
    refused = refusal(corrections, where)
    if refused is not None:
        raise HistoryError(name, *refused)
    return Ledger(corrections, pseudonym_key() if needs_key(corrections) else None, name)


def rated_in_order(
    matches: Iterable[HistoryMatch],
    replayer: Replayer,
    *,
    play_order: bool,
    ledger: Ledger | None = None,
    on_adjust: OnAdjust | None = None,
) -> Iterator[Rated]:
    """Each match to rate, in file order (fates None: rated from its result) or, with
    ``play_order``, in the live pipeline's order with each player's fate; voided matches left
    out, erased ids read as pseudonyms, refunded results undone, and each adjustment applied
    to ``replayer`` just before the first match at or after its effective time (the match's
    start in the order of play, its finish in file order). ``on_adjust`` hears of each
    adjustment as it is applied: the player as rated, the adjustment, the mode's
    configuration, the states before and after.
    A ledger with refunds has ``replayer`` ask it of every rated player's result."""
    if ledger is not None:
        matches = _admitted(matches, replayer, ledger)
        if ledger.refunds:
            replayer.refund_of = ledger.refund_of
    rated: Iterable[Rated] = (
        in_play_order(matches, replayer) if play_order else ((m, None) for m in matches)
    )
    if ledger is None or not ledger.adjustments:
        yield from rated
        return

    def time_of(item: Rated) -> float:
        match = item[0]
        if play_order and match.started_at is not None:
            return match.started_at
        return match.at

    def apply(adjust: PlayerChange) -> None:
        player = ledger.name(adjust.player)
        config, before, after = replayer.adjust(
            player, adjust.mode, lambda mode, s: adjusted(mode, s, adjust)
        )
        if on_adjust is not None:
            on_adjust(player, adjust, config, before, after)

    yield from interleaved(rated, time_of, ledger.adjustments, apply)


def refuse_unmatched(ledger: Ledger | None) -> None:
    """UserError when a correction did nothing (stream.corrections.ledger ``unmatched``): the
    first, and how many more."""
    if ledger is None:
        return
    problems = ledger.unmatched()
    if problems:
        more = (
            f" (and {len(problems) - 1} more corrections that do nothing)"
            if len(problems) > 1
            else ""
        )
        raise UserError(problems[0] + more)


def _admitted(
    matches: Iterable[HistoryMatch], replayer: Replayer, ledger: Ledger
) -> Iterator[HistoryMatch]:
    admit = ledger.admit
    mode_name = replayer.mode_name
    for match in matches:
        kept = admit(match, mode_name(match))
        if kept is not None:
            yield kept
