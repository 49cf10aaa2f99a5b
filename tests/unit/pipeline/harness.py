"""The real batch runner in memory: tables in dictionaries, topics as logs.

Every (topic, partition) is an append-only log; the *queue* holds what the consumer has
fetched and not yet handed over, in arrival order. Every message goes through
:class:`BatchRunner` as the Faust app hands it over (one message per batch unless ``batch``
says more: then the next messages of the same agent, across partitions): admitted against its
partition's position, processed against working copies, its outputs appended to their logs
and queued, then its state written. A partition the runner asks to read again (``rewind``) is
sought: its queued records are dropped and its log is queued again from the offset. A
(topic, partition) is caught up when the runner's position has reached the log's end. Once the
queue is empty, :meth:`Cluster.run` ticks every match partition (as the leader would, each
round a millisecond of wall time later) until a round changes nothing, so the watermarks flow
as they do live (docs/event-time.md). :meth:`Cluster.step`, :meth:`Cluster.checkpoint` and
:meth:`Cluster.roll_back` stop a run anywhere and replay a worker killed after a commit
(tests/unit/pipeline/test_rollback.py); :meth:`Cluster.lose` drops one record on its way to
the runner, as Faust did after an assignment (stream/pipeline/positions.py). Like bytewax's
testing source and sink, the ports are plain containers; the Faust adaptation itself is
tested against the real broker (tests/integration).
"""

from __future__ import annotations

import asyncio
import random
from collections import Counter, deque
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

import builders
import orjson

from stream.config.modes import Modes
from stream.config.settings import TABLES, CacheSettings, Settings
from stream.deadletters import DeadLetter
from stream.delivery import OutRecord
from stream.pipeline.batches import MATCH_TABLE, PENDING_TABLE, RATING_TABLE, BatchRunner, Message
from stream.pipeline.eventtime import SETTLE_TICKS
from stream.pipeline.matches import MatchProcessor
from stream.pipeline.partitioning import partition_for
from stream.pipeline.players import PlayerProcessor
from stream.pipeline.positions import InputPositions
from stream.pipeline.watermarks import tick_wanted
from stream.protocol import MATCHES, PENDING, RATINGS, Tick, encode_command, rating_key
from stream.ratings.skill import PlayerState

SETTINGS = Settings(app_id="harness", cache=CacheSettings(writer="off"))
STARTED, FINISHED = SETTINGS.topics.match_started, SETTINGS.topics.match_finished
MATCH_COMMANDS, PLAYER_COMMANDS = SETTINGS.match_commands_topic, SETTINGS.player_commands_topic


class MemoryTables:
    """The table port on dictionaries of bytes, as the Faust tables hold them."""

    def __init__(self) -> None:
        self.tables: dict[str, dict[bytes, bytes]] = {name: {} for name in TABLES}
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


# A record as the consumer hands it over: (topic, partition, offset, value).
Item = tuple[str, int, int, bytes]


@dataclass(frozen=True)
class Checkpoint:
    """What a commit leaves behind: the tables as they were, how much had been read, and the
    position of every input partition (where reading resumes after a crash)."""

    tables: dict[str, dict[bytes, bytes]]
    read: int
    positions: dict[tuple[str, int], int]


class AssignedPositions(InputPositions):
    """Every partition assigned at the start of its log, as a consumer group's first member
    finds it (the Faust adapter learns the starts from the consumer's seeks)."""

    def position(self, topic: str, partition: int) -> int | None:
        found = super().position(topic, partition)
        return 0 if found is None else found


# Messages per runner call unless a Cluster is given ``batch``: tests/conftest.py
# runs the modules that use the ``batched`` fixture once with one message per call and once
# with seven (the next ones of the same agent, across partitions, as Faust batches them).
DEFAULT_BATCH = 1


class Cluster:
    def __init__(
        self,
        modes: Modes | None = None,
        partitions: int = 4,
        report_seconds: float | None = 0.0,
        *,
        batch: int | None = None,
        lateness: float = 0.0,
    ) -> None:
        self.modes = modes or Modes()
        self.partitions = partitions
        self.store = MemoryTables()
        self.logs: dict[tuple[str, int], list[bytes]] = {}
        self.queue: deque[Item] = deque()
        self.ratings: list[dict[str, Any]] = []
        self.dead_letters: list[DeadLetter] = []
        # What the processors counted (the metrics' pipeline events), over every batch.
        self.counts: Counter[str] = Counter()
        # What the processors asked the worker to log.
        self.notes: list[str] = []
        # Every message delivered so far (redelivery after a crash).
        self.delivered: list[Item] = []
        # Messages per runner call (the next ones of the same agent, across partitions).
        self.batch = DEFAULT_BATCH if batch is None else batch
        # Records dropped once on their way to the runner: (topic, partition, offset), and the
        # n-th deliveries dropped (counting from 0 over the run).
        self.lost: set[tuple[str, int, int]] = set()
        self.lost_deliveries: set[int] = set()
        # Partitions read again at the runner's request, with the offset.
        self.rewinds: list[tuple[str, int, int]] = []
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
            # Reports at the end of every batch (0.0), as a busy worker makes them, besides the
            # ticks; None: on ticks only.
            MatchProcessor(
                self.modes,
                partitions=partitions,
                retention_seconds=600,
                report_seconds=report_seconds,
                lateness_seconds=lateness,
            ),
            PlayerProcessor(self.modes, partitions=partitions),
            self.store,
            self._deliver,
            self._end_offset,
            wall_clock=lambda: self.wall,
        )
        self.runner.positions = self.positions = AssignedPositions()

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

    def append(self, topic: str, partition: int, value: bytes) -> Item:
        """Append a record to its log and queue it for the consumer."""
        log = self.logs.setdefault((topic, partition), [])
        item = (topic, partition, len(log), value)
        log.append(value)
        self.queue.append(item)
        return item

    def send(self, topic: str, event: dict[str, Any] | bytes, partition: int | None = None) -> None:
        value = event if isinstance(event, bytes) else orjson.dumps(event)
        if partition is None:
            key = event["match_id"] if isinstance(event, dict) else "x"
            partition = partition_for(key, self.partitions)
        self.append(topic, partition, value)

    def tick(self, wall: float) -> None:
        """The worker's tick, to the combiner's partition (match partition 0), when the
        combiner wants one (as stream/pipeline/topology.py sends it)."""
        self.wall = wall
        if tick_wanted(self.runner.match_partitions.get(0)):
            self.append(MATCH_COMMANDS, 0, orjson.dumps([encode_command(Tick(wall))]))

    def message(self, item: Item) -> Message:
        topic, partition, offset, value = item
        return Message(topic, partition, offset, None, None, value)

    def lose(self, topic: str, partition: int, offset: int) -> None:
        """The record at ``offset`` does not reach the runner when it is next read."""
        self.lost.add((topic, partition, offset))

    def seek(self, topic: str, partition: int, offset: int) -> None:
        """Read (topic, partition) again from ``offset``, before anything else queued."""
        tp = (topic, partition)
        kept = [item for item in self.queue if item[:2] != tp]
        again = [(topic, partition, o, v) for o, v in enumerate(self.logs.get(tp, []))][offset:]
        self.queue = deque([*again, *kept])

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
        positions = {tp: self.positions.position(*tp) or 0 for tp in self.logs}
        return Checkpoint(tables, len(self.delivered), positions)

    def roll_back(
        self,
        partitions: set[int],
        to: Checkpoint,
        rng: random.Random,
        *,
        flushed: float = 0.0,
        kept_tables: Collection[str] = (),
    ) -> None:
        """A worker that owned ``partitions`` (their match and player sides) killed after its
        commit at ``to``, and the rebalance that follows: those partitions' table records go
        back to what they were then, and what they read since is read again, each input in
        order but the inputs interleaved at random, as the next owner's consumer may serve
        them. What they sent stays sent. Every partition's memory is rebuilt from the tables.

        ``flushed``: the share of the records changed since the commit that reached their
        changelog anyway, each drawn at random (a worker killed in the middle of the next
        commit's flush: the changelogs are written table by table, a record batch at a time,
        so any subset of the records may have arrived while the offsets were not committed).
        ``kept_tables``: tables whose every record reached its changelog (the others' did not,
        but for ``flushed``)."""
        store = self.store
        for name, table in store.tables.items():
            if name in kept_tables:
                continue
            then = to.tables[name]
            for key in sorted({*table, *then}):
                if table.get(key) != then.get(key) and rng.random() < flushed:
                    continue
                if store.partitions.get((name, key)) in partitions:
                    if key in then:
                        table[key] = then[key]
                    else:
                        table.pop(key, None)
        # Each of their input partitions is read again from its position at the commit, each
        # in order, the partitions interleaved at random, before anything else.
        inputs: dict[tuple[str, int], list[Item]] = {}
        for tp, log in self.logs.items():
            if tp[1] in partitions and tp[0] in (STARTED, FINISHED, *COMMANDS):
                start = to.positions.get(tp, 0)
                inputs[tp] = [(*tp, offset, log[offset]) for offset in range(start, len(log))]
        self.queue = deque(item for item in self.queue if item[1] not in partitions)
        again: list[Item] = []
        for source in [tp for tp in sorted(inputs) if not inputs[tp]]:
            del inputs[source]
        while inputs:
            source = rng.choice(sorted(inputs))
            again.append(inputs[source].pop(0))
            if not inputs[source]:
                del inputs[source]
        self.queue.extendleft(reversed(again))
        self.runner.revoked(partitions)
        self.positions.sought({tp: to.positions.get(tp, 0) for tp in self.logs})
        self.runner.forget(range(self.partitions))

    def reread(self, offsets: Mapping[tuple[str, int], int]) -> None:
        """A worker that owned these partitions gone after a commit at ``offsets`` but with its
        table changes all written (the state ahead of the commit): their partitions (all topics
        with those numbers) come back with their memory rebuilt from the tables, and these
        topic partitions are read again from the offsets."""
        numbers = {partition for _, partition in offsets}
        keep = {tp: self.positions.position(*tp) or 0 for tp in self.logs if tp[1] in numbers}
        self.runner.revoked(numbers)
        self.positions.sought({**keep, **offsets})
        for (topic, partition), offset in offsets.items():
            self.seek(topic, partition, offset)

    def hold(self, topic: str, partition: int) -> None:
        self.held.add((topic, partition))

    def release(self, topic: str, partition: int) -> None:
        self.held.discard((topic, partition))

    def _end_offset(self, topic: str, partition: int) -> tuple[int, float]:
        # The FIFOs are the broker, always answered now.
        return len(self.logs.get((topic, partition), [])), self.wall

    def _fingerprint(self) -> object:
        runner = self.runner
        return (
            len(self.ratings),
            len(self.dead_letters),
            {name: dict(table) for name, table in self.store.tables.items()},
            # What is known of event time, not its values: they move with every tick.
            {n: p.time.now is None for n, p in runner.match_partitions.items()},
            {n: p.mark is None for n, p in runner.player_partitions.items()},
            {n: p.abandons is None for n, p in runner.match_partitions.items()},
        )

    def unstick(self) -> bool:
        """The stall check: a partition with records past its position and nothing of it
        queued is sought to its position (a record lost with nothing after it to show the
        gap). True if any was."""
        queued = {item[:2] for item in self.queue}
        stuck: list[tuple[tuple[str, int], int]] = []
        for tp, log in self.logs.items():
            position = self.positions.position(*tp)
            if position is None or position >= len(log):
                continue
            if tp not in queued and tp not in self.held:
                stuck.append((tp, position))
        for (topic, partition), position in stuck:
            self.rewinds.append((topic, partition, position))
            self.seek(topic, partition, position)
        return bool(stuck)

    async def _run(self) -> None:
        await self._drain()
        while self.unstick():
            await self._drain()
        quiet = 0
        for round_ in range(self.tick_rounds):
            before = self._fingerprint()
            self.tick(self.wall + 0.001)
            await self._drain()
            while self.unstick():
                await self._drain()
            quiet = quiet + 1 if self._fingerprint() == before else 0
            # Three rounds at least: progress reports, then watermarks, then what they allow;
            # and decisions wait until event time has stood past them for SETTLE_TICKS ticks.
            if round_ >= 2 and quiet > SETTLE_TICKS:
                break

    def _next(self, agent: str | None = None) -> Item | None:
        """The next record not held back (of ``agent``'s topics, and only if it comes next)."""
        for index, item in enumerate(self.queue):
            if item[:2] not in self.held:
                if agent is not None and _agent(item[0]) != agent:
                    return None
                del self.queue[index]
                return item
        return None

    async def _drain(self, limit: int | None = None) -> None:
        while (limit is None or limit > 0) and (item := self._next()) is not None:
            agent = _agent(item[0])
            items = [item]
            while len(items) < self.batch and (limit is None or len(items) < limit):
                following = self._next(agent)
                if following is None:
                    break
                items.append(following)
            if limit is not None:
                limit -= len(items)
            messages = []
            for item in items:
                nth = len(self.delivered)
                self.delivered.append(item)
                if item[:3] in self.lost or nth in self.lost_deliveries:
                    self.lost.discard(item[:3])
                    continue
                messages.append(self.message(item))
            if not messages:
                continue
            if agent == "players":
                report = await self.runner.player_batch(messages)
            else:
                report = await self.runner.match_batch(messages)
            self.counts.update(report.out.counts)
            self.notes.extend(report.out.notes)
            admission = report.admission
            for (topic, partition), offset in {**admission.restart, **admission.rewind}.items():
                self.rewinds.append((topic, partition, offset))
                self.seek(topic, partition, offset)
        # The runner contains unexpected errors as dead letters: here they fail the test.
        internal = [d.reason for d in self.dead_letters if d.reason.startswith("internal error")]
        assert self.allow_internal_errors or not internal, internal

    async def _deliver(self, agent: str, records: list[OutRecord]) -> list[DeadLetter]:
        for record in records:
            if record.letter is not None:
                self.dead_letters.append(record.letter)
            elif record.topic == SETTINGS.topics.rating_changed:
                self.ratings.append(orjson.loads(record.value or b""))
            else:
                assert record.partition is not None and record.value is not None
                self.append(record.topic, record.partition, record.value)
        return []

    # --- reading the state ----------------------------------------------------------------

    def state(self, player: str, mode: str) -> PlayerState | None:
        raw = self.rating_table.get(RATINGS.key_bytes(rating_key(player, mode)))
        return None if raw is None else RATINGS.value(raw).state

    def pending(self, player: str) -> dict[str, Any]:
        raw = self.pending_table.get(PENDING.key_bytes(player))
        return {} if raw is None else dict(PENDING.value(raw).matches)

    def open_matches(self) -> list[str]:
        """Matches with a line-up not settled yet."""
        entries = ((orjson.loads(k), MATCHES.value(v)) for k, v in self.match_table.items())
        return sorted(m for m, e in entries if e.teams is not None and e.done is None)

    def outcomes(self) -> dict[tuple[str, str], str]:
        return {(r["player_id"], r["match_id"]): r["outcome"] for r in self.ratings}


COMMANDS = (MATCH_COMMANDS, PLAYER_COMMANDS)
# Re-exported from tests/builders.py: the pipeline tests import them from here.
T0 = builders.T0
epoch_ms = builders.epoch_ms


def a_match(c: Cluster, match_id: str = "m1", players: tuple[str, str] = ("a", "b")) -> None:
    """One 1v1 match in mode ``1v1``, started at T0, won by the first player a minute later."""
    start = {"match_id": match_id, "mode": "1v1", "started_at": epoch_ms(T0)}
    c.send(STARTED, {**start, "teams": [[players[0]], [players[1]]]})
    finish = {"match_id": match_id, "mode": "1v1", "finished_at": epoch_ms(T0 + 60)}
    c.send(FINISHED, {**finish, "ranks": [0, 1]})


def a_starts_two(gap: float) -> Cluster:
    """A cluster in which player a starts m1 against b at T0 and, ``gap`` seconds later, m2
    against c: nothing run yet."""
    c = Cluster()
    c.send(STARTED, builders.start("m1", [["a"], ["b"]], T0))
    c.send(STARTED, builders.start("m2", [["a"], ["c"]], T0 + gap))
    return c


def _agent(topic: str) -> str:
    return "players" if topic == PLAYER_COMMANDS else "matches"


def drain_in_order(c: Cluster, seed: int) -> None:
    """Hold every input partition, then release them one by one in a seeded order, running
    (and ticking) in between: each release is a partition the worker gets round to later."""
    order = [(topic, p) for topic in (STARTED, FINISHED) for p in range(c.partitions)]
    random.Random(seed).shuffle(order)
    for tp in order:
        c.hold(*tp)
    c.run()
    for tp in order:
        c.release(*tp)
        c.run()
