"""The pipeline's processors wired together in memory: Kafka's routing without Kafka.

Messages go through a FIFO per (topic, partition) and every batch applies its state changes
after its outputs are queued, as the Faust layer does. Tests of the Faust wiring itself run
against the real broker (tests/integration).
"""

from __future__ import annotations

from collections import deque
from typing import Any

import orjson

from stream.config.modes import Modes
from stream.deadletters import DeadLetter, Origin
from stream.pipeline.matches import MatchProcessor
from stream.pipeline.outbox import Outbox
from stream.pipeline.partitioning import partition_for
from stream.pipeline.players import PlayerProcessor
from stream.pipeline.records import decode_state, rating_key
from stream.pipeline.view import StateView, encode_key
from stream.ratings.skill import PlayerState

STARTED, FINISHED = "match-started", "match-finished"


class Cluster:
    def __init__(self, modes: Modes | None = None, partitions: int = 4) -> None:
        self.modes = modes or Modes()
        self.partitions = partitions
        self.matches = MatchProcessor(self.modes, partitions=partitions, retention_seconds=600)
        self.players = PlayerProcessor(self.modes)
        self.match_table: dict[bytes, bytes] = {}
        self.rating_table: dict[bytes, bytes] = {}
        self.pending_table: dict[bytes, bytes] = {}
        self.queue: deque[tuple[str, int, Any]] = deque()
        self.ratings: list[dict[str, Any]] = []
        self.dead_letters: list[DeadLetter] = []
        self.offset = 0
        # Every message delivered so far, to deliver again (redelivery after a crash).
        self.delivered: list[tuple[str, int, Any]] = []
        self.wall = 1_000_000.0

    # --- inputs ---------------------------------------------------------------------------

    def send(self, topic: str, event: dict[str, Any] | bytes, partition: int | None = None) -> None:
        value = event if isinstance(event, bytes) else orjson.dumps(event)
        if partition is None:
            key = event["match_id"] if isinstance(event, dict) else "x"
            partition = partition_for(key, self.partitions)
        self.queue.append((topic, partition, value))

    def tick(self, wall: float) -> None:
        self.wall = wall
        for p in range(self.partitions):
            self.queue.append(("match-commands", p, [["tick", wall]]))

    def run(self) -> None:
        while self.queue:
            topic, partition, payload = self.queue.popleft()
            self.delivered.append((topic, partition, payload))
            self.offset += 1
            origin = Origin(topic, partition, self.offset)
            out = Outbox()
            if topic == "player-commands":
                ratings = StateView(self.rating_table)
                pending = StateView(self.pending_table)
                self.players.on_commands(ratings, pending, out, payload)
                self._route(out)
                _apply(self.rating_table, ratings)
                _apply(self.pending_table, pending)
                continue
            view = StateView(self.match_table)
            if topic in (STARTED, FINISHED):
                kind = topic.removeprefix("match-")
                self.matches.on_event(view, out, partition, kind, None, payload, origin, self.wall)
            else:
                self.matches.on_commands(view, out, partition, payload, origin, self.wall)
            self._route(out)
            _apply(self.match_table, view)

    def _route(self, out: Outbox) -> None:
        for p, commands in out.player_commands.items():
            self.queue.append(("player-commands", p, orjson.loads(orjson.dumps(commands))))
        for p, commands in out.match_commands.items():
            self.queue.append(("match-commands", p, orjson.loads(orjson.dumps(commands))))
        self.ratings.extend(out.ratings)
        self.dead_letters.extend(out.dead_letters)

    # --- reading the state ----------------------------------------------------------------

    def state(self, player: str, mode: str) -> PlayerState | None:
        raw = self.rating_table.get(encode_key(rating_key(player, mode)))
        return None if raw is None else decode_state(orjson.loads(raw)["s"])

    def pending(self, player: str) -> dict[str, Any]:
        raw = self.pending_table.get(encode_key(player))
        return {} if raw is None else dict(orjson.loads(raw)["m"])

    def outcomes(self) -> dict[tuple[str, str], str]:
        return {(r["player_id"], r["match_id"]): r["outcome"] for r in self.ratings}


def _apply(table: dict[bytes, bytes], view: StateView) -> None:
    for key, value in view.changes().items():
        if value is None:
            table.pop(key, None)
        else:
            table[key] = value


def epoch_ms(seconds: float) -> int:
    """Epoch milliseconds, as producers may send."""
    return round(seconds * 1000)
