"""`skillstream bench pipeline`: sustained 1v1 matches/s and end-to-end latency on a real stack,
and how fast a backlog left by an outage drains.

Latency is from the moment a match-finished is handed to the producer to the CreateTime of
each rating-changed the worker produced for it (one machine, one clock).
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import statistics
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass

import orjson
from aiokafka import AIOKafkaConsumer, TopicPartition

from stream.bench.topics import count_logs
from stream.simulation import SimulatedMatch, SimulationConfig, Simulator
from stream.simulation.gamefleet import FleetConfig, FleetReport, run_fleet
from stream.simulation.partitioners import MURMUR2, Partitioning


@dataclass(frozen=True)
class PipelineRun:
    matches: int
    target_rate: float
    produce_seconds: float
    # From the first event produced to the last rating-changed received.
    total_seconds: float
    ratings: int
    latencies_ms: list[float]
    # How long each match lasted: the first finish comes this long after the first start.
    match_seconds: float = 0.0

    @property
    def rating_seconds(self) -> float:
        """From the first finish that could be rated to the last rating-changed."""
        return max(self.total_seconds - self.match_seconds, 1e-9)

    @property
    def matches_per_second(self) -> float:
        return self.matches / self.rating_seconds

    def percentile(self, q: float) -> float:
        ordered = sorted(self.latencies_ms)
        if not ordered:
            return float("nan")
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    @property
    def median_ms(self) -> float:
        return statistics.median(self.latencies_ms) if self.latencies_ms else float("nan")


async def consumer_at_end(bootstrap_servers: str, topic: str) -> AIOKafkaConsumer:
    """A started consumer of ``topic`` positioned at its end, before a run produces. Tansu's
    end offsets can fall inside the last batch (docs/decisions.md, known problems), so records
    of an earlier run may still be read: a caller counts only its own run's matches."""
    consumer = AIOKafkaConsumer(
        topic,
        bootstrap_servers=bootstrap_servers,
        auto_offset_reset="latest",
        fetch_max_wait_ms=50,
    )
    await consumer.start()
    await consumer.seek_to_end()
    for tp in consumer.assignment():
        await consumer.position(tp)
    return consumer


async def run_load(
    bootstrap_servers: str,
    matches: int,
    rate: float,
    *,
    seed: int,
    players: int = 20_000,
    match_seconds: float = 0.0,
    at_end: bool = False,
    finish_only: bool = False,
    timeout: float = 300.0,
    progress: Callable[[int, int], None] | None = None,
    partitioning: Partitioning = MURMUR2,
    alive: Callable[[], bool] | None = None,
) -> PipelineRun:
    """Publish ``matches`` 1v1 matches at ``rate`` (0: flat out), partitioned as
    ``partitioning`` says, and wait for every rating: at most ``timeout`` seconds, and no
    longer than ``alive`` (the app that rates them still running) says. What arrived is in
    the run's ``ratings``: the caller decides what a run with fewer than every rating means."""
    consumer = await consumer_at_end(bootstrap_servers, "rating-changed")
    played = simulated_matches(matches, seed=seed, players=players)
    ours = {match.match_id for match in played}
    fleet = FleetConfig(
        rate=rate,
        seed=seed,
        match_seconds=match_seconds,
        at_end=at_end,
        finish_only=finish_only,
        partitioning=partitioning,
    )
    report_box: list[FleetReport] = []
    started = time.time()

    async def produce() -> None:
        report_box.append(await run_fleet(played, bootstrap_servers, fleet))

    producing = asyncio.create_task(produce())
    expected = 2 * matches
    received: list[tuple[str, float]] = []
    last = started
    try:
        deadline = time.monotonic() + timeout
        while len(received) < expected and time.monotonic() < deadline:
            batch = await consumer.getmany(timeout_ms=200, max_records=10_000)
            for records in batch.values():
                for record in records:
                    match_id = _match_id(record.value)
                    if match_id in ours:
                        received.append((match_id, record.timestamp / 1000.0))
                        last = max(last, record.timestamp / 1000.0)
            if progress is not None:
                progress(len(received), expected)
            if producing.done() and producing.exception() is not None:
                raise producing.exception()  # type: ignore[misc]
            if alive is not None and not alive():
                break  # gone: nothing more will come (what it wrote before is read above)
        await producing
    finally:
        await consumer.stop()
    report = report_box[0]
    sent = report.finished_at_wall
    latencies = [(at - sent[mid]) * 1000.0 for mid, at in received if mid in sent]
    return PipelineRun(
        matches=matches,
        target_rate=rate,
        produce_seconds=report.seconds,
        total_seconds=last - started,
        ratings=len(received),
        latencies_ms=latencies,
        # Published at the end, a match's events go out together: no wait for its finish.
        match_seconds=0.0 if at_end else match_seconds,
    )


def simulated_matches(matches: int, *, seed: int, players: int = 20_000) -> list[SimulatedMatch]:
    """The 1v1 matches the load generator publishes for ``seed``."""
    simulation = SimulationConfig(
        seed=seed, matches=matches, players=players, initial_players=players
    )
    return list(Simulator(simulation))


async def publish_flat_out(
    bootstrap_servers: str,
    matches: int,
    *,
    seed: int,
    players: int = 20_000,
    partitioning: Partitioning = MURMUR2,
) -> FleetReport:
    """Publish the matches :func:`run_load` publishes flat out, without waiting for ratings
    (for an app that rates nothing: stream/bench/faust_floor.py)."""
    fleet = FleetConfig(rate=0.0, seed=seed, partitioning=partitioning)
    return await run_fleet(
        simulated_matches(matches, seed=seed, players=players), bootstrap_servers, fleet
    )


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time a running process has used (Linux /proc); 0.0 if it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class CpuClock:
    """The CPU seconds each of ``pids`` has used since the clock was made (Linux /proc)."""

    def __init__(self, pids: list[int]) -> None:
        self.pids = pids
        self.start = [cpu_seconds(pid) for pid in pids]

    def used(self) -> list[float]:
        return [cpu_seconds(pid) - b for pid, b in zip(self.pids, self.start, strict=True)]


def _match_id(value: bytes) -> str:
    return str(orjson.loads(value)["match_id"])


# The span of event time a backlog's matches are dated over (publish_backlog).
BACKLOG_SECONDS = 120.0


async def publish_backlog(
    bootstrap_servers: str,
    matches: int,
    *,
    seed: int,
    players: int,
    partitioning: Partitioning = MURMUR2,
    late: bool = False,
) -> None:
    """Publish ``matches`` simulated 1v1 matches flat out, in the simulated history's order,
    dated over the :data:`BACKLOG_SECONDS` after now, while no worker runs: the backlog an
    outage leaves, after whatever was rated before it. (Until 2026-12-07 they kept the
    history's own dates, months before the warm-up's matches rated at the wall clock: every
    start was behind event time by that much, a backlog of late starts, not an outage's. The
    history's days are squeezed, not kept: a worker dead-letters events more than
    ``SKILLSTREAM_MAX_FUTURE_SECONDS`` ahead of its clock.) ``late``: the history's own dates,
    that backlog of late starts (docs/event-time.md, "Late starts")."""
    simulation = SimulationConfig(
        seed=seed, matches=matches, players=players, initial_players=players
    )
    played = list(Simulator(simulation))
    first = min((match.at for match in played), default=0.0)
    span = max((match.at for match in played), default=0.0) - first
    scale = min(1.0, BACKLOG_SECONDS / span) if span > 0 else 1.0
    now = time.time() + 1.0
    dated = (
        played
        if late
        else [dataclasses.replace(match, at=now + (match.at - first) * scale) for match in played]
    )
    fleet = FleetConfig(rate=0.0, realtime=False, seed=seed, partitioning=partitioning)
    await run_fleet(dated, bootstrap_servers, fleet)


async def rating_offsets(bootstrap_servers: str) -> dict[int, int]:
    """The end offset of every rating-changed partition: where this run's ratings start.

    Read from the log (stream/bench/topics.py), not from ListOffsets, which Tansu answers too
    low: the ratings read from there would include earlier ones and end the wait too soon."""
    logs = await count_logs(bootstrap_servers, topics=["rating-changed"])
    return {tp.partition: log.end for tp, log in logs.items()}


async def last_rating_at(
    bootstrap_servers: str,
    offsets: dict[int, int],
    expected: int,
    *,
    timeout: float = 600.0,
    progress: Callable[[int, int], None] | None = None,
    alive: Callable[[], bool] | None = None,
) -> tuple[int, float]:
    """Read rating-changed from ``offsets`` until ``expected`` records came (or ``timeout``,
    or ``alive`` says the worker is gone): (how many came, the CreateTime of the last one,
    epoch seconds)."""
    consumer = AIOKafkaConsumer(bootstrap_servers=bootstrap_servers, fetch_max_wait_ms=50)
    await consumer.start()
    received, last = 0, 0.0
    try:
        tps = [TopicPartition("rating-changed", p) for p in offsets]
        consumer.assign(tps)
        for tp in tps:
            consumer.seek(tp, offsets[tp.partition])
        deadline = time.monotonic() + timeout
        while received < expected and time.monotonic() < deadline:
            batch = await consumer.getmany(timeout_ms=200, max_records=10_000)
            for records in batch.values():
                received += len(records)
                last = max([last, *(r.timestamp / 1000.0 for r in records)])
            if progress is not None:
                progress(received, expected)
            if alive is not None and not alive():
                break  # gone: nothing more will come (what it wrote before is read above)
    finally:
        await consumer.stop()
    return received, last


LATE_KINDS = ("late_starts", "late_finishes", "late_joins")


def late_counts(web_port: int, timeout: float = 5.0) -> dict[str, int] | None:
    """The worker's counts of match events read after event time had passed them (starts,
    finishes) and of starts read after one of their players had moved on (joins), from its
    ``/metrics``; None if it does not answer."""
    url = f"http://127.0.0.1:{web_port}/metrics"
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            text = response.read().decode()
    except OSError:
        return None
    prefixes = {f'skillstream_pipeline_events_total{{kind="{kind}"}}': kind for kind in LATE_KINDS}
    counts = dict.fromkeys(LATE_KINDS, 0)
    for line in text.splitlines():
        name, _, value = line.rpartition(" ")
        if name in prefixes:
            counts[prefixes[name]] = int(float(value))
    return counts
