"""The cache writer's feed: rating-changed from Kafka into Redis, at least once.

It is a consumer of the ``rating-changed`` topic in its own group (``<app id>-cache``), not a
step of the rating agents. Measured and reasoned in docs/decisions.md ("The cache writer
consumes rating-changed"): the one extra hop costs about one broker fetch of latency, and in
exchange Redis can be down for as long as Kafka keeps the topic without the rating agents
waiting or anything being lost.

Failure: a Redis error (down, slow, failing over, read-only replica) stops the feed at the
batch in hand; it retries that batch with exponential backoff (0.1 s doubling to 5 s), logs the
outage once and then the lag every 10 s (the lag counts what the workers publish meanwhile: the
end offsets are asked from the broker on every retry), logs when Redis is back, and commits the
batch's offsets only after Redis has it. Rating goes on meanwhile; the events wait in Kafka.
A Kafka error (a dead letter or a commit that fails, the broker unreachable) seeks the batch's
partitions back to the batch's first records and redoes it after a backoff, with one log line
when Kafka starts failing and one when it works again; nothing is skipped.

Replay: after a crash or a rebalance the feed reads again from the last committed offsets and
writes those events again; the write script keeps a key's newest version, so a replayed,
duplicated or late event never overwrites newer state.

The feed trusts nothing it reads: records that are not JSON, lack fields, or hold a value no
engine produces (non-finite numbers, ratings, versions or game counts beyond the bounds of
stream/cache/entry.py, a mode the modes file rejects) go to the dead-letter topic with their
bytes (cut to the producer's record limit if needed, and marked so), origin and reason, and are
never written; the feed goes on.

Each rating change written also scores its expected score against its outcome
(:attr:`FeedStats.quality`, stream/quality.py): the worker's metrics export it per mode. Once
every :data:`DRIFT_SECONDS`, and at once for a mode new to the feed, a task beside the feed
reads where each mode's active players sit from the boards (:attr:`FeedStats.drift`,
stream/cache/drift.py) for the same metrics: the modes listed, those the cache holds (found at
the first reading) and every mode written since. It never holds a batch back; a Redis error
there keeps the last figures, which the next reading replaces.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from collections import Counter
from collections.abc import Awaitable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import orjson
import redis.asyncio as aioredis
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.errors import CommitFailedError, KafkaError
from redis.exceptions import RedisError

from stream.cache.drift import modes_held, read_drift, season_started
from stream.cache.entry import CachedRating, correction_of
from stream.cache.keys import KeyLayout, check_id
from stream.cache.population import event_population
from stream.cache.writer import CacheWriter, Retraction
from stream.commits import close_batch
from stream.config.modes import Modes
from stream.config.settings import KafkaSettings, Settings
from stream.deadletters import DeadLetter, Origin, reason_kind
from stream.delivery import Delivery, letter_record
from stream.offline.ratingdrift import DriftPoint
from stream.quality import PredictionQuality
from stream.ratings.population import Population
from stream.retry import Backoff, Outage

log = logging.getLogger("skillstream.cache")

LAG_LOG_SECONDS = 10.0
# How often the boards are read for the drift figures (a reading costs a few thousand members).
DRIFT_SECONDS = 60.0
# How long asking the broker for end offsets may take while Redis is down.
END_OFFSETS_TIMEOUT_SECONDS = 2.0


@dataclass
class FeedStats:
    """What the feed has done; the worker's metrics read it."""

    written: int = 0  # rating changes applied to Redis
    stale: int = 0  # older than or equal to what Redis had (replays, duplicates)
    dead_lettered: int = 0
    dead_letter_reasons: Counter[str] = field(default_factory=Counter)  # by reason_kind
    errors: int = 0  # failed attempts to write a batch
    lag_records: int = 0  # rating-changed events in Kafka not yet in Redis
    # When the oldest rating change not yet in Redis was published (its Kafka timestamp; None:
    # caught up). Not its event time: a replay or a backfill of old matches is not "lag".
    oldest_pending_ms: int | None = None
    outage_since: float | None = None  # monotonic time of the first failure of this outage
    last_write: float | None = field(default=None)
    # The expected scores of the rating changes written, against their outcomes.
    quality: PredictionQuality = field(default_factory=PredictionQuality)
    # Per mode, where its active players sit (the boards, read every DRIFT_SECONDS), and when
    # the season being played started (epoch seconds; a mode without seasons has none).
    drift: dict[str, DriftPoint] = field(default_factory=dict)
    season_started: dict[str, float] = field(default_factory=dict)

    def lag_seconds(self, now_ms: int | None = None) -> float:
        """How far the cache is behind the rating state, in seconds of wall time (0: caught up)."""
        if self.oldest_pending_ms is None:
            return 0.0
        now = time.time() * 1000 if now_ms is None else now_ms
        return max(0.0, (now - self.oldest_pending_ms) / 1000)


class CacheFeed:
    """Consume rating-changed and write it to Redis; ``run()`` until ``stop()``."""

    def __init__(
        self,
        writer: CacheWriter,
        bootstrap_servers: str,
        topic: str,
        group_id: str,
        dead_letter_topic: str,
        *,
        batch_size: int = 2000,
        fetch_max_wait_ms: int = 20,
        session_timeout_ms: int = 10_000,
        client_options: dict[str, Any] | None = None,
        modes: Modes | None = None,
        max_request_bytes: int = KafkaSettings.max_request_bytes,
    ) -> None:
        self.writer = writer
        self.modes = Modes() if modes is None else modes
        self.max_request_bytes = max_request_bytes
        self.topic = topic
        self.dead_letter_topic = dead_letter_topic
        self.batch_size = batch_size
        self.stats = FeedStats()
        self._stopping = asyncio.Event()
        # Each learning mode's population as this feed last wrote it.
        self._populations: dict[str, Population] = {}
        options = client_options or {}
        self._consumer = AIOKafkaConsumer(
            topic,
            bootstrap_servers=bootstrap_servers,
            group_id=group_id,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            fetch_max_wait_ms=fetch_max_wait_ms,
            # As the rating agents': a killed worker's cache partitions move on as soon.
            session_timeout_ms=session_timeout_ms,
            heartbeat_interval_ms=max(100, session_timeout_ms // 5),
            # A long Redis outage must not make the group think this consumer died.
            max_poll_interval_ms=3_600_000,
            **options,
        )
        self._producer = AIOKafkaProducer(
            bootstrap_servers=bootstrap_servers,
            acks="all",
            max_request_size=max_request_bytes,
            **options,
        )
        self._last_lag_log = 0.0
        # The modes whose boards are read for the drift figures (module docstring), those new
        # to the feed and due at once, and the reading under way.
        self._drift_modes: set[str] = set(self.modes.listed)
        self._drift_due: set[str] = set()
        self._drift_held = False
        self._last_drift = -math.inf
        self._drift_task: asyncio.Future[None] | None = None
        # Its dead letters go out as the agents' do (stream/delivery.py).
        self._letters = Delivery(
            self._send, self.dead_letter_topic, self.max_request_bytes, "cache feed: dead letters"
        )
        self._kafka = Outage("cache feed", log)
        self._kafka_backoff = Backoff()
        # The wording of both lines is documented (docs/guarantees.md, docs/architecture.md).
        self._redis = Outage(
            "cache feed",
            log,
            start="{what}: Redis write failed ({error}); retrying with backoff",
            end="{what}: Redis is back after {seconds:.1f} s; writing the backlog",
        )

    def stop(self) -> None:
        self._stopping.set()

    async def run(self) -> None:
        """Write until stop(); a batch whose Redis write is being retried is left uncommitted.

        Never raises for an unreachable Kafka, at start or later, nor for an error while
        handling a batch: it logs one line when the failures start and one when they end, and
        retries with backoff until it works or ``stop()`` is called.
        """
        try:
            if await self._start(self._producer) and await self._start(self._consumer):
                await self._loop()
        finally:
            if self._drift_task is not None:
                self._drift_task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await self._drift_task
            await self._consumer.stop()
            await self._producer.stop()

    async def _start(self, client: AIOKafkaConsumer | AIOKafkaProducer) -> bool:
        """Start ``client``, retrying until Kafka answers; False if stopped first."""
        while not self._stopping.is_set():
            try:
                await client.start()
            except KafkaError as exc:
                await self._backoff(f"cannot connect ({exc!r})")
                continue
            return True
        return False

    async def _loop(self) -> None:
        while not self._stopping.is_set():
            try:
                await self._step()
            except Exception as exc:
                # A Kafka error, or a bug: the batch was sought back and is redone.
                await self._backoff(repr(exc))
                continue
            self._kafka.recovered()
            self._kafka_backoff.reset()

    async def _backoff(self, error: str) -> None:
        self._kafka.failed(error)
        await self._kafka_backoff.wait(self._stopping)

    async def _step(self) -> None:
        batches = await self._consumer.getmany(timeout_ms=200, max_records=self.batch_size)
        if batches:
            try:
                await self._handle(batches)
            except Exception:
                # Not written or not committed: read the batch again (rewriting is harmless).
                for tp, records in batches.items():
                    self._consumer.seek(tp, records[0].offset)
                raise
        await self._update_lag(0)
        self._log_lag(time.monotonic(), None)
        self._start_drift(time.monotonic())

    def _start_drift(self, now: float) -> None:
        """Start a reading of the drift figures beside the feed (module docstring): of every
        mode once every :data:`DRIFT_SECONDS`, else of the modes new to the feed; never two at
        once."""
        if self._drift_task is not None and not self._drift_task.done():
            return
        if now - self._last_drift >= DRIFT_SECONDS:
            self._last_drift = now
            modes = None
        elif self._drift_due:
            modes = set(self._drift_due)
        else:
            return
        self._drift_due.clear()
        self._drift_task = asyncio.ensure_future(self._read_drift(modes))

    async def _read_drift(self, modes: set[str] | None) -> None:
        """The drift figures of ``modes`` (None: every mode known, and at the first reading
        the modes the cache holds)."""
        redis, layout = self.writer.redis, self.writer.layout
        try:
            if modes is None and not self._drift_held:
                self._drift_modes |= await modes_held(redis, layout)
                self._drift_held = True
            for mode in sorted(self._drift_modes if modes is None else modes):
                point = await read_drift(redis, layout, mode)
                if point is None:
                    continue
                self.stats.drift[mode] = point
                started = season_started(self.modes, mode, point.season)
                if started is None:
                    self.stats.season_started.pop(mode, None)
                else:
                    self.stats.season_started[mode] = started
        except (RedisError, OSError, ValueError) as exc:
            # Redis down or failing over: the write path says so; the figures wait for it.
            log.debug("cache feed: drift figures not read (%s); kept as they were", exc)

    def _refuse(self, entry: CachedRating) -> None:
        """ValueError for an entry that must not be cached (see the module's docstring)."""
        self.writer.check(entry)
        if not self.modes.accepts(entry.mode):
            raise ValueError(
                f"mode {entry.mode!r} is not in the modes file, which rejects unlisted modes"
            )

    async def _handle(self, batches: dict[TopicPartition, list[Any]]) -> None:
        entries: list[CachedRating] = []
        events: list[dict[str, Any]] = []
        # Per learning mode, the population of its latest event (stream/cache/population.py).
        populations: dict[str, tuple[int, Population]] = {}
        letters: list[DeadLetter] = []
        removals: list[tuple[str, str, int]] = []
        retractions: list[Retraction] = []
        offsets: dict[TopicPartition, int] = {}
        oldest: int | None = None
        for tp, records in batches.items():
            for record in records:
                try:
                    event = orjson.loads(record.value or b"")
                    if isinstance(event, dict) and "retracted" in event:
                        # A re-rate's retraction (stream/corrections/handover.py): one that
                        # leaves the player without a rating removes them; any other marks
                        # the matches it names in their history (voided, no longer counted).
                        if event.get("removed") is True:
                            removals.append(_removal(event))
                        else:
                            retractions.append(_retraction(event))
                        continue
                    entry = CachedRating.from_rating_changed(event)
                    self._refuse(entry)
                except (ValueError, TypeError) as exc:
                    # orjson's JSONDecodeError is a ValueError; its text does not say "JSON".
                    what = "not valid JSON: " if isinstance(exc, orjson.JSONDecodeError) else ""
                    origin = Origin(tp.topic, tp.partition, record.offset, record.timestamp)
                    reason = f"cache: {what}{exc}"
                    letters.append(DeadLetter(record.key, record.value, origin, reason))
                    continue
                entries.append(entry)
                events.append(event)
                if entry.mode not in self._drift_modes:
                    # A mode new to this feed is read at the next step, not a minute later.
                    self._drift_modes.add(entry.mode)
                    self._drift_due.add(entry.mode)
                population = event_population(event)
                if population is not None:
                    latest = populations.get(entry.mode)
                    if latest is None or entry.updated_at_ms > latest[0]:
                        populations[entry.mode] = (entry.updated_at_ms, population)
                published = record.timestamp if record.timestamp else entry.updated_at_ms
                if oldest is None or published < oldest:
                    oldest = published
            offsets[tp] = records[-1].offset + 1
        self.stats.oldest_pending_ms = oldest
        await self._update_lag(len(entries))
        # The commit protocol (stream/commits.py): dead letters in Kafka, then Redis, then the
        # offsets.
        written = await close_batch(
            partial(self._dead_letter, letters),
            partial(self._write, entries, populations, removals, retractions),
        )
        if not written:
            return  # stopping: the batch stays uncommitted and is read again next time
        # Once written, so retrying the Redis write does not count a batch twice (a batch
        # redone after a failed commit, a crash or a rebalance is: docs/quality.md).
        for event in events:
            self.stats.quality.observe_event(event)
        try:
            await self._consumer.commit(offsets)
        except CommitFailedError:
            # A rebalance moved the partitions: their new owner writes these events again,
            # which the versioned script makes harmless.
            log.info("cache feed: commit after a rebalance failed; events will be rewritten")
        self.stats.oldest_pending_ms = None

    async def _write(
        self,
        entries: list[CachedRating],
        populations: dict[str, tuple[int, Population]],
        removals: list[tuple[str, str, int]] | None = None,
        retractions: list[Retraction] | None = None,
    ) -> bool:
        """Write until Redis has the batch (True) or the feed is stopping (False). A learning
        mode's population goes along only when it differs from the last this feed wrote."""
        changed = {
            mode: found
            for mode, found in populations.items()
            if self._populations.get(mode) != found[1]
        }
        backoff = Backoff()
        while True:
            try:
                result = await self.writer.write(entries, changed)
                if removals:
                    # After the batch's changes: a removal never takes a newer version away.
                    await self.writer.remove(removals)
                if retractions:
                    await self.writer.retract(retractions)
            except (RedisError, OSError) as exc:
                # The error and the outage's start are recorded together, before the next await:
                # a reader of the stats must never see the one without the other.
                self.stats.errors += 1
                self._redis.failed(exc)
                self.stats.outage_since = self._redis.since
                await self._update_lag(len(entries), ask_broker=True)
                self._log_lag(time.monotonic(), str(exc))
                if self._stopping.is_set():
                    return False
                await backoff.wait(self._stopping)
                continue
            self._redis.recovered()
            for mode, (_, population) in changed.items():
                self._populations[mode] = population
            self.stats.outage_since = None
            self.stats.written += result.applied
            self.stats.stale += result.stale
            self.stats.last_write = time.monotonic()
            return True

    async def _dead_letter(self, letters: list[DeadLetter]) -> None:
        """Send the letters through the pipeline's sender (stream/delivery.py): a letter the
        broker refuses for its size is cut to half, down to a floor, instead of failing the
        batch for good; anything else is retried until it works or the feed stops."""
        if not letters:
            return
        for letter in letters:
            log.warning(
                "cache feed: dead-lettered %s[%d]@%d: %s",
                letter.origin.topic,
                letter.origin.partition,
                letter.origin.offset,
                letter.reason,
            )
        records = [
            letter_record(self.dead_letter_topic, letter, self.max_request_bytes)
            for letter in letters
        ]
        await self._letters.deliver(records, self._stopping)
        self.stats.dead_lettered += len(letters)
        self.stats.dead_letter_reasons.update(reason_kind(letter.reason) for letter in letters)

    async def _send(
        self,
        topic: str,
        key: bytes | None,
        value: bytes | None,
        partition: int | None,
        timestamp: float | None,
        headers: list[tuple[str, bytes]] | None,
    ) -> Awaitable[Any]:
        """The delivery port on the feed's aiokafka producer (Faust's producer's signature)."""
        future: Awaitable[Any] = await self._producer.send(
            topic, value, key=key, partition=partition, headers=headers
        )
        return future

    async def _update_lag(self, in_hand: int, *, ask_broker: bool = False) -> None:
        """Events in Kafka not yet in Redis: what the consumer has not fetched yet plus the
        batch in hand.

        The end of each partition is the fetch responses' high watermark; with ``ask_broker``
        (during a Redis outage, when nothing is fetched) also the broker's end offset, which
        keeps counting what the workers publish. A broker that cannot answer in 2 s leaves the
        watermarks alone.
        """
        assigned = list(self._consumer.assignment())
        ends: dict[TopicPartition, int] = {}
        if ask_broker and assigned:
            with contextlib.suppress(KafkaError, asyncio.TimeoutError):
                ends = await asyncio.wait_for(
                    self._consumer.end_offsets(assigned), END_OFFSETS_TIMEOUT_SECONDS
                )
        lag = in_hand
        for tp in assigned:
            known = [e for e in (self._consumer.highwater(tp), ends.get(tp)) if e is not None]
            if known:
                lag += max(0, max(known) - await self._consumer.position(tp))
        self.stats.lag_records = lag

    def _log_lag(self, now: float, error: str | None) -> None:
        lagging = self.stats.lag_records > 0 and self.stats.lag_seconds() > LAG_LOG_SECONDS
        if (error is None and not lagging) or now - self._last_lag_log < LAG_LOG_SECONDS:
            return
        self._last_lag_log = now
        log.warning(
            "cache lag: %d rating changes, %.1f s behind%s",
            self.stats.lag_records,
            self.stats.lag_seconds(),
            "" if error is None else f" (Redis: {error})",
        )


def redis_client(url: str) -> aioredis.Redis:
    """A client for the writer: short timeouts, so a stalled Redis fails a batch (which is
    retried) instead of hanging the feed; AUTH and TLS come from the URL."""
    client: aioredis.Redis = aioredis.Redis.from_url(
        url, socket_timeout=5.0, socket_connect_timeout=2.0, health_check_interval=10
    )
    return client


def writer_from_settings(
    settings: Settings, client: aioredis.Redis, modes: Modes | None = None
) -> CacheWriter:
    """The writer the feed and `skillstream cache rebuild` use with these settings; ``modes``
    (the settings' modes file when None) give the season schedules the grace is counted from."""
    return CacheWriter(
        client,
        KeyLayout(settings.cache.prefix),
        settings.cache.conservative_k,
        history_length=settings.cache.history_length,
        seasons_kept=settings.cache.seasons_kept,
        inactive_seconds=settings.cache.inactive_seconds,
        modes=settings.load_modes() if modes is None else modes,
        season_grace_seconds=settings.cache.season_grace_seconds,
    )


def feed_from_settings(settings: Settings) -> CacheFeed:
    """The feed a worker (or `skillstream cache writer`) runs with these settings."""
    modes = settings.load_modes()
    writer = writer_from_settings(settings, redis_client(settings.redis.url), modes)
    return CacheFeed(
        writer,
        settings.kafka.bootstrap_servers,
        settings.topics.rating_changed,
        settings.cache_group,
        settings.topics.dead_letter,
        fetch_max_wait_ms=max(1, round(settings.kafka.fetch_max_wait_seconds * 1000)),
        session_timeout_ms=round(settings.kafka.session_timeout_seconds * 1000),
        client_options=settings.kafka.security.aiokafka_options(),
        modes=modes,
        max_request_bytes=settings.kafka.max_request_bytes,
    )


def _retraction(event: dict[str, Any]) -> Retraction:
    """A retraction that leaves the player a rating; ValueError when a field is wrong."""
    mode, player, version = _removal(event)
    matches = event.get("retracted")
    if not isinstance(matches, list) or not all(isinstance(m, str) for m in matches):
        raise ValueError(f"a retraction's 'retracted' must be a list of match ids, got {matches!r}")
    for match in matches:
        check_id(match, "retracted match id")
    return Retraction(mode, player, version, tuple(matches), correction_of(event.get("correction")))


def _removal(event: dict[str, Any]) -> tuple[str, str, int]:
    """(mode, player id, version) of a removal; ValueError when a field is wrong."""
    mode, player, version = event.get("mode"), event.get("player_id"), event.get("version")
    # The key layout's own checks, here: an id it refuses is dead-lettered, not raised in the
    # Redis write (which retries only Redis errors).
    check_id(mode, "mode")
    check_id(player, "player_id")
    assert isinstance(mode, str) and isinstance(player, str)
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise ValueError(f"a retraction's version must be a whole number >= 1, got {version!r}")
    return mode, player, version
