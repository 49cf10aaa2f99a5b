"""The player side: pending matches, snapshots, and the rating update itself.

A player lives on one partition (Kafka's default partitioner on the player id) and has:
- a rating record per mode (table ``ratings``): the state, its version, and the ids of the
  latest matches applied, which is what makes a redelivered result a no-op;
- a pending record (table ``pending``): the matches the player has started and not settled.

Snapshots follow the player's own order of play: a player's snapshot for a match is sent only
once every older pending match of theirs is settled, so it includes every result that came
before. For a history of non-overlapping matches this makes the live ratings equal
``skillstream replay`` exactly. Starting a newer match while an older one is pending asks the
older match's partition to abandon it (it decides, by its own event time, whether the result
came within the grace period).

On replay: a result whose match id is in the rating record's recent list is skipped; a join
for a match already pending re-sends the snapshot; a cancel for a match not pending does
nothing. The rating record is the only place that says "applied", so a crash between the two
tables' writes cannot apply a result twice or lose it.
"""

from __future__ import annotations

from typing import Any

from stream.config.modes import Modes
from stream.pipeline.outbox import Outbox
from stream.pipeline.records import (
    RECENT_MATCHES,
    decode_state,
    encode_state,
    rating_changed,
    rating_key,
)
from stream.pipeline.view import StateView
from stream.ratings.engine import MatchView, initial_state, rate_player
from stream.ratings.resolution import outcome_of
from stream.ratings.skill import PlayerStats


class PlayerProcessor:
    """Handles packed player commands for the player partitions this worker owns."""

    def __init__(self, modes: Modes) -> None:
        self.modes = modes

    def on_commands(
        self,
        ratings: StateView,
        pending: StateView,
        out: Outbox,
        commands: list[list[Any]],
    ) -> None:
        for command in commands:
            kind = command[0]
            if kind == "join":
                _, match_id, player_id, mode, started_at, home = command
                self._join(ratings, pending, out, match_id, player_id, mode, started_at, home)
            elif kind == "rate":
                self._rate(ratings, pending, out, command)
            elif kind == "cancel":
                _, match_id, players = command
                for player_id in players:
                    self._release(ratings, pending, out, match_id, player_id, remember=True)
            else:
                raise ValueError(f"unknown player command {kind!r}")

    # --- handlers -----------------------------------------------------------------------------

    def _join(
        self,
        ratings: StateView,
        pending: StateView,
        out: Outbox,
        match_id: str,
        player_id: str,
        mode: str,
        started_at: float,
        home: int,
    ) -> None:
        record = pending.get(player_id) or {"m": {}, "done": []}
        rated = ratings.get(rating_key(player_id, mode))
        if match_id in record["done"] or (rated is not None and match_id in rated["r"]):
            # Settled long ago: say so, with the current state for the others' benefit.
            state = None if rated is None else rated["s"]
            out.to_match(home, ["snap", match_id, player_id, state, True])
            return
        matches = record["m"]
        if match_id in matches:
            entry = matches[match_id]
            if entry["snap"]:
                out.to_match(home, ["snap", match_id, player_id, _state_of(rated), False])
            return
        matches[match_id] = {"mode": mode, "at": started_at, "home": home, "snap": False}
        self._reconcile(ratings, pending, out, player_id, record)

    def _rate(
        self, ratings: StateView, pending: StateView, out: Outbox, command: list[Any]
    ) -> None:
        # A 10th element (the finish's Kafka timestamp) is optional: commands from before it
        # existed may still be in the topic during an upgrade.
        _, match_id, mode_name, at, teams, ranks, stats, snaps, players, *rest = command
        finished_ms = rest[0] if rest else None
        mode = self.modes.get(mode_name)
        match = MatchView(
            tuple(tuple(team) for team in teams),
            tuple(ranks),
            at,
            None
            if stats is None
            else {pid: PlayerStats(score, seconds) for pid, (score, seconds) in stats.items()},
        )
        snapshots = {pid: decode_state(s) for pid, s in snaps.items() if s is not None}
        for player_id, forced, label in players:
            key = rating_key(player_id, mode_name)
            rated = ratings.get(key)
            if rated is not None and match_id in rated["r"]:
                out.count("duplicate_results")
            else:
                state = None if rated is None else decode_state(rated["s"])
                update = rate_player(mode, player_id, state, match, snapshots, forced)
                version = 1 if rated is None else rated["v"] + 1
                recent = [] if rated is None else rated["r"]
                recent = [*recent[-(RECENT_MATCHES - 1) :], match_id]
                ratings.put(key, {"s": encode_state(update.state), "v": version, "r": recent})
                out.rating(
                    finished_ms=finished_ms,
                    event=rating_changed(
                        player_id=player_id,
                        mode=mode,
                        match_id=match_id,
                        outcome=label or outcome_of(update.score).value,
                        before=state or initial_state(mode),
                        after=update.state,
                        version=version,
                        expected_score=update.expected_score,
                        at=at,
                    ),
                )
            self._release(ratings, pending, out, match_id, player_id, remember=False)

    def _release(
        self,
        ratings: StateView,
        pending: StateView,
        out: Outbox,
        match_id: str,
        player_id: str,
        *,
        remember: bool,
    ) -> None:
        """The match is settled for the player: drop it and let newer matches go ahead."""
        record = pending.get(player_id)
        if record is None:
            if not remember:
                return
            record = {"m": {}, "done": []}
        changed = record["m"].pop(match_id, None) is not None
        if remember and match_id not in record["done"]:
            # A cancelled match leaves no trace in the rating record: remember it here so a
            # redelivered join does not make it pending again.
            record["done"] = [*record["done"][-(RECENT_MATCHES - 1) :], match_id]
            changed = True
        if changed:
            self._reconcile(ratings, pending, out, player_id, record)

    def _reconcile(
        self,
        ratings: StateView,
        pending: StateView,
        out: Outbox,
        player_id: str,
        record: dict[str, Any],
    ) -> None:
        """Send what the pending matches now allow, then store the record.

        The oldest pending match may have its snapshot; every match with a newer one pending is
        reported for abandonment, once, with the start of the match that superseded it.
        """
        matches = record["m"]
        order = sorted(matches.items(), key=lambda item: (item[1]["at"], item[0]))
        for index, (match_id, entry) in enumerate(order):
            if index == 0 and not entry["snap"]:
                rated = ratings.get(rating_key(player_id, entry["mode"]))
                out.to_match(entry["home"], ["snap", match_id, player_id, _state_of(rated), False])
                entry["snap"] = True
            if index + 1 < len(order) and not entry.get("req"):
                since = order[index + 1][1]["at"]
                out.to_match(entry["home"], ["abandon", match_id, player_id, since])
                entry["req"] = True
        if matches or record["done"]:
            pending.put(player_id, record)
        else:
            pending.delete(player_id)


def _state_of(rated: dict[str, Any] | None) -> list[Any] | None:
    return None if rated is None else rated["s"]
