"""The offline replay the event-time tests hold the live pipeline to: 1v1 matches given as
(match id, start, finish, teams, ranks), applied in the order of play; the events a fleet
publishes for them, and the check that the rating-changed records a worker wrote equal replay."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import orjson

from stream.chaos.verify import event_fields
from stream.config.modes import Modes
from stream.corrections.ledger import Ledger
from stream.history import HistoryMatch
from stream.offline.corrected import rated_in_order
from stream.offline.replayer import Replayer
from stream.ratings.modeconfig import ModeConfig
from stream.ratings.skill import PlayerState

Match = tuple[str, float, float, list[list[str]], list[int]]


def timed_events(
    env: Mapping[str, str], matches: list[Match]
) -> list[tuple[float, str, str, dict[str, Any]]]:
    """(time, topic, match id, event) of every match-started and match-finished, in the order
    a fleet publishes them: each at its own time. The times are whole milliseconds in the
    events."""
    events: list[tuple[float, str, str, dict[str, Any]]] = []
    for match_id, start, finish, teams, ranks in matches:
        ids = {"match_id": match_id, "mode": "1v1"}
        started = {**ids, "started_at": round(start * 1000), "teams": teams}
        finished = {**ids, "finished_at": round(finish * 1000), "ranks": ranks}
        events.append((start, env["SKILLSTREAM_TOPIC_MATCH_STARTED"], match_id, started))
        events.append((finish, env["SKILLSTREAM_TOPIC_MATCH_FINISHED"], match_id, finished))
    return sorted(events, key=lambda e: e[0])


def as_history(matches: list[Match]) -> list[HistoryMatch]:
    """``matches`` as a history that carries their starts (JSON lines with started_at)."""
    return [
        HistoryMatch(
            row,
            match_id,
            "1v1",
            finish,
            tuple(map(tuple, teams)),
            tuple(ranks),
            None,
            frozenset(),
            start,
        )
        for row, (match_id, start, finish, teams, ranks) in enumerate(matches)
    ]


def replayed(matches: list[Match]) -> dict[tuple[str, str], tuple[Any, ...]]:
    """Every (player, match)'s state after the match: rating, deviation, volatility, Rank
    Points, games; each match rated at its finish, as the live pipeline rates it, in the order
    of play and with its rule for overlapping matches (``skillstream replay --in-play-order``
    on a history that carries the starts)."""
    return replayed_history(as_history(matches), Modes())


def replayed_history(
    history: list[HistoryMatch], modes: Modes, ledger: Ledger | None = None
) -> dict[tuple[str, str], tuple[Any, ...]]:
    """:func:`replayed` for any history (modes, teams) rated with ``modes``; with ``ledger``,
    as `replay --in-play-order --corrections` rates it, each adjustment's state keyed by its
    id as the worker publishes it, a refunded result's as the player had it before."""
    replayer = Replayer(modes)
    out: dict[tuple[str, str], tuple[Any, ...]] = {}
    if ledger is not None and ledger.adjustments:
        plain_adjust = replayer.adjust
        ids = iter(a.audit.id for _, a in ledger.adjustments)

        def adjust(
            player_id: str, mode: str, change: Callable[[ModeConfig, PlayerState], PlayerState]
        ) -> tuple[ModeConfig, PlayerState, PlayerState]:
            adjust_id = next(ids)

            def recorded(config: ModeConfig, state: PlayerState) -> PlayerState:
                s = change(config, state)
                out[(player_id, adjust_id)] = _fields(s)
                return s

            return plain_adjust(player_id, mode, recorded)

        replayer.adjust = adjust  # type: ignore[method-assign]
    for match, fates in rated_in_order(history, replayer, play_order=True, ledger=ledger):
        assert fates is not None
        updates = replayer.apply_settled(match, fates)
        # A refunded result leaves the state as it was: published only to a player with a
        # rating who lost to the banned player.
        refunded, table = replayer.refunded, replayer.tables.get(replayer.mode_name(match), {})
        for pid, update in updates.items():
            refund = refunded.get(pid)
            kept: PlayerState | None = update.state
            if refund is not None:
                kept = table.get(pid) if pid != refund.player else None
            if kept is not None:
                out[(pid, match.match_id)] = _fields(kept)
    return out


def _fields(s: PlayerState) -> tuple[Any, ...]:
    return (s.rating, s.deviation, s.volatility, s.rank_points, s.games)


def assert_as_played(records: list[Any], matches: list[Match]) -> None:
    """Every (player, match) rated once (a redelivery repeats it byte for byte) and equal to
    replay in the order of play."""
    live: dict[tuple[str, str], tuple[Any, ...]] = {}
    seen: dict[tuple[str, str], bytes] = {}
    for record in records:
        event = orjson.loads(record.value())
        key = (event["player_id"], event["match_id"])
        assert seen.setdefault(key, record.value()) == record.value(), f"{key} rated twice"
        live[key] = event_fields(event)[:5]
    want = replayed(matches)
    assert live.keys() == want.keys(), "every (player, match) rated once"
    differ = sorted(key for key in want if live[key] != want[key])
    assert not differ, f"{len(differ)} of {len(want)} differ from replay: {differ[:5]}"


def live_states(ratings: list[dict[str, Any]]) -> dict[tuple[str, str], tuple[Any, ...]]:
    """The rating-changed events a worker wrote, as :func:`replayed` gives them: each (player,
    match) once (a second one fails the test)."""
    out: dict[tuple[str, str], tuple[Any, ...]] = {}
    for e in ratings:
        key = (e["player_id"], e["match_id"])
        assert key not in out, f"{key} rated twice"
        out[key] = (e["rating"], e["deviation"], e["volatility"], e["rank_points"], e["games"])
    return out
