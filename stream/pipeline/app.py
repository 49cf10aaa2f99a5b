"""The Faust wiring: topics, tables, two batch agents and the leader's tick.

Hops per match (1v1): match-started and match-finished in; one ``join`` per player partition;
one ``snap`` reply per player; one ``rate`` per player partition; one rating-changed per player.
The command hops are *packed*: each batch sends one message per destination partition holding
all its commands, so Faust's per-message cost is paid per batch, not per command.

The order of effects of a batch (process against working copies, deliver and wait, then write
state) and the containment of failures to one event or command are the batch runner's
(stream/pipeline/batches.py); this module adapts Faust's events, tables and producer to it.

Failure that stops the batch: Kafka unreachable or any error outside one event's handling. The
batch is not acked and is redone in place, with backoff, until it succeeds (one log line when it
starts failing, one when it works again); the agent never raises, so Faust neither restarts it
nor acks past the batch. If the worker stops or a rebalance cancels the batch meanwhile, its
acks are withheld (stream/pipeline/acks.py) and whoever owns the partitions next redoes it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import defaultdict
from collections.abc import Awaitable, Callable, Mapping, Sequence, Sized
from typing import Any, cast
from weakref import ref

import faust
import mode
import orjson
from faust.stores.memory import Store as MemoryStore
from faust.streams import _current_event
from faust.transport.drivers import aiokafka as aiokafka_driver
from faust.types import TP, EventT

from stream.cache.feed import CacheFeed, feed_from_settings
from stream.config.modes import Modes
from stream.config.settings import Settings
from stream.deadletters import DeadLetter
from stream.outage import Outage
from stream.pipeline.acks import withhold_acks
from stream.pipeline.batches import (
    CLOCK_TABLE,
    MATCH_TABLE,
    PENDING_TABLE,
    RATING_TABLE,
    BatchReport,
    BatchRunner,
    Message,
)
from stream.pipeline.committed import patch_seek_to_committed
from stream.pipeline.delivery import Delivery, OutRecord
from stream.pipeline.endoffsets import verify_end_offsets
from stream.pipeline.logs import quiet_kafka_client_repeats
from stream.pipeline.matches import MatchProcessor
from stream.pipeline.metrics import CONTENT_TYPE, WorkerMetrics
from stream.pipeline.outages import KafkaWatch
from stream.pipeline.players import PlayerProcessor

log = logging.getLogger("skillstream.worker")

# A partition with records waiting that has not moved for this long is sought back.
STALL_SECONDS = 15.0
STALL_CHECK_SECONDS = 5.0


# Faust hard-codes fetch_max_wait_ms=1500. aiokafka leaves a partition that still has
# buffered records out of the fetch in flight, so a command arriving on it waits for that
# fetch to return: up to 1.5 s per hop when other partitions are quiet. Every hop of the
# pipeline pays it, so the worker sets its own (SKILLSTREAM_FETCH_MAX_WAIT_MS).
_fetch_max_wait_ms = 20


def _patch_fetch_wait(wait_ms: int) -> None:
    global _fetch_max_wait_ms  # noqa: PLW0603 (the patched factory reads it when it runs)
    _fetch_max_wait_ms = wait_ms
    thread = aiokafka_driver.AIOKafkaConsumerThread
    if getattr(thread, "_skillstream_patched", False):
        return
    original = thread._create_worker_consumer

    def create(self: Any, transport: Any) -> Any:
        consumer = original(self, transport)
        consumer._fetch_max_wait_ms = _fetch_max_wait_ms
        return consumer

    thread._create_worker_consumer = create  # type: ignore[method-assign]
    thread._skillstream_patched = True  # type: ignore[attr-defined]


class Pipeline:
    """The Faust app of one worker and the processors it drives."""

    def __init__(self, settings: Settings, modes: Modes | None = None) -> None:
        self.settings = settings
        self.modes = settings.load_modes() if modes is None else modes
        s = settings
        _patch_fetch_wait(max(1, round(s.fetch_max_wait_seconds * 1000)))
        patch_seek_to_committed()
        quiet_kafka_client_repeats()
        if s.verify_end_offsets:
            verify_end_offsets(s.bootstrap_servers, s.kafka_security.aiokafka_options())
        self.app = faust.App(
            s.app_id,
            broker=s.broker_urls,
            store="rocksdb://" if s.store == "rocksdb" else "memory://",
            datadir=str(s.data_dir),
            topic_partitions=s.partitions,
            topic_replication_factor=s.replication_factor,
            broker_session_timeout=s.session_timeout_seconds,
            broker_heartbeat_interval=max(0.5, s.session_timeout_seconds / 5),
            broker_request_timeout=max(s.session_timeout_seconds * 3, 30.0),
            consumer_auto_offset_reset="earliest",
            producer_acks=-1,
            producer_max_request_size=s.max_request_bytes,
            web_enabled=s.web_port is not None,
            web_port=s.web_port or 6066,
            web_bind=s.web_bind,
            autodiscover=False,
            # Changelog writes are idempotent; the app never needs Faust's key TTLs.
            table_cleanup_interval=3600.0,
            recovery_consistency_check=s.recovery_consistency_check,
            broker_credentials=s.kafka_security.faust_credentials(),
        )
        self.matches = MatchProcessor(
            self.modes,
            partitions=s.partitions,
            retention_seconds=s.retention_seconds,
            limits=s.limits,
            max_future_seconds=s.max_future_seconds,
        )
        self.players = PlayerProcessor(self.modes)
        self.counts: defaultdict[str, int] = defaultdict(int)
        self.cache_feed: CacheFeed | None = None
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
        self._stall_since: dict[TP, float] = {}
        self._agent_topics = {
            s.match_started_topic,
            s.match_finished_topic,
            s.match_commands_topic,
            s.player_commands_topic,
        }
        self.runner = BatchRunner(
            s, self.matches, self.players, FaustTables(self), self._deliver_records
        )
        self._define()

    # --- topology -----------------------------------------------------------------------------

    def _define(self) -> None:
        app, s = self.app, self.settings

        def topic(*names: str) -> faust.TopicT:
            return app.topic(
                *names,
                key_type=bytes,
                value_type=bytes,
                key_serializer="raw",
                value_serializer="raw",
                partitions=s.partitions,
            )

        self.match_in = topic(s.match_started_topic, s.match_finished_topic, s.match_commands_topic)
        self.player_in = topic(s.player_commands_topic)

        def table(name: str) -> Any:
            return app.Table(
                name,
                default=None,
                key_type=bytes,
                value_type=bytes,
                schema=faust.Schema(key_serializer="raw", value_serializer="raw"),
                partitions=s.partitions,
            )

        self.match_table = table("matches")
        self.clock_table = table("clocks")
        self.rating_table = table("ratings")
        self.pending_table = table("pending")

        async def match_agent(stream: Any) -> None:
            outage = Outage("matches: batch failed")
            async for events in stream.take_events(s.batch_size, s.batch_wait_seconds):
                await self.until_done(self.match_batch, events, outage)

        async def player_agent(stream: Any) -> None:
            outage = Outage("players: batch failed")
            async for events in stream.take_events(s.batch_size, s.batch_wait_seconds):
                await self.until_done(self.player_batch, events, outage)

        app.agent(self.match_in, name="skillstream.matches", concurrency=1)(match_agent)
        app.agent(self.player_in, name="skillstream.players", concurrency=1)(player_agent)

        async def tick() -> None:
            # Timers may not write tables: the tick is a command the match agent handles.
            value = orjson.dumps([["tick", time.time()]])
            sends = [
                await app.producer.send(s.match_commands_topic, None, value, p, None, None)
                for p in range(s.partitions)
            ]
            await asyncio.gather(*sends)

        app.timer(s.tick_seconds, on_leader=True, name="skillstream.tick")(tick)

        async def on_revoked(sender: Any, revoked: Any, **kwargs: Any) -> None:
            # A partition that comes back may have changed while it was away: rebuild its
            # clock and deadlines from the recovered tables.
            self.runner.forget(tp.partition for tp in revoked)

        app.on_partitions_revoked.connect(on_revoked)  # type: ignore[arg-type]

        async def report() -> None:
            self._refresh_gauges()
            log.info("counts: %s", orjson.dumps(dict(sorted(self.counts.items()))).decode())
            if self.cache_feed is not None:
                stats = self.cache_feed.stats
                log.info(
                    "cache: written %d, stale %d, errors %d, lag %d rating changes (%.1f s)",
                    stats.written,
                    stats.stale,
                    stats.errors,
                    stats.lag_records,
                    stats.lag_seconds(),
                )

        app.timer(10.0, name="skillstream.report")(report)

        async def watch() -> None:
            await self.unstick_partitions()

        app.timer(STALL_CHECK_SECONDS, name="skillstream.stalls")(watch)
        KafkaWatch(s).attach(app)

        async def metrics_page(view: Any, request: Any) -> Any:
            self._refresh_gauges()
            return view.bytes(self.metrics.render(), content_type=CONTENT_TYPE)

        async def health_page(view: Any, request: Any) -> Any:
            # Liveness: the event loop answers. Details for people; probes read the status.
            return view.json({"status": "alive", **self.readiness()})

        async def ready_page(view: Any, request: Any) -> Any:
            state = self.readiness()
            return view.json(state, status=200 if state["ready"] else 503)

        app.page("/metrics")(metrics_page)
        app.page("/health")(health_page)
        app.page("/ready")(ready_page)

        if s.cache_writer == "worker":
            self._add_cache_writer()

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
        the batch's acks (stream/pipeline/acks.py) so that Faust cannot ack it unprocessed."""

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

    async def unstick_partitions(self) -> None:
        """Seek back an input partition that has records waiting but stopped moving.

        After a rebalance Faust can leave a partition it believes it delivered (faust-streaming
        issues 629 and 221: a message dropped while the flow was suspended still counts as
        read), and nothing is fetched from it again: in the chaos runs a broker pause left a
        wave's commands unprocessed for good. Records are waiting when the partition's high
        watermark is past the next offset this worker would process (for a partition it has
        not processed yet: past the committed offset, or past the log's start if the group
        never committed one). Seeking re-reads them; redelivery is harmless, every state change
        being idempotent.
        """
        if not self.readiness()["ready"]:
            self._stall_since.clear()
            return
        consumer = self.app.consumer
        committed: dict[Any, Any] = getattr(consumer, "_committed_offset", {})
        now = time.monotonic()
        for tp in consumer.assignment():
            if tp.topic not in self._agent_topics:
                continue
            try:
                end = consumer.highwater(tp)
            except Exception:  # nothing fetched from it yet
                continue
            position = self._next_offsets.get(tp, committed.get(tp))
            if position is None and end:
                # Neither processed here nor ever committed: it starts at the log's start.
                position = (await consumer.earliest_offsets(tp)).get(tp)
            if end is None or position is None or end <= position:
                self._stall_since.pop(tp, None)
                continue
            since = self._stall_since.setdefault(tp, max(now, self._progress_at.get(tp, now)))
            if now - since < STALL_SECONDS or now - self._progress_at.get(tp, 0.0) < STALL_SECONDS:
                continue
            log.warning(
                "partition %s[%d] stalled at offset %d with %d record(s) waiting; seeking back",
                tp.topic,
                tp.partition,
                position,
                end - position,
                extra={"topic": tp.topic, "partition": tp.partition, "offset": position},
            )
            self.metrics.pipeline_events.labels("stalled_partitions").inc()
            await consumer.seek(tp, position)
            self._stall_since.pop(tp, None)
            self._progress_at[tp] = now

    def readiness(self) -> dict[str, Any]:
        """Ready: started, no rebalance or table recovery in progress. A worker without
        partitions (more replicas than partitions) is ready too: it is a standby."""
        app = self.app
        started = bool(getattr(app, "_started", None) and app._started.is_set())
        rebalancing = bool(app.rebalancing)
        recovering = bool(getattr(app, "in_recovery", False))
        assigned = len(app.consumer.assignment()) if started and app.consumer else 0
        ready = started and not rebalancing and not recovering
        return {
            "ready": ready,
            "rebalancing": rebalancing,
            "recovering": recovering,
            "assigned_partitions": assigned,
        }

    def _refresh_gauges(self) -> None:
        m = self.metrics
        m.ready.set(1 if self.readiness()["ready"] else 0)
        consumer = self.app.consumer if getattr(self.app, "_consumer", None) else None
        lag: defaultdict[str, int] = defaultdict(int)
        if consumer is not None:
            for tp in consumer.assignment():
                position = self._next_offsets.get(tp)
                if position is None:
                    continue
                try:
                    end = consumer.highwater(tp)
                except Exception:  # not fetched yet on this partition
                    continue
                if end is not None:
                    lag[tp.topic] += max(0, end - position)
        for topic, n in lag.items():
            m.consumer_lag.labels(topic).set(n)
        feed = self.cache_feed
        if feed is not None:
            m.cache_lag.set(feed.stats.lag_records)
            m.cache_lag_seconds.set(feed.stats.lag_seconds())

    def _add_cache_writer(self) -> None:
        """Run the Redis cache feed beside the agents: started and stopped with the app, in its
        own consumer group, so a Redis outage never holds the rating agents back."""
        pipeline = self

        class CacheWriterService(mode.Service):
            async def on_start(self) -> None:
                feed = pipeline.cache_feed = feed_from_settings(pipeline.settings)
                pipeline.metrics.cache_counts = lambda: (feed.stats.written, feed.stats.errors)
                self._task = asyncio.ensure_future(pipeline.cache_feed.run())

            async def on_stop(self) -> None:
                feed = pipeline.cache_feed
                if feed is None:
                    return
                feed.stop()
                try:
                    await asyncio.wait_for(self._task, 15.0)
                except Exception:
                    log.exception("cache feed did not stop cleanly")

        self.app.service(CacheWriterService)

    # --- batches ------------------------------------------------------------------------------

    async def match_batch(self, events: Sequence[EventT[Any]]) -> None:
        self._count(await self.runner.match_batch([_message(event) for event in events]))

    async def player_batch(self, events: Sequence[EventT[Any]]) -> None:
        self._count(await self.runner.player_batch([_message(event) for event in events]))

    async def _deliver_records(self, agent: str, records: list[OutRecord]) -> list[DeadLetter]:
        return await self.deliveries[agent].deliver(records)

    def _count(self, report: BatchReport) -> None:
        out = report.out
        self.counts["batches"] += 1
        self.counts["events"] += report.events
        for name, n in out.counts.items():
            self.counts[name] += n
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
                m.dead_lettered.labels(letter.origin.topic).inc()
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


class FaustTables:
    """The batch runner's table port on the app's Faust tables."""

    def __init__(self, pipeline: Pipeline) -> None:
        self.pipeline = pipeline

    def _table(self, name: str) -> Any:
        p = self.pipeline
        return {
            MATCH_TABLE: p.match_table,
            CLOCK_TABLE: p.clock_table,
            RATING_TABLE: p.rating_table,
            PENDING_TABLE: p.pending_table,
        }[name]

    def contents(self, table: str) -> Mapping[bytes, bytes]:
        data: Mapping[bytes, bytes] = self._table(table).data
        return data

    async def write(
        self, table: str, partition: int, changes: dict[bytes, bytes | None], last: Message
    ) -> None:
        if not changes:
            return
        with EventContext(cast("EventT[Any]", last.handle)):
            await _write(self.pipeline.app.producer, self._table(table), changes, partition)


class EventContext:
    """Make ``event`` Faust's current event, so table writes go to its partition's changelog
    (and, with RocksDB, to its partition's database)."""

    def __init__(self, event: EventT[Any]) -> None:
        self.event = event

    def __enter__(self) -> None:
        self.token = _current_event.set(ref(self.event))

    def __exit__(self, *exc: object) -> None:
        _current_event.reset(self.token)


async def _write(
    producer: Any, table: Any, changes: dict[bytes, bytes | None], partition: int
) -> None:
    """Apply a batch's changes to ``table`` and send them to its changelog partition.

    The changelog records go straight to the producer (Faust's ``table[key] = value`` costs
    several times more per write); they are flushed before Faust commits offsets, like its own.
    """
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
