"""The batch handlers of the live pipeline; the Faust wiring that drives them is topology.py.

Hops per match (1v1): match-started and match-finished in; one ``join`` per player partition;
one ``snap`` reply per player; one ``rate`` per player partition; one rating-changed per player.
The command hops are *packed*: each batch sends one message per destination partition holding
all its commands, so Faust's per-message cost is paid per batch, not per command.

Order of effects in a batch (what makes at-least-once safe):
1. process every event against working copies of the table values (:class:`StateView`);
2. send the outbox (commands, rating-changed, dead letters) and wait until Kafka has it;
3. write the changed table values (their changelogs) and the partition clocks;
4. Faust acks the batch; offsets are committed later, after its producer is flushed.
A crash before 3 replays the batch from unchanged state and sends the same bytes again; a crash
after 3 replays it against the new state, which recognises every event as done.

Failure, contained to the event: an event that cannot be parsed or used goes to the dead-letter
topic; an unexpected error while processing one event (or one command of a packed message)
dead-letters that event or command (reason ``internal error``) and the batch goes on. An output
Kafka refuses for its size becomes a dead letter; dead letters are cut to fit
(stream/pipeline/delivery.py).

Failure that stops the batch: Kafka unreachable or any error outside one event's handling. The
batch is not acked and is redone in place, with backoff, until it succeeds (one log line when it
starts failing, one when it works again); the agent never raises, so Faust neither restarts it
nor acks past the batch. If the worker stops or a rebalance cancels the batch meanwhile, its
acks are withheld (stream/pipeline/workarounds/acks.py) and whoever owns the partitions next
redoes it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any

import orjson
from faust.stores.memory import Store as MemoryStore
from faust.types import TP, EventT

from stream.config.settings import Settings
from stream.deadletters import DeadLetter, Origin
from stream.outage import Outage
from stream.pipeline import topology, workarounds
from stream.pipeline.delivery import Delivery, OutRecord, letter_record
from stream.pipeline.health import refresh_gauges
from stream.pipeline.matches import FINISHED, STARTED, MatchProcessor
from stream.pipeline.metrics import WorkerMetrics
from stream.pipeline.outbox import Outbox
from stream.pipeline.partitioning import partition_for
from stream.pipeline.players import PlayerProcessor
from stream.pipeline.view import StateView, encode_key
from stream.pipeline.watchdog import StallWatchdog
from stream.pipeline.workarounds.acks import withhold_acks
from stream.pipeline.workarounds.events import EventContext
from stream.ratings.modes import Modes

log = logging.getLogger("skillstream.worker")

# One packed message stays well under the producer's record limit (a quarter of it at most).
MAX_PACKED_BYTES = 256 * 1024
MAX_BACKOFF_SECONDS = 5.0


def pack(commands: list[list[Any]], budget: int = MAX_PACKED_BYTES) -> list[bytes]:
    """Commands as JSON arrays of at most about ``budget`` bytes each (a larger command alone)."""
    messages: list[bytes] = []
    chunk: list[bytes] = []
    size = 0
    for command in commands:
        encoded = orjson.dumps(command)
        if chunk and size + len(encoded) > budget:
            messages.append(b"[" + b",".join(chunk) + b"]")
            chunk, size = [], 0
        chunk.append(encoded)
        size += len(encoded) + 1
    if chunk:
        messages.append(b"[" + b",".join(chunk) + b"]")
    return messages


class Pipeline:
    """One worker's Faust app (stream/pipeline/topology.py), its tables and the processors its
    two agents drive, a batch at a time."""

    def __init__(self, settings: Settings, modes: Modes | None = None) -> None:
        self.settings = settings
        self.modes = settings.load_modes() if modes is None else modes
        s = settings
        workarounds.install(s)
        self.app = topology.faust_app(s)
        self.matches = MatchProcessor(
            self.modes,
            partitions=s.partitions,
            retention_seconds=s.retention_seconds,
            limits=s.limits,
            max_future_seconds=s.max_future_seconds,
        )
        self.players = PlayerProcessor(self.modes)
        self.counts: defaultdict[str, int] = defaultdict(int)
        self.metrics = WorkerMetrics()
        # One per agent: each reports its own outage.
        self.deliveries = {
            agent: Delivery(self._send, s.dead_letter_topic, s.max_request_bytes, agent)
            for agent in ("matches", "players")
        }
        self._pack_budget = min(MAX_PACKED_BYTES, s.max_request_bytes // 4)
        # Next offset to process per input partition (for the consumer-lag gauge and the
        # stall watchdog), and when each last moved.
        self._next_offsets: dict[TP, int] = {}
        self._progress_at: dict[TP, float] = {}
        agent_topics = {
            s.match_started_topic,
            s.match_finished_topic,
            s.match_commands_topic,
            s.player_commands_topic,
        }
        self.watchdog = StallWatchdog(
            self.app, agent_topics, self._next_offsets, self._progress_at, self.metrics
        )
        self._ready_match_partitions: set[int] = set()
        self._input_kinds = {s.match_started_topic: STARTED, s.match_finished_topic: FINISHED}
        self.match_in, self.player_in = topology.inputs(self.app, s)
        self.match_table, self.clock_table, self.rating_table, self.pending_table = topology.tables(
            self.app, s
        )
        topology.define(self)

    def forget_partitions(self, partitions: Iterable[int]) -> None:
        """Partitions revoked: their clocks and deadlines are rebuilt from the tables when they
        come back (they may have changed meanwhile)."""
        for partition in partitions:
            self._ready_match_partitions.discard(partition)
            self.matches.clocks.pop(partition, None)

    def refresh_gauges(self) -> None:
        refresh_gauges(self.app, self.metrics, self._next_offsets)

    def report(self) -> None:
        """The periodic report: gauges refreshed, the counts logged."""
        self.refresh_gauges()
        log.info("counts: %s", orjson.dumps(dict(sorted(self.counts.items()))).decode())

    async def _send(self, *args: Any) -> Awaitable[Any]:
        future: Awaitable[Any] = await self.app.producer.send(*args)
        return future

    async def until_done(
        self,
        handle: Callable[[Sequence[EventT[Any]]], Awaitable[None]],
        events: Sequence[EventT[Any]],
        outage: Outage,
    ) -> None:
        """Run ``handle(events)`` until it succeeds; never raise, never let the batch be acked
        unprocessed.

        An error redoes the whole batch after a backoff (0.1 s doubling to 5 s): the first
        failure is logged with its traceback, later ones only counted, and the end of the run
        of failures is logged. The match partitions' clocks and deadlines are rebuilt from the
        tables first, as after a restart. Cancellation (stop, rebalance) withholds the
        batch's acks and propagates.
        """
        delay = 0.1
        try:
            while True:
                try:
                    await handle(events)
                except Exception as exc:
                    outage.failed(f"{exc!r}, {len(events)} event(s) to redo", exc)
                    self.metrics.pipeline_events.labels("redone_batches").inc()
                    for event in events:
                        self._ready_match_partitions.discard(event.message.partition)
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, MAX_BACKOFF_SECONDS)
                    continue
                outage.recovered()
                return
        except asyncio.CancelledError:
            withhold_acks(events)
            raise

    # --- batches ------------------------------------------------------------------------------

    async def match_batch(self, events: Sequence[EventT[Any]]) -> None:
        started = time.perf_counter()
        wall = time.time()
        out = Outbox()
        groups = _by_partition(events)
        views: dict[int, StateView] = {}
        clocks_before: dict[int, float | None] = {}
        for partition, group in groups.items():
            self._prepare_match_partition(partition, wall)
            clocks_before[partition] = self.matches.clocks[partition].value
            view = views[partition] = StateView(self.match_table)
            for event in group:
                message = event.message
                origin = Origin(
                    message.topic,
                    message.partition,
                    message.offset,
                    int(message.timestamp * 1000) if message.timestamp else None,
                )
                key, value = message.key, message.value
                try:
                    kind = self._input_kinds.get(message.topic)
                    if kind is not None:
                        self.matches.on_event(view, out, partition, kind, key, value, origin, wall)
                    else:
                        try:
                            commands = _commands(value)
                        except ValueError as exc:
                            out.dead_letter(DeadLetter(key, value, origin, str(exc)))
                            continue
                        for command in commands:
                            self._match_command(view, out, partition, command, origin, wall)
                except Exception as exc:
                    log.exception(
                        "internal error on %s[%d]@%d",
                        origin.topic,
                        origin.partition,
                        origin.offset,
                        extra=_context(origin, key),
                    )
                    out.dead_letter(DeadLetter(key, value, origin, f"internal error: {exc!r}"))
        await self._deliver(out, "matches")
        for partition, group in groups.items():
            with EventContext(group[-1]):
                view = views[partition]
                clock = self.matches.clocks[partition].value
                await _write(self.app.producer, self.match_table, view, partition)
                if clock is not None and clock != clocks_before[partition]:
                    clocks = StateView(self.clock_table)
                    clocks.put(partition, clock)
                    await _write(self.app.producer, self.clock_table, clocks, partition)
        self._count(out, events, "matches", started)

    def _match_command(
        self,
        view: StateView,
        out: Outbox,
        partition: int,
        command: Any,
        origin: Origin,
        wall: float,
    ) -> None:
        """One command of a packed message: a failure dead-letters this command alone."""
        try:
            self.matches.on_commands(view, out, partition, [command], origin, wall)
        except Exception as exc:
            log.exception(
                "internal error on a match command from %s[%d]@%d",
                origin.topic,
                origin.partition,
                origin.offset,
                extra=_context(origin, None),
            )
            letter = DeadLetter(None, orjson.dumps(command), origin, f"internal error: {exc!r}")
            out.dead_letter(letter)

    async def player_batch(self, events: Sequence[EventT[Any]]) -> None:
        started = time.perf_counter()
        out = Outbox()
        groups = _by_partition(events)
        views: dict[int, tuple[StateView, StateView]] = {}
        for partition, group in groups.items():
            ratings = StateView(self.rating_table)
            pending = StateView(self.pending_table)
            views[partition] = (ratings, pending)
            for event in group:
                message = event.message
                origin = Origin(message.topic, message.partition, message.offset)
                try:
                    commands = _commands(message.value)
                except ValueError as exc:
                    out.dead_letter(DeadLetter(message.key, message.value, origin, str(exc)))
                    continue
                for command in commands:
                    try:
                        self.players.on_commands(ratings, pending, out, [command])
                    except Exception as exc:
                        log.exception(
                            "internal error on a player command: %r",
                            command,
                            extra={
                                **_context(origin, None),
                                "match_id": command[1] if len(command) > 1 else None,
                            },
                        )
                        out.dead_letter(
                            DeadLetter(
                                None, orjson.dumps(command), origin, f"internal error: {exc!r}"
                            )
                        )
        await self._deliver(out, "players")
        for partition, group in groups.items():
            ratings, pending = views[partition]
            with EventContext(group[-1]):
                await _write(self.app.producer, self.rating_table, ratings, partition)
                await _write(self.app.producer, self.pending_table, pending, partition)
        self._count(out, events, "players", started)

    def _prepare_match_partition(self, partition: int, wall: float) -> None:
        """After (re)assignment: the partition's clock and deadlines from the tables."""
        if partition in self._ready_match_partitions:
            return
        stored = self.clock_table.data.get(encode_key(partition))
        self.matches.clocks.pop(partition, None)
        self.matches.clock(partition, wall, None if stored is None else float(orjson.loads(stored)))
        p = self.settings.partitions
        entries = []
        for key, value in self.match_table.data.items():
            match_id = orjson.loads(key)
            if value is not None and partition_for(match_id, p) == partition:
                entries.append((match_id, orjson.loads(value)))
        self.matches.rebuild(partition, entries)
        self._ready_match_partitions.add(partition)

    async def _deliver(self, out: Outbox, agent: str) -> None:
        """Send everything and wait until Kafka has it (delivery.py: a record Kafka refuses
        becomes a dead letter, anything else is retried until it works)."""
        if not out:
            return
        s = self.settings
        records: list[OutRecord] = []
        for topic, by_partition in (
            (s.player_commands_topic, out.player_commands),
            (s.match_commands_topic, out.match_commands),
        ):
            for partition, commands in by_partition.items():
                for value in pack(commands, self._pack_budget):
                    records.append(OutRecord(topic, None, value, partition))
        for event in out.ratings:
            key = event["player_id"].encode()
            records.append(OutRecord(s.rating_changed_topic, key, orjson.dumps(event)))
        for letter in out.dead_letters:
            log.warning(
                "dead-lettered %s[%d]@%d: %s",
                letter.origin.topic,
                letter.origin.partition,
                letter.origin.offset,
                letter.reason[:200],
                extra={**_context(letter.origin, letter.key), "reason": letter.reason[:1000]},
            )
            records.append(letter_record(s.dead_letter_topic, letter, s.max_request_bytes))
        for letter in await self.deliveries[agent].deliver(records):
            log.error(
                "output to %s refused by Kafka, dead-lettered: %s",
                letter.origin.topic,
                letter.reason,
            )
            out.dead_letter(letter)

    def _count(
        self, out: Outbox, events: Sequence[EventT[Any]], agent: str, started: float
    ) -> None:
        self.counts["batches"] += 1
        self.counts["events"] += len(events)
        for name, n in out.counts.items():
            self.counts[name] += n
        m, s = self.metrics, self.settings
        # Per topic and partition, not per event: this runs on every batch.
        per_topic: Counter[str] = Counter()
        last: dict[TP, int] = {}
        for event in events:
            message = event.message
            per_topic[message.topic] += 1
            last[TP(message.topic, message.partition)] = message.offset
        for topic, n in per_topic.items():
            m.events_in.labels(topic).inc(n)
        moved = time.monotonic()
        for tp, offset in last.items():
            self._next_offsets[tp] = offset + 1
            self._progress_at[tp] = moved
        for topic, commands in (
            (s.player_commands_topic, out.player_commands),
            (s.match_commands_topic, out.match_commands),
        ):
            if commands:
                m.events_out.labels(topic).inc(sum(len(c) for c in commands.values()))
        if out.ratings:
            m.events_out.labels(s.rating_changed_topic).inc(len(out.ratings))
        if out.dead_letters:
            m.events_out.labels(s.dead_letter_topic).inc(len(out.dead_letters))
            for letter in out.dead_letters:
                m.dead_lettered.labels(letter.origin.topic).inc()
        m.count_outbox(out.counts)
        now = time.time() * 1000
        for finished_ms in out.finished_ms:
            m.latency.observe(max(0.0, (now - finished_ms) / 1000))
        m.batch_seconds.labels(agent).observe(time.perf_counter() - started)


def _context(origin: Origin, key: bytes | None) -> dict[str, Any]:
    """Log fields that find the event again (JSON logs); input events are keyed by match id."""
    return {
        "topic": origin.topic,
        "partition": origin.partition,
        "offset": origin.offset,
        "match_id": None if key is None else key.decode("utf-8", "replace")[:200],
    }


def _commands(value: bytes | None) -> list[Any]:
    """A packed message's commands; ValueError if it is not a JSON array."""
    try:
        commands = orjson.loads(value or b"")
    except orjson.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON: {exc}") from None
    if not isinstance(commands, list):
        raise ValueError(f"expected a JSON array of commands, got {type(commands).__name__}")
    return commands


def _by_partition(events: Sequence[EventT[Any]]) -> dict[int, list[EventT[Any]]]:
    groups: dict[int, list[EventT[Any]]] = {}
    for event in events:
        groups.setdefault(event.message.partition, []).append(event)
    return groups


async def _write(producer: Any, table: Any, view: StateView, partition: int) -> None:
    """Apply a batch's changes to ``table`` and send them to its changelog partition.

    The changelog records go straight to the producer (Faust's ``table[key] = value`` costs
    several times more per write); they are flushed before Faust commits offsets, like its own.
    """
    changes = view.changes()
    if not changes:
        return
    topic = table.changelog_topic.get_topic_name()
    data = table.data
    tp = TP(topic, partition)
    persist = not isinstance(data, MemoryStore)
    for key, encoded in changes.items():
        if encoded is None:
            if key not in data:
                continue
            del data[key]
        else:
            data[key] = encoded
        future = await producer.send(topic, key, encoded, partition, None, None)
        if persist:
            # RocksDB remembers the changelog offset it holds, so recovery reads only the rest.
            future.add_done_callback(
                lambda f, store=data: (
                    f.exception() or store.set_persisted_offset(tp, f.result().offset)
                )
            )
