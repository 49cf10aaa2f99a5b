"""A simulated game fleet that publishes match-started and match-finished events to Kafka.

It replays :class:`Simulator` matches at a chosen rate, with the faults real fleets have:
duplicates, a finish delivered before its start, matches that never finish (players who
abandon), quitters (from the simulation), and finishes without their line-up.
"""

from __future__ import annotations

import asyncio
import heapq
import random
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiokafka import AIOKafkaProducer

from stream.events import format_time
from stream.simulation.core import SimulatedMatch
from stream.simulation.partitioners import MURMUR2, Partitioning
from stream.simulation.writers import match_finished_event


@dataclass(frozen=True, slots=True)
class FleetConfig:
    # Matches per second; 0 sends as fast as the broker takes them.
    rate: float = 100.0
    # Event times from the wall clock (a live fleet); False keeps the simulated history's
    # times, so the same matches can be replayed offline and compared.
    realtime: bool = True
    duplicate_rate: float = 0.0
    reorder_rate: float = 0.0
    abandon_rate: float = 0.0
    omit_teams_rate: float = 0.0
    # Seconds between a match's start and its finish (realtime only; 0: sent together).
    match_seconds: float = 0.0
    # Both events published at the finish, the start dated ``match_seconds`` earlier: fleets
    # that publish a match once it is over.
    at_end: bool = False
    # No match-started at all: the finish carries the line-up (fleets that publish only that).
    finish_only: bool = False
    seed: int = 0
    # How long the producer waits to fill a batch: real fleets are many small producers, but
    # one simulated fleet sending each event alone costs the local broker a stored batch each.
    linger_ms: int = 5
    match_started_topic: str = "match-started"
    match_finished_topic: str = "match-finished"
    # How the producer picks partitions (murmur2 as Java clients, CRC32 as librdkafka, no key).
    partitioning: Partitioning = MURMUR2

    def __post_init__(self) -> None:
        if not self.rate >= 0:
            raise ValueError(f"rate must be >= 0, got {self.rate}")
        if self.linger_ms < 0:
            raise ValueError(f"linger_ms must be >= 0, got {self.linger_ms}")
        if not self.match_seconds >= 0:
            raise ValueError(f"match_seconds must be >= 0, got {self.match_seconds}")
        if self.finish_only and self.omit_teams_rate > 0:
            raise ValueError("finish_only needs every finish's teams: omit_teams_rate must be 0")
        for name in ("duplicate_rate", "reorder_rate", "abandon_rate", "omit_teams_rate"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be between 0 and 1, got {value}")


@dataclass
class FleetReport:
    matches: int = 0
    messages: int = 0
    abandoned: int = 0
    # match id -> wall time its match-finished was handed to the producer
    finished_at_wall: dict[str, float] = field(default_factory=dict)
    seconds: float = 0.0


def match_events(
    match: SimulatedMatch,
    now: float | None,
    omit_teams: bool,
    duration: float = 0.0,
    *,
    at_end: bool = False,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(match-started, match-finished) for ``match``; ``now`` replaces its start time, or its
    finish time when the match is published ``at_end`` (the start ``duration`` earlier)."""
    finish = match_finished_event(match)
    if now is None:
        finished_at = match.at
        # The start one millisecond before the finish keeps a player's matches from overlapping.
        started_at = finished_at - 0.001
    elif at_end:
        finished_at = now
        started_at = now - max(duration, 0.001)
    else:
        started_at = now
        finished_at = now + max(duration, 0.001)
    finish["finished_at"] = format_time(finished_at)
    if omit_teams:
        del finish["teams"]
    start = {
        "match_id": match.match_id,
        "mode": match.mode,
        "started_at": format_time(started_at),
        "teams": [list(team) for team in match.teams],
    }
    return start, finish


async def run_fleet(
    matches: Iterable[SimulatedMatch],
    bootstrap_servers: str,
    config: FleetConfig,
    progress: Callable[[FleetReport], None] | None = None,
    report: FleetReport | None = None,
    client_options: Mapping[str, Any] | None = None,
) -> FleetReport:
    """Publish ``matches``; returns what was sent (``report``, if given, fills as it goes).
    ``client_options``: the producer's security options (TLS, SASL), as the settings give them.

    Raises KafkaError if the broker fails.
    """
    producer = AIOKafkaProducer(
        bootstrap_servers=bootstrap_servers,
        linger_ms=config.linger_ms,
        acks="all",
        max_batch_size=262144,
        partitioner=config.partitioning.partitioner,
        **(client_options or {}),
    )
    await producer.start()
    fleet = _Fleet(producer, config, FleetReport() if report is None else report)
    try:
        for match in matches:
            await fleet.pace()
            await fleet.send_due(time.time())
            await fleet.publish(match)
            if progress is not None and fleet.report.matches % 1000 == 0:
                progress(fleet.report)
        await fleet.finish()
    finally:
        await producer.stop()
    fleet.report.seconds = time.monotonic() - fleet.started
    return fleet.report


class _Fleet:
    """One run of the fleet: its producer, what it has sent and what waits to be sent."""

    def __init__(self, producer: AIOKafkaProducer, config: FleetConfig, report: FleetReport):
        self.producer = producer
        self.config = config
        self.report = report
        self.rng = random.Random(config.seed)
        self.started = time.monotonic()
        self.pending: list[asyncio.Future[Any]] = []
        # Finishes waiting for their match to end: (wall time due, sequence, match id, value).
        self.later: list[tuple[float, int, str, bytes]] = []
        self.key_of: dict[str, bytes | None] = {}

    async def send(self, topic: str, key: bytes | None, value: bytes, match_id: str) -> None:
        self.pending.append(await self.producer.send(topic, value, key=key))
        self.report.messages += 1
        if topic == self.config.match_finished_topic:
            self.report.finished_at_wall.setdefault(match_id, time.time())

    async def send_due(self, until: float) -> None:
        """The delayed finishes whose match has ended by ``until``."""
        later = self.later
        while later and later[0][0] <= until:
            _, _, match_id, value = heapq.heappop(later)
            await self.send(
                self.config.match_finished_topic, self.key_of.pop(match_id), value, match_id
            )

    async def pace(self) -> None:
        """Wait until the next match is due at the configured rate (0: flat out)."""
        rate = self.config.rate
        if rate <= 0:
            return
        delay = self.started + self.report.matches / rate - time.monotonic()
        if delay > 0:
            await self.flush()
            await asyncio.sleep(delay)

    async def flush(self) -> None:
        await asyncio.gather(*self.pending)
        self.pending.clear()

    async def publish(self, match: SimulatedMatch) -> None:
        """One match's events, as the configured fleet sends them: started and finished,
        the finish delayed until the match ends, abandoned (no finish), reordered, duplicated."""
        config, rng, report = self.config, self.rng, self.report
        now = time.time() if config.realtime else None
        omit = rng.random() < config.omit_teams_rate
        start, finish = match_events(match, now, omit, config.match_seconds, at_end=config.at_end)
        key = match.match_id.encode() if config.partitioning.keyed else None
        messages: list[tuple[str, bytes]] = (
            [] if config.finish_only else [(config.match_started_topic, orjson.dumps(start))]
        )
        delayed = config.realtime and config.match_seconds > 0 and not config.at_end
        if rng.random() < config.abandon_rate:
            report.abandoned += 1
        elif delayed:
            self.key_of[match.match_id] = key
            due = time.time() + config.match_seconds
            heapq.heappush(self.later, (due, report.matches, match.match_id, orjson.dumps(finish)))
        else:
            messages.append((config.match_finished_topic, orjson.dumps(finish)))
            if rng.random() < config.reorder_rate:
                messages.reverse()
        if rng.random() < config.duplicate_rate:
            messages.append(rng.choice(messages))
        for topic, value in messages:
            await self.send(topic, key, value, match.match_id)
        report.matches += 1
        if len(self.pending) >= 10_000:
            await self.flush()

    async def finish(self) -> None:
        """The delayed finishes left, each when its match ends, then every send acknowledged."""
        while self.later:
            await asyncio.sleep(max(0.0, min(0.05, self.later[0][0] - time.time())))
            await self.send_due(time.time())
        await self.flush()
