"""The harness's Kafka traffic: matches out in waves, rating-changed (and dead letters) in.

Live ratings equal an offline replay exactly when each player's next match is published only
after the previous one was rated, so matches go out in *waves* in which no player plays
twice, and the next wave waits until every (player, match) of the current one has its
rating-changed event.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import Iterable, Iterator, Sequence

import orjson
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from stream.chaos.verify import RatingLog
from stream.config.settings import Settings
from stream.simulation.core import SimulatedMatch
from stream.simulation.gamefleet import match_events

__all__ = ["Publisher", "RatingReader", "match_messages", "stop_traffic", "waves"]

Message = tuple[str, bytes, bytes]  # (topic, key, value)


def waves(matches: Iterable[SimulatedMatch]) -> Iterator[list[SimulatedMatch]]:
    """Matches in file order, cut into groups in which no player plays twice."""
    wave: list[SimulatedMatch] = []
    players: set[str] = set()
    for m in matches:
        ids = {pid for team in m.teams for pid in team}
        if players & ids:
            yield wave
            wave, players = [], set()
        wave.append(m)
        players |= ids
    if wave:
        yield wave


def match_messages(
    matches: Iterable[SimulatedMatch], started_topic: str, finished_topic: str
) -> list[Message]:
    """match-started and match-finished for each match, keyed by match id, with the history's
    own times (not the wall clock), so an offline replay of the same matches is comparable."""
    out: list[Message] = []
    for m in matches:
        start, finish = match_events(m, None, omit_teams=False)
        key = m.match_id.encode()
        out.append((started_topic, key, orjson.dumps(start)))
        out.append((finished_topic, key, orjson.dumps(finish)))
    return out


class Publisher:
    """The game fleet's producer. aiokafka's default partitioner is murmur2 on the key, like
    the Java client's; a worker forwards an event that lands off its home partition anyway.

    Failure: ``publish`` raises KafkaError (e.g. KafkaTimeoutError) if the broker does not
    acknowledge within the request timeout, which outlasts the planned broker pause.
    """

    def __init__(
        self, bootstrap_servers: str, anywhere: tuple[int, random.Random] | None = None
    ) -> None:
        """``anywhere``: (partitions, generator) to put each event on a partition drawn at
        random instead of by its key, as a fleet whose producer ignores keys does (most events
        then land off their match's home partition and the worker forwards them)."""
        self._producer = AIOKafkaProducer(
            bootstrap_servers=bootstrap_servers,
            acks="all",
            linger_ms=5,
            request_timeout_ms=120_000,
        )
        self._anywhere = anywhere

    async def start(self) -> None:
        await self._producer.start()

    async def stop(self) -> None:
        await self._producer.stop()

    async def publish(self, messages: Sequence[Message]) -> None:
        """Send and wait until the broker has every message."""
        pending = []
        for topic, key, value in messages:
            partition = None
            if self._anywhere is not None:
                count, rng = self._anywhere
                partition = rng.randrange(count)
            pending.append(await self._producer.send(topic, value, key=key, partition=partition))
        await asyncio.gather(*pending)


class RatingReader:
    """Every partition of the rating-changed topic (and of the dead-letter topic) from offset
    0, assigned by hand (no consumer group, nothing committed), into a :class:`RatingLog`.

    Failure: ``run`` retries fetches itself (aiokafka) while the broker is away; what aiokafka
    cannot retry ends ``run`` and is kept in ``error``, and ``wait_for`` then returns at once
    (with what is missing), so the run stops and reports it instead of waiting in vain.
    """

    def __init__(self, settings: Settings, log: RatingLog) -> None:
        """Read the topics, partitions and broker ``settings`` name (what the workers write)."""
        topics = settings.topics
        self.topic = topics.rating_changed
        self.dead_letter_topic = topics.dead_letter
        self.log = log
        self.dead_letters: list[bytes] = []
        self.last_record = time.monotonic()
        self.error: BaseException | None = None
        self._partitions = [
            TopicPartition(t, p)
            for t in (self.topic, self.dead_letter_topic)
            for p in range(settings.partitions)
        ]
        self._consumer = AIOKafkaConsumer(
            bootstrap_servers=settings.kafka.bootstrap_servers,
            group_id=None,
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            # Tansu answers a fetch only when its wait ends: short enough to see ratings soon,
            # long enough not to keep the broker's two cores busy with empty fetches.
            fetch_max_wait_ms=50,
            request_timeout_ms=120_000,
        )
        self._changed = asyncio.Condition()
        self._stopping = asyncio.Event()

    async def start(self) -> None:
        await self._consumer.start()
        self._consumer.assign(self._partitions)
        await self._consumer.seek_to_beginning(*self._partitions)

    def stop(self) -> None:
        self._stopping.set()

    async def close(self) -> None:
        await self._consumer.stop()

    async def run(self) -> None:
        """Read until stop() (or an error aiokafka cannot retry: see the class docstring)."""
        try:
            while not self._stopping.is_set():
                batches = await self._consumer.getmany(timeout_ms=200, max_records=5000)
                if not batches:
                    continue
                for tp, records in batches.items():
                    for record in records:
                        if tp.topic == self.topic:
                            self.log.add(record.value or b"")
                        else:
                            self.dead_letters.append(record.value or b"")
                self.last_record = time.monotonic()
                async with self._changed:
                    self._changed.notify_all()
        except Exception as exc:
            self.error = exc
            async with self._changed:
                self._changed.notify_all()

    async def wait_for(
        self, pairs: Iterable[tuple[str, str]], timeout: float
    ) -> set[tuple[str, str]]:
        """Wait until every (player, match) has a rating-changed; returns the ones still missing
        when ``timeout`` seconds have passed (empty: all there)."""
        missing = {pair for pair in pairs if not self.log.has(pair)}
        deadline = time.monotonic() + timeout
        while missing and self.error is None:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            async with self._changed:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._changed.wait(), min(left, 1.0))
            missing = {pair for pair in missing if not self.log.has(pair)}
        return missing

    async def settle(self, quiet: float, timeout: float) -> None:
        """Wait until no record arrived for ``quiet`` seconds (redeliveries of the last batches
        come a moment after their first copies), or ``timeout`` seconds in all."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            idle = time.monotonic() - self.last_record
            if idle >= quiet:
                return
            await asyncio.sleep(min(quiet - idle, max(deadline - time.monotonic(), 0.0)) + 0.01)


async def stop_traffic(
    reader: RatingReader, publisher: Publisher, tasks: Sequence[asyncio.Task[None]]
) -> None:
    """The end of a run's traffic, in a ``finally``: the reader and ``tasks`` stopped (each
    task awaited once cancelled), then the clients closed. Errors are swallowed: the run's
    own error, if any, is the one to see."""
    reader.stop()
    for task in tasks:
        task.cancel()
    for task in tasks:
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await task
    with contextlib.suppress(Exception):
        await publisher.stop()
    with contextlib.suppress(Exception):
        await reader.close()
