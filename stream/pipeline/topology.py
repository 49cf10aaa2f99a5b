"""The live pipeline's data flow, as Faust runs it.

    match-started, match-finished, match commands ──▶ matches agent ──▶ player commands
    player commands ──▶ players agent ──▶ rating-changed, match commands (snapshots)
    both agents ──▶ dead letters; their tables ──▶ changelogs
    the combiner's worker, every tick while anything is pending ──▶ match commands partition 0

Each agent takes batches of events and hands them to the pipeline's batch handler, redone
until it succeeds (stream/pipeline/app.py). Everything that works around Faust, aiokafka or the
broker is in stream/pipeline/workarounds/; what the worker reports about itself is in
health.py and watchdog.py.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Sequence
from typing import Any, Protocol

import faust
import orjson

from stream.config.settings import TABLES, Settings
from stream.config.stores import STORES
from stream.pipeline import storeaudit
from stream.pipeline.health import readiness
from stream.pipeline.kafkawatch import KafkaWatch
from stream.pipeline.metrics import CONTENT_TYPE
from stream.pipeline.watchdog import STALL_CHECK_SECONDS
from stream.pipeline.workarounds.standbys import StandbyWatch

__all__ = ["Wiring", "define", "faust_app", "inputs", "tables"]

REPORT_SECONDS = 10.0
LIVENESS_CHECK_SECONDS = 5.0
STANDBY_CHECK_SECONDS = 0.5


def faust_app(s: Settings) -> faust.App:
    """The Faust app of one worker, configured from the settings."""
    return faust.App(
        s.app_id,
        broker=s.kafka.broker_urls,
        store=STORES[s.worker.store].url,
        datadir=str(s.worker.data_dir),
        topic_partitions=s.partitions,
        topic_replication_factor=s.kafka.replication_factor,
        broker_session_timeout=s.kafka.session_timeout_seconds,
        broker_heartbeat_interval=max(0.5, s.kafka.session_timeout_seconds / 5),
        broker_request_timeout=max(s.kafka.session_timeout_seconds * 3, 30.0),
        broker_commit_interval=s.worker.commit_interval_seconds,
        consumer_auto_offset_reset="earliest",
        producer_acks=-1,
        producer_max_request_size=s.kafka.max_request_bytes,
        web_enabled=s.worker.web_port is not None,
        web_port=s.worker.web_port or 6066,
        web_bind=s.worker.web_bind,
        autodiscover=False,
        # Changelog writes are idempotent; the app never needs Faust's key TTLs.
        table_cleanup_interval=3600.0,
        recovery_consistency_check=s.worker.recovery_consistency_check,
        # Standby copies are taken over at a fail-over (stream/pipeline/workarounds/standbys.py).
        table_standby_replicas=s.worker.standby_replicas,
        broker_credentials=s.kafka.security.faust_credentials(),
    )


def inputs(app: faust.App, s: Settings) -> tuple[faust.TopicT, faust.TopicT]:
    """The matches agent's input (match events and commands) and the players agent's."""

    def topic(*names: str) -> faust.TopicT:
        return app.topic(
            *names,
            key_type=bytes,
            value_type=bytes,
            key_serializer="raw",
            value_serializer="raw",
            partitions=s.partitions,
        )

    match_in = topic(s.topics.match_started, s.topics.match_finished, s.match_commands_topic)
    return match_in, topic(s.player_commands_topic)


def tables(app: faust.App, s: Settings) -> tuple[Any, ...]:
    """The tables of TABLES (stream/config/settings.py: ``matches``, ``clocks``, ``ratings``,
    ``pending`` and ``populations``), in its order, raw bytes."""

    def table(name: str) -> Any:
        return app.Table(
            name,
            default=None,
            key_type=bytes,
            value_type=bytes,
            schema=faust.Schema(key_serializer="raw", value_serializer="raw"),
            partitions=s.partitions,
        )

    return tuple(table(name) for name in TABLES)


class Wiring(Protocol):
    """What the wiring calls: the worker's pipeline (stream/pipeline/app.py) as the agents,
    timers, rebalance hook and pages see it. The wiring never reaches past it."""

    match_in: faust.TopicT
    player_in: faust.TopicT

    async def run_batch(self, agent: str, events: Sequence[Any]) -> None:
        """Process one batch of ``agent`` ("matches" or "players") until it succeeds."""

    @property
    def refused(self) -> Collection[tuple[str, int]]:
        """Input partitions refused (stream/pipeline/checkpoints.py): the worker is not ready."""

    async def revoked(self, partitions: Sequence[int]) -> None:
        """These partitions are leaving this worker (flush, forget)."""

    def recovered(self) -> None:
        """The tables of the assignment in progress are recovered (before the seek)."""

    def report(self) -> None: ...

    async def unstick(self) -> None:
        """Read again every input partition stalled behind its end (the watchdog)."""

    def tick_due(self) -> bool:
        """Whether this worker sends the event-time combiner its tick now."""

    def check_liveness(self) -> None: ...

    def metrics_page(self) -> bytes:
        """The Prometheus page, its gauges refreshed."""


def define(app: faust.App, s: Settings, pipeline: Wiring) -> None:
    """The agents, the leader's tick, the rebalance hook, the timers and the web pages."""

    async def match_agent(stream: Any) -> None:
        async for events in stream.take_events(s.worker.batch_size, s.worker.batch_wait_seconds):
            await pipeline.run_batch("matches", events)

    async def player_agent(stream: Any) -> None:
        async for events in stream.take_events(s.worker.batch_size, s.worker.batch_wait_seconds):
            await pipeline.run_batch("players", events)

    app.agent(pipeline.match_in, name="skillstream.matches", concurrency=1)(match_agent)
    app.agent(pipeline.player_in, name="skillstream.players", concurrency=1)(player_agent)

    async def tick() -> None:
        # Timers may not write tables: the tick is a command the match agent handles, on the
        # event-time combiner's partition alone (stream/pipeline/combiner.py), which sends a
        # round on it while anything is pending. The worker that reads that partition sends
        # it, and only while the combiner wants one: none while nothing is pending anywhere.
        if pipeline.tick_due():
            value = orjson.dumps([["tick", time.time()]])
            await (await app.producer.send(s.match_commands_topic, None, value, 0, None, None))

    app.timer(s.worker.tick_seconds, name="skillstream.tick")(tick)

    async def on_revoked(sender: Any, revoked: Any, **kwargs: Any) -> None:
        # Held changelog writes go while this worker still owns their partitions. A partition
        # that comes back may have changed while it was away: rebuild its clock and deadlines
        # from the recovered tables.
        await pipeline.revoked(sorted({tp.partition for tp in revoked}))

    app.on_partitions_revoked.connect(on_revoked)  # type: ignore[arg-type]

    async def on_recovered(sender: Any, **kwargs: Any) -> None:
        # Sent once the assignment's tables are recovered, before the streams are sought to
        # their commits: the tables' checkpoints then say where each input restarts.
        pipeline.recovered()
        if s.worker.audit_stores:
            stores = {table.name: table.data for table in app.tables.values()}
            storeaudit.schedule(
                stores, s.kafka.bootstrap_servers, s.kafka.security.aiokafka_options()
            )

    app.on_rebalance_complete.connect(on_recovered)  # type: ignore[arg-type]

    async def report() -> None:
        pipeline.report()

    async def watch() -> None:
        await pipeline.unstick()

    async def liveness() -> None:
        pipeline.check_liveness()

    app.timer(REPORT_SECONDS, name="skillstream.report")(report)
    app.timer(STALL_CHECK_SECONDS, name="skillstream.stalls")(watch)
    app.timer(LIVENESS_CHECK_SECONDS, name="skillstream.liveness")(liveness)
    standby_watch = StandbyWatch()

    async def standbys() -> None:
        # Says once per assignment when the standby copies are ready for a fail-over.
        standby_watch.check(app)

    app.timer(STANDBY_CHECK_SECONDS, name="skillstream.standbys")(standbys)
    KafkaWatch(s).attach(app)

    async def metrics_page(view: Any, request: Any) -> Any:
        return view.bytes(pipeline.metrics_page(), content_type=CONTENT_TYPE)

    async def health_page(view: Any, request: Any) -> Any:
        # Liveness: the event loop answers. Details for people; probes read the status.
        return view.json({"status": "alive", **readiness(app, pipeline.refused)})

    async def ready_page(view: Any, request: Any) -> Any:
        state = readiness(app, pipeline.refused)
        return view.json(state, status=200 if state["ready"] else 503)

    app.page("/metrics")(metrics_page)
    app.page("/health")(health_page)
    app.page("/ready")(ready_page)
