"""The Faust adapter of the batch runner: one worker's app, its tables and its producer.

The Faust wiring (topics, tables, agents, tick, pages) is stream/pipeline/topology.py, which
calls this module through its small ``Wiring`` interface; the order in which a batch's outputs,
state and offsets become durable is stream/commits.py; the containment of failures to one event
or command is the batch runner's (stream/pipeline/batches.py). This module turns Faust events
into the runner's messages, gives it Faust's tables and producer, hooks the commit protocol
into Faust's commits, and feeds the metrics from its reports.

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

import asyncio
import logging
import time
from collections.abc import Awaitable, Iterable, Mapping, Sequence, Sized
from typing import Any, cast

import orjson
from faust.types import TP, EventT

from stream.commits import Commits
from stream.config.modes import Modes
from stream.config.settings import Settings
from stream.corrections.inputs import load_input_corrections
from stream.deadletters import DeadLetter, reason_kind
from stream.delivery import Delivery, OutRecord
from stream.pipeline import topology, watermarks, workarounds
from stream.pipeline.batches import (
    CLOCK_TABLE,
    MATCH_TABLE,
    PENDING_TABLE,
    POPULATION_TABLE,
    RATING_TABLE,
    BatchReport,
    BatchRunner,
    Message,
    agent_inputs,
)
from stream.pipeline.changelogs import BufferedTables
from stream.pipeline.checkpoints import Checkpoints, Restart
from stream.pipeline.crashpoints import CrashPoints
from stream.pipeline.health import refresh_gauges
from stream.pipeline.liveness import LivenessMonitor
from stream.pipeline.matches import MatchProcessor
from stream.pipeline.metrics import WorkerMetrics
from stream.pipeline.players import PlayerProcessor
from stream.pipeline.positions import Reseeks
from stream.pipeline.watchdog import StallWatchdog
from stream.pipeline.workarounds import private
from stream.pipeline.workarounds.acks import withhold_acks
from stream.pipeline.workarounds.beforecommit import after_commit, before_commit, limit_commits
from stream.pipeline.workarounds.committed import on_seek
from stream.protocol.checkpoints import checkpoint_key
from stream.retry import Outage

log = logging.getLogger("skillstream.worker")

# Logged when a rebalance takes this worker's partitions away (every member's, at the start of
# every rebalance): stream/bench/failover.py times the phases of a fail-over from it.
REVOKED = "rebalance: partitions revoked"
# Logged when an assignment brings this worker match commands partition 0, where the event-time
# combiner runs: where it runs matters to a fail-over (a combiner taken over starts empty).
COMBINER_HERE = "the event-time combiner runs on this worker"


def build_worker(settings: Settings, modes: Modes | None = None) -> Pipeline:
    """A worker's pipeline, after the patches every worker needs (stream/pipeline/workarounds/).
    They are process-wide, so they are applied here, where a worker process is made, and never
    as a side effect of building an object; applying them again changes nothing."""
    workarounds.install(settings)
    return Pipeline(settings, modes)


class Pipeline:
    """One worker's Faust app (stream/pipeline/topology.py), its tables and the processors its
    two agents drive, a batch at a time. Made by :func:`build_worker`, which applies the
    patches it relies on first."""

    def __init__(self, settings: Settings, modes: Modes | None = None) -> None:
        self.settings = settings
        self.modes = settings.load_modes() if modes is None else modes
        s = settings
        self.app = topology.faust_app(s)
        self._processors(s)
        self._tables(s)
        self._commits_and_runner(s)
        self.watchdog = StallWatchdog(
            self.app, self.agent_topics, self.positions, self._progress_at, self.metrics, self.seek
        )
        self.liveness = LivenessMonitor(self.metrics, s.worker.stuck_seconds)
        self._outages = {agent: Outage(f"{agent}: batch failed") for agent in self.deliveries}
        topology.define(self.app, s, self)

    def _processors(self, s: Settings) -> None:
        """The match and player processors, the metrics, the crash points and the senders."""
        corrections = load_input_corrections(s.corrections_file, self.modes)
        self.matches = MatchProcessor(
            self.modes,
            partitions=s.partitions,
            retention_seconds=s.worker.retention_seconds,
            limits=s.worker.limits,
            max_future_seconds=s.worker.max_future_seconds,
            lateness_seconds=s.worker.event_lateness_seconds,
            report_seconds=s.worker.progress_seconds,
            corrections=corrections,
        )
        self.players = PlayerProcessor(
            self.modes,
            partitions=s.partitions,
            announce_seconds=s.worker.tick_seconds,
            adjustments=() if corrections is None else corrections.adjustments,
            refunds=() if corrections is None else corrections.refunds,
        )
        self.metrics = WorkerMetrics()
        self.crash = CrashPoints(s.worker.crash_at)
        # One per agent: each reports its own outage.
        self.deliveries = {
            agent: Delivery(
                self._send,
                s.topics.dead_letter,
                s.kafka.max_request_bytes,
                agent,
                self.crash.reached,
            )
            for agent in ("matches", "players")
        }
        # When each input partition's position last moved (the stall watchdog).
        self._progress_at: dict[TP, float] = {}
        # Per partition read again, the offset and when (a seek per gap, not per record).
        self.reseeks = Reseeks()
        self.agent_topics = {
            s.topics.match_started,
            s.topics.match_finished,
            s.match_commands_topic,
            s.player_commands_topic,
        }

    def _tables(self, s: Settings) -> None:
        """The agents' inputs, the tables, their checkpoints and their buffered changelogs."""
        self.match_in, self.player_in = topology.inputs(self.app, s)
        (
            self.match_table,
            self.clock_table,
            self.rating_table,
            self.pending_table,
            self.population_table,
        ) = topology.tables(self.app, s)
        # What each flush ends every moved table partition with, and where a newly assigned
        # partition restarts (stream/pipeline/checkpoints.py).
        self.checkpoints = Checkpoints(agent_inputs(s))
        # Set once Faust has recovered the tables of an assignment (its rebalance complete),
        # cleared when a rebalance starts: only then do the tables' checkpoints say anything.
        self._recovered = False
        # Input partitions whose tables are behind records the inputs no longer hold: never
        # processed or committed here (stream/pipeline/checkpoints.py, part 3).
        self.refused: set[tuple[str, int]] = set()
        # Changelog writes wait for the commit (stream/pipeline/changelogs.py).
        self.tables = BufferedTables(
            self.app,
            {
                MATCH_TABLE: self.match_table,
                CLOCK_TABLE: self.clock_table,
                RATING_TABLE: self.rating_table,
                PENDING_TABLE: self.pending_table,
                POPULATION_TABLE: self.population_table,
            },
            self.crash.reached,
            self.checkpoints,
        )

    def _commits_and_runner(self, s: Settings) -> None:
        """The commit protocol's hooks into Faust and the batch runner."""
        # The flush before each commit and the redo window (stream/commits.py).
        self.commits = Commits(
            self.tables.flush,
            self._commit_now,
            lambda delay, call: asyncio.get_running_loop().call_later(delay, call),
            crash_point=self.crash.reached,
            on_commit=self.metrics.commits.inc,
        )
        self._early_commit: asyncio.Task[None] | None = None
        before_commit(
            self.app,
            lambda chosen: self.commits.before_commit(
                {(tp.topic, tp.partition): offset for tp, offset in chosen.items()}
            ),
        )
        after_commit(self.app, lambda offsets: self.commits.committed())
        self.runner = BatchRunner(
            s,
            self.matches,
            self.players,
            self.tables,
            self._deliver_records,
            self._end_offset,
            crash_point=self.crash.reached,
            first_event=self._first_event,
        )
        self.positions = self.runner.positions
        on_seek(self.app, self._sought)
        # Nothing is committed past what the runner processed (stream/pipeline/positions.py).
        limit_commits(self.app, self.positions.position)

    # --- what the wiring calls (stream/pipeline/topology.py, Wiring) ---------------------------

    async def run_batch(self, agent: str, events: Sequence[EventT[Any]]) -> None:
        """One batch of ``agent``'s events ("matches" or "players"), as the runner's messages,
        redone until it succeeds (BatchRunner.until_done: backoff, the partitions rebuilt from
        the tables); never raises but for cancellation, which withholds the batch's acks
        (stream/pipeline/workarounds/acks.py) so that Faust cannot ack it unprocessed."""
        messages = [_message(event) for event in events]
        runner = self.runner
        process = runner.match_batch if agent == "matches" else runner.player_batch

        async def attempt() -> None:
            await self._done(await process(messages))

        await runner.until_done(
            attempt,
            self._outages[agent],
            events=len(messages),
            partitions=[message.partition for message in messages],
            on_redo=self.metrics.pipeline_events.labels("redone_batches").inc,
            on_cancel=lambda: withhold_acks(events),
        )

    async def revoked(self, partitions: Sequence[int]) -> None:
        """Held changelog writes go while this worker still owns the partitions; then they
        are forgotten (a partition that comes back may have changed while it was away)."""
        self._recovered = False
        # Where a rebalance begins on this worker: with Faust's "Executing
        # _on_partitions_assigned" and "Worker ready", what a fail-over spent where.
        log.info("%s: %d partition(s)", REVOKED, len(partitions))
        await self.tables.flush_revoked(partitions)
        if partitions:
            self.crash.reached("revoked")
        self.forget_partitions(partitions)

    async def unstick(self) -> None:
        await self.watchdog.unstick_partitions()

    def tick_due(self) -> bool:
        """Whether this worker sends the event-time combiner its tick: it reads the combiner's
        partition (match commands partition 0) and the combiner there wants one
        (:func:`stream.pipeline.watermarks.tick_wanted`). Every worker asks at each tick; two
        that both think they own the partition during a rebalance send a round more."""
        if not private.consumer_exists(self.app):
            return False
        home = TP(self.settings.match_commands_topic, 0)
        if home not in self.app.consumer.assignment():
            return False
        return watermarks.tick_wanted(self.runner.match_partitions.get(0))

    def metrics_page(self) -> bytes:
        self.refresh_gauges()
        return self.metrics.render()

    def forget_partitions(self, partitions: Iterable[int]) -> None:
        """Partitions revoked: their clocks and deadlines are rebuilt from the tables when they
        come back (they may have changed meanwhile). Their positions are forgotten too:
        whoever owns them next reads again from the last commit, and a position left from
        before would say this worker had read what it has not (it would report the partition
        caught up, and event time would pass starts not yet read again)."""
        numbers = set(partitions)
        self.runner.revoked(numbers)
        self.checkpoints.forget(numbers)
        self.refused = {tp for tp in self.refused if tp[1] not in numbers}
        self.reseeks.forget(numbers)

    def recovered(self) -> None:
        """Faust has recovered the tables of the assignment in progress: their checkpoints
        are read at the seek that follows. Says so when the assignment brings this worker the
        event-time combiner (stream/pipeline/combiner.py)."""
        self._recovered = True
        if private.consumer_exists(self.app):
            home = TP(self.settings.match_commands_topic, 0)
            if home in self.app.consumer.assignment():
                log.info(COMBINER_HERE)

    def _first_event(self) -> None:
        self.crash.active = True

    def _commit_now(self) -> None:
        """Commit now, apart from the commit tick (one such commit at a time)."""
        if self._early_commit is None or self._early_commit.done():
            self._early_commit = asyncio.ensure_future(self._commit())

    async def _commit(self) -> None:
        """A commit as the tick makes it (through the same hooks). One that fails (a
        rebalance meanwhile, the consumer stopping) is logged: the tick commits next."""
        if not private.consumer_exists(self.app):
            return
        try:
            await self.app.consumer.commit()
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.warning("early commit after an assignment failed: %r", exc)

    def _sought(self, committed: Mapping[Any, int], starts: Mapping[Any, int]) -> Mapping[Any, int]:
        """The consumer sought its partitions to their commits (``starts``: each one's log
        start). Once the assignment's tables are recovered, each input starts where the oldest
        checkpoint of its agent's tables says, if below its commit (said once, counted); one
        whose records to read again are gone is refused. Positions start there, and the first
        batch after that schedules an early commit. Returns where each partition starts."""
        ours = {
            (tp.topic, tp.partition): o
            for tp, o in committed.items()
            if tp.topic in self.agent_topics
        }
        offsets = ours
        if self._recovered:
            restart = self.checkpoints.restart(ours, self._checkpoint, self._came_back_empty)
            offsets = self._restart(
                restart, ours, {(tp.topic, tp.partition): o for tp, o in starts.items()}
            )
        self.checkpoints.started({tp: o for tp, o in offsets.items() if tp not in self.refused})
        self.commits.sought()
        self.positions.sought({tp: o for tp, o in offsets.items() if tp not in self.refused})
        by_key = {(tp.topic, tp.partition): tp for tp in committed}
        return {by_key[tp]: o for tp, o in offsets.items() if o < ours[tp]}

    def _checkpoint(self, table: str, partition: int) -> bytes | None:
        found: bytes | None = self.tables.contents(table).get(checkpoint_key(partition))
        return found

    def _came_back_empty(self, table: str, partition: int) -> bool:
        """Whether the recovery found the table partition's changelog empty: its highwater
        (the last offset, read from the log itself: workarounds/endoffsets.py) below 0."""
        highwaters = cast(Any, self.app.tables).recovery.active_highwaters
        last = highwaters.get(TP(self.settings.changelog_topic(table), partition))
        return last is None or last < 0

    def _restart(
        self,
        restart: Restart,
        committed: Mapping[tuple[str, int], int],
        starts: Mapping[tuple[str, int], int],
    ) -> dict[tuple[str, int], int]:
        """Say what the checkpoints found (stream/pipeline/checkpoints.py) and where each input
        starts; refuse (and pause) the inputs whose records to read again are gone."""
        for table, partition in restart.unchecked:
            log.warning(
                "table %s[%d] has records but no checkpoint although its inputs are committed"
                " (written by a version before checkpoints): trusting the committed offsets",
                table,
                partition,
            )
            self.metrics.tables_unchecked.labels(table).inc()
        offsets = dict(restart.offsets)
        for behind in restart.behind:
            self.metrics.tables_behind.labels(behind.table).inc()
        gone: dict[tuple[str, int], int] = {}
        for tp, offset in restart.rewound(committed).items():
            start = starts.get(tp, 0)
            found = [b.describe() for b in restart.behind if (b.topic, b.partition) == tp]
            if offset < start:
                gone[tp] = offset
                log.error(
                    "refusing %s[%d]: %s, but the input starts at %d now (retention): the table"
                    " cannot be brought up to its offsets; nothing of this partition is"
                    " processed or committed (docs/guarantees.md, tables behind their offsets)",
                    tp[0],
                    tp[1],
                    "; ".join(found),
                    start,
                )
                offsets[tp] = committed[tp]
                continue
            log.warning(
                "restored behind the committed offsets: %s; reading %s[%d] again from %d",
                "; ".join(found),
                tp[0],
                tp[1],
                offset,
            )
        if gone:
            self.refused.update(gone)
            self.app.consumer.pause_partitions([TP(*tp) for tp in gone])
        return offsets

    async def seek(self, topic: str, partition: int, offset: int, why: str | None) -> None:
        """Read (topic, partition) again from ``offset``; ``why`` (None: routine, after an
        assignment) is logged and counted once per gap and second
        (stream.pipeline.positions.Reseeks). A seek that fails (the partition revoked
        meanwhile, the consumer stopping) is logged; the stall watchdog finds the partition
        again if it is still this worker's."""
        tp = TP(topic, partition)
        now = time.monotonic()
        if not self.reseeks.due((topic, partition), offset, now):
            # Records fetched before the seek are still on their way: the same gap again.
            return
        said = why is not None and self.reseeks.say((topic, partition), offset, now)
        if why is not None and not said:
            log.debug("partition %s[%d]: sought again to %d", topic, partition, offset)
        if said:
            log.warning(
                "partition %s[%d] %s; reading it again from offset %d",
                topic,
                partition,
                why,
                offset,
                extra={"topic": topic, "partition": partition, "offset": offset},
            )
            self.metrics.pipeline_events.labels("reread_partitions").inc()
        try:
            await self.app.consumer.seek(tp, offset)
        except Exception as exc:
            self.reseeks.failed((topic, partition))
            log.warning("partition %s[%d]: seek to %d failed: %r", topic, partition, offset, exc)

    def check_liveness(self) -> None:
        """Say, count and show every wait past the bound (stream/pipeline/liveness.py)."""
        runner = self.runner
        self.liveness.check(runner.match_partitions, runner.player_partitions, time.time())

    def refresh_gauges(self) -> None:
        refresh_gauges(self.app, self.metrics, self.positions.positions(), self.refused)
        self.metrics.uncommitted_seconds.set(self.commits.redo_window())

    def report(self) -> None:
        """The periodic report: gauges refreshed, the counters' totals logged."""
        self.refresh_gauges()
        log.info("counts: %s", orjson.dumps(self.metrics.totals()).decode())

    async def _send(self, *args: Any) -> Awaitable[Any]:
        future: Awaitable[Any] = await self.app.producer.send(*args)
        return future

    # --- batches ------------------------------------------------------------------------------

    async def _done(self, report: BatchReport) -> None:
        """A batch is done: what it held is never acked (its partitions are read again from
        their positions, so Faust cannot commit past it), the rest is acked by Faust."""
        admission = report.admission
        if admission.held:
            withhold_acks([cast(EventT[Any], message.handle) for message in admission.held])
        for (topic, partition), offset in admission.restart.items():
            # Records fetched before the seek to the commit had finished: routine.
            await self.seek(topic, partition, offset, None)
        for (topic, partition), offset in admission.rewind.items():
            await self.seek(topic, partition, offset, "skipped a record")
        self._count(report)

    def _end_offset(self, topic: str, partition: int) -> tuple[int, float] | None:
        """The end of (topic, partition) in the broker's last fetch answer (its high
        watermark), and when that answer was read; None while unknown (no fetch answered
        yet): that only holds watermarks back."""
        if not private.consumer_exists(self.app):
            return None
        try:
            return private.fetched_end(self.app.consumer, TP(topic, partition))
        except Exception:  # not assigned here, or no consumer thread yet
            return None

    async def _deliver_records(self, agent: str, records: list[OutRecord]) -> list[DeadLetter]:
        return await self.deliveries[agent].deliver(records)

    def _count(self, report: BatchReport) -> None:
        out = report.out
        m, s = self.metrics, self.settings
        for topic, n in report.per_topic.items():
            m.events_in.labels(topic).inc(n)
        moved = time.monotonic()
        for topic, partition in report.admission.reached:
            self._progress_at[TP(topic, partition)] = moved
        if report.admission.reached:
            self.commits.batch_done()
        outgoing: list[tuple[str, Mapping[int, Sized]]] = [
            (s.player_commands_topic, out.player_commands),
            (s.match_commands_topic, out.match_commands),
        ]
        for topic, commands in outgoing:
            if commands:
                m.events_out.labels(topic).inc(sum(len(c) for c in commands.values()))
        if out.ratings:
            m.events_out.labels(s.topics.rating_changed).inc(len(out.ratings))
        if out.dead_letters:
            m.events_out.labels(s.topics.dead_letter).inc(len(out.dead_letters))
            for letter in out.dead_letters:
                m.dead_lettered.labels(letter.origin.topic, reason_kind(letter.reason)).inc()
        m.count_outbox(out.counts)
        for note in out.notes:
            log.warning("%s", note)
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
