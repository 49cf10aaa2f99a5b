"""`skillstream replay --explain PLAYER`: one player's rating changes as the live pipeline
publishes them, each with its explanation, from a history file.

The events are built by the worker's own functions (stream.ratingchanged.rating_changed
with stream.ratings.explain.explain), from the same updates replay computes, so a change
explained here is explained as the live service explained it (for a history the two rate
alike: docs/event-time.md). ``version`` counts the player's changes in the mode from 1, as the
worker's does.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from stream.history import HistoryMatch
from stream.offline.corrected import Applied
from stream.offline.replayer import Replayer
from stream.ratingchanged import adjustment_changed, rating_changed, refund_changed
from stream.ratings.engine import PlayerUpdate
from stream.ratings.explain import explain
from stream.ratings.resolution import outcome_of
from stream.ratings.settling import Fate, Settled
from stream.ratings.skill import PlayerState

__all__ = ["explained_changes"]


def explained_changes(
    rated: Iterable[tuple[HistoryMatch, Mapping[str, Fate] | None]],
    replayer: Replayer,
    player_id: str,
    applied: list[Applied] | None = None,
) -> Iterator[dict[str, Any]]:
    """Rate every match of ``rated`` with ``replayer`` (a match with fates is settled by them,
    :meth:`Replayer.apply_settled`; None applies its result) and yield the rating-changed event
    of each change of ``player_id``, in the order applied. ``applied``: where ``rated`` puts
    the adjustments it applies (stream.offline.corrected ``on_adjust``), each a change of its
    own, as the worker publishes it."""
    versions: dict[str, int] = {}
    pending = [] if applied is None else applied

    def adjustments() -> Iterator[dict[str, Any]]:
        for player, adjust, config, before, after in pending:
            if player == player_id:
                version = versions[config.name] = versions.get(config.name, 0) + 1
                yield adjustment_changed(
                    player_id=player,
                    mode=config,
                    change=adjust,
                    before=before,
                    after=after,
                    version=version,
                )
        pending.clear()

    for match, fates in rated:
        # The adjustments applied before this match (the iterator applies them first).
        yield from adjustments()
        playing = any(player_id in team for team in match.teams)
        before: PlayerState | None = None
        if playing:
            before = replayer.state_before(match, player_id)
        # The mode with the population in force for the match, as the worker rates it.
        rules = replayer.rules_of(match)
        updates = replayer.apply(match) if fates is None else replayer.apply_settled(match, fates)
        update = updates.get(player_id)
        if update is None:
            continue
        name = replayer.mode_name(match)
        fate = None if fates is None else fates.get(player_id)
        at = match.at if fate is None else fate.at
        refund = replayer.refunded.get(player_id)
        if refund is not None:
            # A refunded result changes nothing: said, as the worker says it, only to one who
            # lost to the banned player and has a rating.
            kept = replayer.tables.get(name, {}).get(player_id)
            if kept is not None and player_id != refund.player:
                version = versions[name] = versions.get(name, 0) + 1
                yield refund_changed(
                    player_id=player_id,
                    mode=rules,
                    match_id=match.match_id,
                    state=kept,
                    version=version,
                    at=at,
                    refund=refund,
                )
            continue
        version = versions[name] = versions.get(name, 0) + 1
        yield rating_changed(
            player_id=player_id,
            mode=rules,
            match_id=match.match_id,
            outcome=_outcome(update, fate),
            before=before or rules.initial,
            after=update.state,
            version=version,
            expected_score=update.expected_score,
            at=at,
            why=explain(rules, before, update, at),
        )
    # Those after the last match.
    yield from adjustments()


def _outcome(update: PlayerUpdate, fate: Fate | None) -> str:
    # The worker's labels: an abandonment or a timeout says so; any other change its score.
    if fate is not None and fate.how is not Settled.RESULT:
        return str(fate.how.value)
    return outcome_of(update.score).value
