"""The real batch runner in memory: tables in dictionaries, topics as FIFOs.

Every message goes through :class:`BatchRunner` exactly as the Faust app hands it over (one
message per batch here): processed against working copies, its outputs delivered to a FIFO
per (topic, partition) and acknowledged, then its state written. A (topic, partition) is
caught up when nothing of it is queued. Once the queue is empty, :meth:`Cluster.run` ticks
every match partition (as the leader would, each round a millisecond of wall time later) until
a round changes nothing, so the watermarks flow as they do live (docs/event-time.md).
:meth:`Cluster.step`, :meth:`Cluster.checkpoint` and :meth:`Cluster.roll_back` stop a run
anywhere and replay a worker killed after a commit (tests/unit/pipeline/test_rollback.py). Like
bytewax's testing source and sink, the ports are plain containers; the Faust adaptation itself
is tested against the real broker (tests/integration).
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter, deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from stream.config.modes import Modes
from stream.config.settings import Settings
from stream.deadletters import DeadLetter
from stream.pipeline.batches import (
    CLOCK_TABLE,
    MATCH_TABLE,
    PENDING_TABLE,
    RATING_TABLE,
    BatchRunner,
    Message,
)
from stream.pipeline.delivery import OutRecord
from stream.pipeline.matches import MatchProcessor
from stream.pipeline.partitioning import partition_for
from stream.pipeline.players import PlayerProcessor
from stream.protocol import PENDING, RATINGS, Tick, encode_command, rating_key
from stream.ratings.skill import PlayerState

SETTINGS = Settings(app_id="harness", cache_writer="off")
STARTED, FINISHED = SETTINGS.match_started_topic, SETTINGS.match_finished_topic
MATCH_COMMANDS, PLAYER_COMMANDS = SETTINGS.match_commands_topic, SETTINGS.player_commands_topic


class MemoryTables:
    """The table port on dictionaries of bytes, as the Faust tables hold them."""

    def __init__(self) -> None:
        self.tables: dict[str, dict[bytes, bytes]] = {
            name: {} for name in (MATCH_TABLE, CLOCK_TABLE, RATING_TABLE, PENDING_TABLE)
        }
        # (table, key): the changelog partition it was last written to.
        self.partitions: dict[tuple[str, bytes], int] = {}

    def contents(self, table: str) -> Mapping[bytes, bytes]:
        return self.tables[table]

    async def write(
        self, table: str, partition: int, changes: dict[bytes, bytes | None], last: Message
    ) -> None:
        data = self.tables[table]
        for key, value in changes.items():
            self.partitions[table, key] = partition
            if value is None:
                data.pop(key, None)
            else:
                data[key] = value


@dataclass(frozen=True)
class Checkpoint:
    """What a commit leaves behind: the tables as they were, and how much had been read."""

    tables: dict[str, dict[bytes, bytes]]
    read: int


class Cluster:
    def __init__(self, modes: Modes | None = None, partitions: int = 4) -> None:
        self.modes = modes or Modes()
        self.partitions = partitions
        self.store = MemoryTables()
        self.queue: deque[tuple[str, int, bytes]] = deque()
        self.ratings: list[dict[str, Any]] = []
        self.dead_letters: list[DeadLetter] = []
        # What the processors counted (the metrics' pipeline events), over every batch.
        self.counts: Counter[str] = Counter()
        self.offset = 0
        # Every message delivered so far, to deliver again (redelivery after a crash).
        self.delivered: list[tuple[str, int, bytes]] = []
        self.wall = 1_000_000.0
        # Unexpected errors fail the test, unless it is about them.
        self.allow_internal_errors = False
        # Rounds of ticks after the queue empties (0: none, the test ticks by itself).
        self.tick_rounds = 50
        # (topic, partition)s whose messages stay queued, unread, until released: a worker
        # that has not got round to them yet.
        self.held: set[tuple[str, int]] = set()
        self.runner = BatchRunner(
            SETTINGS,
            MatchProcessor(self.modes, partitions=partitions, retention_seconds=600),
            PlayerProcessor(self.modes, partitions=partitions),
            self.store,
            self._deliver,
            self._caught_up,
            wall_clock=lambda: self.wall,
        )

    @property
    def matches(self) -> MatchProcessor:
        return self.runner.matches

    @matches.setter
    def matches(self, processor: MatchProcessor) -> None:
        self.runner.matches = processor

    @property
    def match_table(self) -> dict[bytes, bytes]:
        return self.store.tables[MATCH_TABLE]

    @property
    def rating_table(self) -> dict[bytes, bytes]:
        return self.store.tables[RATING_TABLE]

    @property
    def pending_table(self) -> dict[bytes, bytes]:
        return self.store.tables[PENDING_TABLE]

    # --- inputs ---------------------------------------------------------------------------

    def send(self, topic: str, event: dict[str, Any] | bytes, partition: int | None = None) -> None:
        value = event if isinstance(event, bytes) else orjson.dumps(event)
        if partition is None:
            key = event["match_id"] if isinstance(event, dict) else "x"
            partition = partition_for(key, self.partitions)
        self.queue.append((topic, partition, value))

    def tick(self, wall: float) -> None:
        self.wall = wall
        value = orjson.dumps([encode_command(Tick(wall))])
        for p in range(self.partitions):
            self.queue.append((MATCH_COMMANDS, p, value))

    def run(self) -> None:
        """Deliver every queued message, and what it produces, until the queue is empty; then
        tick until a round of ticks changes nothing."""
        asyncio.run(self._run())

    def step(self, count: int) -> None:
        """Deliver the next ``count`` messages, ticking whenever nothing is queued (as
        :meth:`run` does), so the run can be stopped anywhere."""

        async def steps() -> None:
            for _ in range(count):
                if not self.queue:
                    self.tick(self.wall + 0.001)
                await self._drain(1)

        asyncio.run(steps())

    def checkpoint(self) -> Checkpoint:
        tables = {name: dict(table) for name, table in self.store.tables.items()}
        return Checkpoint(tables, len(self.delivered))

    def roll_back(self, partitions: set[int], to: Checkpoint, rng: random.Random) -> None:
        """A worker that owned ``partitions`` (their match and player sides) killed after its
        commit at ``to``, and the rebalance that follows: those partitions' table records go
        back to what they were then, and what they read since is read again, each input in
        order but the inputs interleaved at random, as the next owner's consumer may serve
        them. What they sent stays sent. Every partition's memory is rebuilt from the tables."""
        store = self.store
        for name, table in store.tables.items():
            then = to.tables[name]
            for key in {*table, *then}:
                if store.partitions.get((name, key)) in partitions:
                    if key in then:
                        table[key] = then[key]
                    else:
                        table.pop(key, None)
        inputs: dict[tuple[str, int], list[tuple[str, int, bytes]]] = {}
        for item in self.delivered[to.read :]:
            if item[1] in partitions:
                inputs.setdefault(item[:2], []).append(item)
        again: list[tuple[str, int, bytes]] = []
        while inputs:
            source = rng.choice(sorted(inputs))
            again.append(inputs[source].pop(0))
            if not inputs[source]:
                del inputs[source]
        # Read before anything sent to those partitions since.
        self.queue.extendleft(reversed(again))
        self.runner.forget(range(self.partitions))

    def hold(self, topic: str, partition: int) -> None:
        self.held.add((topic, partition))

    def release(self, topic: str, partition: int) -> None:
        self.held.discard((topic, partition))

    def _caught_up(self, topic: str, partition: int, reached: int | None) -> bool:
        return not any(t == topic and p == partition for t, p, _ in self.queue)

    def _fingerprint(self) -> object:
        runner = self.runner
        return (
            len(self.ratings),
            len(self.dead_letters),
            {name: dict(table) for name, table in self.store.tables.items()},
            # How many partitions have reported, not what: the values move with every tick.
            {n: len(p.time.reports) for n, p in runner.match_partitions.items()},
            {n: len(p.marks) for n, p in runner.player_partitions.items()},
            {n: len(p.abandons) for n, p in runner.match_partitions.items()},
        )

    async def _run(self) -> None:
        await self._drain()
        for round_ in range(self.tick_rounds):
            before = self._fingerprint()
            self.tick(self.wall + 0.001)
            await self._drain()
            # Three rounds at least: progress reports, then watermarks, then what they allow.
            if round_ >= 2 and self._fingerprint() == before:
                break

    def _next(self) -> tuple[str, int, bytes] | None:
        for index, (topic, partition, value) in enumerate(self.queue):
            if (topic, partition) not in self.held:
                del self.queue[index]
                return topic, partition, value
        return None

    async def _drain(self, limit: int | None = None) -> None:
        while (limit is None or limit > 0) and (item := self._next()) is not None:
            if limit is not None:
                limit -= 1
            topic, partition, value = item
            self.delivered.append((topic, partition, value))
            self.offset += 1
            message = Message(topic, partition, self.offset, None, None, value)
            if topic == PLAYER_COMMANDS:
                report = await self.runner.player_batch([message])
            else:
                report = await self.runner.match_batch([message])
            self.counts.update(report.out.counts)
        # The runner contains unexpected errors as dead letters: here they fail the test.
        internal = [d.reason for d in self.dead_letters if d.reason.startswith("internal error")]
        assert self.allow_internal_errors or not internal, internal

    async def _deliver(self, agent: str, records: list[OutRecord]) -> list[DeadLetter]:
        for record in records:
            if record.letter is not None:
                self.dead_letters.append(record.letter)
            elif record.topic == SETTINGS.rating_changed_topic:
                self.ratings.append(orjson.loads(record.value or b""))
            else:
                assert record.partition is not None and record.value is not None
                self.queue.append((record.topic, record.partition, record.value))
        return []

    # --- reading the state ----------------------------------------------------------------

    def state(self, player: str, mode: str) -> PlayerState | None:
        raw = self.rating_table.get(RATINGS.key_bytes(rating_key(player, mode)))
        return None if raw is None else RATINGS.value(raw).state

    def pending(self, player: str) -> dict[str, Any]:
        raw = self.pending_table.get(PENDING.key_bytes(player))
        return {} if raw is None else dict(PENDING.value(raw).matches)

    def outcomes(self) -> dict[tuple[str, str], str]:
        return {(r["player_id"], r["match_id"]): r["outcome"] for r in self.ratings}


def epoch_ms(seconds: float) -> int:
    """Epoch milliseconds, as producers may send."""
    return round(seconds * 1000)
