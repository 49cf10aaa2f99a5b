"""The Faust adapter of the batch runner: one worker's app, its tables and its producer.

The Faust wiring (topics, tables, agents, tick, pages) is stream/pipeline/topology.py; the
order of effects of a batch (process against working copies, deliver and wait, then write
state) and the containment of failures to one event or command are the batch runner's
(stream/pipeline/batches.py). This module turns Faust events into the runner's messages, gives
it Faust's tables and producer, and feeds the metrics from its reports.

Hops per match (1v1): match-started and match-finished in; one ``join`` per player partition;
one ``snap`` reply per player; one ``rate`` per player partition; one rating-changed per player.
The command hops are *packed*: each batch sends one message per destination partition holding
all its commands, so Faust's per-message cost is paid per batch, not per command.

Failure that stops the batch: Kafka unreachable or any error outside one event's handling. The
batch is not acked and is redone in place, with backoff, until it succeeds (one log line when it
starts failing, one when it works again); the agent never raises, so Faust neither restarts it
nor acks past the batch. If the worker stops or a rebalance cancels the batch meanwhile, its
acks are withheld (stream/pipeline/workarounds/acks.py) and whoever owns the partitions next
redoes it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence, Sized
from typing import Any

import orjson
from faust.types import TP, EventT

from stream.config.modes import Modes
from stream.config.settings import Settings
from stream.deadletters import DeadLetter, reason_kind
from stream.outage import Outage
from stream.pipeline import topology, workarounds
from stream.pipeline.batches import (
    CLOCK_TABLE,
    MATCH_TABLE,
    PENDING_TABLE,
    RATING_TABLE,
    BatchReport,
    BatchRunner,
    Message,
)
from stream.pipeline.changelogs import BufferedTables
from stream.pipeline.delivery import Delivery, OutRecord
from stream.pipeline.health import refresh_gauges
from stream.pipeline.matches import MatchProcessor
from stream.pipeline.metrics import WorkerMetrics
from stream.pipeline.players import PlayerProcessor
from stream.pipeline.watchdog import StallWatchdog
from stream.pipeline.workarounds import private
from stream.pipeline.workarounds.acks import withhold_acks
from stream.pipeline.workarounds.beforecommit import before_commit

log = logging.getLogger("skillstream.worker")


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
            lateness_seconds=s.event_lateness_seconds,
        )
        self.players = PlayerProcessor(self.modes, partitions=s.partitions)
        self.metrics = WorkerMetrics()
        # One per agent: each reports its own outage.
        self.deliveries = {
            agent: Delivery(self._send, s.dead_letter_topic, s.max_request_bytes, agent)
            for agent in ("matches", "players")
        }
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
        self.match_in, self.player_in = topology.inputs(self.app, s)
        self.match_table, self.clock_table, self.rating_table, self.pending_table = topology.tables(
            self.app, s
        )
        # Changelog writes wait for the commit (stream/pipeline/changelogs.py).
        self.tables = BufferedTables(
            self.app,
            {
                MATCH_TABLE: self.match_table,
                CLOCK_TABLE: self.clock_table,
                RATING_TABLE: self.rating_table,
                PENDING_TABLE: self.pending_table,
            },
        )
        before_commit(self.app, self.tables.flush)
        self.runner = BatchRunner(
            s, self.matches, self.players, self.tables, self._deliver_records, self._caught_up
        )
        topology.define(self)

    def forget_partitions(self, partitions: Iterable[int]) -> None:
        """Partitions revoked: their clocks and deadlines are rebuilt from the tables when they
        come back (they may have changed meanwhile). Their next offsets are forgotten too:
        whoever owns them next reads again from the last commit, and a position left from
        before would say this worker had read what it has not (it would report the partition
        caught up, and event time would pass starts not yet read again)."""
        numbers = set(partitions)
        self.runner.forget(numbers)
        for tp in [tp for tp in self._next_offsets if tp.partition in numbers]:
            del self._next_offsets[tp]

    def refresh_gauges(self) -> None:
        refresh_gauges(self.app, self.metrics, self._next_offsets)

    def report(self) -> None:
        """The periodic report: gauges refreshed, the counters' totals logged."""
        self.refresh_gauges()
        log.info("counts: %s", orjson.dumps(self.metrics.totals()).decode())

    async def _send(self, *args: Any) -> Awaitable[Any]:
        future: Awaitable[Any] = await self.app.producer.send(*args)
        return future

    async def until_done(
        self,
        handle: Callable[[Sequence[EventT[Any]]], Awaitable[object]],
        events: Sequence[EventT[Any]],
        outage: Outage,
    ) -> None:
        """Run ``handle(events)`` until it succeeds (BatchRunner.until_done: backoff, the
        partitions rebuilt from the tables); never raise but for cancellation, which withholds
        the batch's acks (stream/pipeline/workarounds/acks.py) so that Faust cannot ack it
        unprocessed."""

        async def attempt() -> None:
            await handle(events)

        await self.runner.until_done(
            attempt,
            outage,
            events=len(events),
            partitions=[event.message.partition for event in events],
            on_redo=self.metrics.pipeline_events.labels("redone_batches").inc,
            on_cancel=lambda: withhold_acks(events),
        )

    # --- batches ------------------------------------------------------------------------------

    async def match_batch(self, events: Sequence[EventT[Any]]) -> None:
        self._count(await self.runner.match_batch([_message(event) for event in events]))

    async def player_batch(self, events: Sequence[EventT[Any]]) -> None:
        self._count(await self.runner.player_batch([_message(event) for event in events]))

    def _caught_up(self, topic: str, partition: int, reached: int | None) -> bool:
        """Whether this worker has processed every record of (topic, partition) that the
        consumer's last fetch saw (its high watermark): the batch's own progress, else the
        next offset of earlier batches, else the group's commit. False while unknown (no fetch
        answered yet): that only holds watermarks back."""
        if not private.consumer_exists(self.app):
            return False
        consumer = self.app.consumer
        tp = TP(topic, partition)
        try:
            end = consumer.highwater(tp)
        except Exception:  # not assigned here, or nothing fetched yet
            return False
        if end is None:
            return False
        position = reached
        if position is None:
            position = self._next_offsets.get(tp)
        if position is None:
            position = private.committed_offsets(consumer).get(tp)
        if position is None:
            # Never processed here nor committed: caught up only if the log is empty.
            return bool(end == 0)
        return bool(position >= end)

    async def _deliver_records(self, agent: str, records: list[OutRecord]) -> list[DeadLetter]:
        return await self.deliveries[agent].deliver(records)

    def _count(self, report: BatchReport) -> None:
        out = report.out
        m, s = self.metrics, self.settings
        for topic, n in report.per_topic.items():
            m.events_in.labels(topic).inc(n)
        moved = time.monotonic()
        for (topic, partition), offset in report.last_offsets.items():
            tp = TP(topic, partition)
            self._next_offsets[tp] = offset + 1
            self._progress_at[tp] = moved
        outgoing: list[tuple[str, Mapping[int, Sized]]] = [
            (s.player_commands_topic, out.player_commands),
            (s.match_commands_topic, out.match_commands),
        ]
        for topic, commands in outgoing:
            if commands:
                m.events_out.labels(topic).inc(sum(len(c) for c in commands.values()))
        if out.ratings:
            m.events_out.labels(s.rating_changed_topic).inc(len(out.ratings))
        if out.dead_letters:
            m.events_out.labels(s.dead_letter_topic).inc(len(out.dead_letters))
            for letter in out.dead_letters:
                m.dead_lettered.labels(letter.origin.topic, reason_kind(letter.reason)).inc()
        m.count_outbox(out.counts)
        now = time.time() * 1000
        for finished_ms in out.finished_ms:
            m.latency.observe(max(0.0, (now - finished_ms) / 1000))
        m.batch_seconds.labels(report.agent).observe(report.seconds)


def _message(event: EventT[Any]) -> Message:
    """A Faust event as the batch runner's plain message (the event kept as its handle)."""
    message = event.message
    return Message(
        message.topic,
        message.partition,
        message.offset,
        int(message.timestamp * 1000) if message.timestamp else None,
        message.key,
        message.value,
        event,
    )
