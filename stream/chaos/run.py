"""Drive a chaos run: a fresh local stack, a fleet of real workers, matches in waves, faults
at their planned waves, then the checks.

Timeline: start Tansu and Valkey; create the topics; start the workers (one consumer group);
publish wave after wave, each once the previous one is fully rated. When a wave carries a
planned fault, the previous fault must be over first; the fault is injected right after the
wave is published, so its matches are in flight:
- kill: SIGKILL of a worker after a seeded delay, and its replacement started at once; an
  early kill is the same on one of the first waves, in the first seconds of a worker's life;
- broker pause: SIGSTOP of Tansu, SIGCONT after the pause; the stream waits;
- Redis pause: SIGSTOP of Valkey while the stream goes on, SIGCONT after the pause, then the
  time until the cache caught up with the ratings seen at SIGCONT;
- outage: SIGKILL of every worker; the fleet goes on publishing a wave every
  ``OUTAGE_WAVE_SECONDS`` without waiting for ratings, then every worker restarts and drains
  the backlog, which the checks hold to replay like everything else.
A watchdog restarts any worker that exits by itself, and records it. After the last wave:
the cache must match every player's last rating-changed, and the checks run (verify.py). The
workers audit their kept stores after every recovery (stream/pipeline/storeaudit.py), and a
kept partition that differs from its changelog fails the run.

Failure: ``run_chaos`` raises StackError if the local stack cannot start, WorkerError if the
first workers do not start, ValueError for a configuration with too few waves for its faults.
Everything else that goes wrong (a stalled stream, a fault that could not be injected) ends
up in the report as a failed check. Whatever happens, also on Ctrl-C, every paused process is
continued and every process the run started is stopped before it returns or raises.
"""

from __future__ import annotations

import asyncio
import contextlib
import tempfile
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from aiokafka.errors import KafkaError
from redis.asyncio import Redis as AsyncRedis
from redis.exceptions import RedisError

from stream.cache.keys import KeyLayout
from stream.cache.reader import RatingCache
from stream.chaos.faults import KILLS, FaultKind, Pauser, plan_faults
from stream.chaos.report import ChaosReport, FaultRecord
from stream.chaos.trace import trace_matches
from stream.chaos.traffic import Publisher, RatingReader, match_messages, stop_traffic, waves
from stream.chaos.verify import (
    Check,
    Fields,
    RatingLog,
    cache_behind,
    cache_mismatches,
    cached_fields,
    check_crashes,
    check_exactly_once,
    check_replay,
    check_stores,
    last_events,
    longest_wait,
)
from stream.chaos.workerfleet import READY_TIMEOUT, Fleet, harness_env
from stream.config.modes import Modes
from stream.config.settings import Settings
from stream.config.stores import STORES, store_named
from stream.history import HistoryMatch, read_history
from stream.local.stack import LocalStack, Server
from stream.offline.replayer import Replayer
from stream.pipeline.topics import ensure_topics
from stream.simulation import SimulatedMatch, SimulationConfig, simulate, write_jsonl

__all__ = ["ChaosConfig", "run_chaos"]

# How long the harness polls the cache before it gives up on it converging.
CACHE_TIMEOUT = 60.0
# During an outage the fleet publishes a wave this often, without waiting for its ratings.
OUTAGE_WAVE_SECONDS = 0.25
# Redeliveries of the last batches arrive a moment after their first copies.
SETTLE_QUIET = 3.0


@dataclass(frozen=True)
class ChaosConfig:
    matches: int = 600
    players: int = 120
    team_size: int = 1
    workers: int = 3
    kills: int = 3
    # Kills in the first seconds after a worker is ready (faults.plan_faults), before the others.
    kill_early: int = 0
    broker_pause: float = 20.0
    redis_pause: float = 30.0
    # Every worker down this long while the fleet goes on publishing (0: no outage).
    outage: float = 0.0
    store: str = "memory"  # or "rocksdb": each worker slot with its own data directory
    seed: int = 1
    # The cache must equal the ratings within this many seconds of Redis returning (and of
    # the last wave being rated).
    cache_deadline: float = 5.0
    # A wave not fully rated after this many seconds stalls the run (a failed check).
    wave_timeout: float = 180.0
    session_timeout: float = 6.0
    partitions: int | None = None  # None: the local stack's default
    keep_logs: bool = False

    def __post_init__(self) -> None:
        store_named(self.store, "store")
        if self.workers < 1 or self.matches < 1:
            raise ValueError("need at least one worker and one match")


class _Clock:
    def __init__(self) -> None:
        self.start = time.monotonic()

    def __call__(self) -> float:
        return time.monotonic() - self.start


def _history(matches: Sequence[SimulatedMatch], directory: Path) -> list[HistoryMatch]:
    """The matches as an offline history, through the same file format `skillstream replay`
    reads, so the comparison is with exactly what an offline replay sees."""
    path = directory / "history.jsonl"
    with path.open("w") as f:
        write_jsonl(matches, f)
    return list(read_history(path))


def replay(history: Iterable[HistoryMatch], modes: Modes) -> tuple[Replayer, set[tuple[str, str]]]:
    """The offline replay, and every (player, match) it rated."""
    replayer = Replayer(modes)
    pairs: set[tuple[str, str]] = set()
    for match in history:
        pairs.update((pid, match.match_id) for pid in replayer.apply(match))
    return replayer, pairs


def _worker_env(stack: LocalStack, config: ChaosConfig) -> dict[str, str]:
    # The cache check needs the workers' own cache writers, whatever the caller's environment
    # says; the stores check, the workers' audits of their kept stores.
    env = harness_env(
        stack,
        f"chaos{uuid.uuid4().hex[:6]}",
        session_timeout=config.session_timeout,
        store=config.store,
        partitions=config.partitions,
        cache_writer="worker",
    )
    env["SKILLSTREAM_AUDIT_STORES"] = "1"
    # The checks read the workers' log lines as text ("[ERROR]", "store audit:").
    env["SKILLSTREAM_LOG_FORMAT"] = "text"
    return env


def run_chaos(
    config: ChaosConfig,
    emit: Callable[[str], None] | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> ChaosReport:
    """Run the harness; each progress line (phase, fault, recovery) goes to ``emit``
    (default: printed), ``progress`` gets (ratings so far, ratings expected) after every wave.
    See the module docstring."""
    clock = _Clock()

    def say(line: str) -> None:
        text = f"[{clock():6.1f} s] {line}"
        if emit is None:
            print(text, flush=True)
        else:
            emit(text)

    matches = list(simulate(_simulation(config)))
    wave_list = list(waves(matches))
    plan = plan_faults(
        config.seed,
        len(wave_list),
        kills=config.kills,
        kill_early=config.kill_early,
        workers=config.workers,
        broker_pause=config.broker_pause,
        redis_pause=config.redis_pause,
        outage=config.outage,
    )
    report = ChaosReport(asdict(config), matches=len(matches), waves=len(wave_list))
    report.faults = [FaultRecord(p) for p in plan]
    pauser = Pauser()
    with tempfile.TemporaryDirectory(prefix="skillstream-chaos-") as tmp:
        history = _history(matches, Path(tmp))
        say(
            f"{len(matches):,} matches in {len(wave_list)} waves; faults planned: "
            + "; ".join(p.describe() for p in plan)
        )
        with LocalStack() as stack:
            env = _worker_env(stack, config)
            settings = Settings.from_env(env)
            servers = {s.name: s for s in stack.servers}
            say(
                f"local stack up: tansu {stack.bootstrap_servers} "
                f"(pid {servers['tansu'].process.pid}), valkey {stack.redis_url} "
                f"(pid {servers['valkey'].process.pid})"
            )
            data_root = Path(tmp) / "data" if STORES[config.store].on_disk else None
            fleet = Fleet(env, config.workers, clock, say, data_root)
            run = _Run(config, settings, servers, fleet, pauser, report, history, clock, say)
            try:
                asyncio.run(run.drive(wave_list, progress))
            finally:
                # Continued before anything is stopped: a stopped process ignores SIGTERM,
                # and a frozen broker would hang the workers' graceful shutdown.
                pauser.resume_all()
                # The stack is thrown away with the workers, so their graceful stop gets only a
                # short grace: after a broker pause Faust can spend 10 s rejoining to commit.
                fleet.stop_all(timeout=5.0)
                report.pids = [*stack.pids(), *(w.pid for w in fleet.workers if w.pid)]
                if not report.passed:
                    report.warnings = fleet.warnings()
                if config.keep_logs:
                    report.logs = [str(p) for p in fleet.log_paths()]
                else:
                    fleet.remove_logs()
    report.seconds = clock()
    return report


def _simulation(config: ChaosConfig) -> SimulationConfig:
    return SimulationConfig(
        seed=config.seed,
        matches=config.matches,
        players=config.players,
        team_size=config.team_size,
    )


# Not a value: compared by identity (eq=False), as any object that runs something.
@dataclass(eq=False)
class _Run:
    """The asynchronous part of one run (one event loop: asyncio.run in run_chaos)."""

    config: ChaosConfig
    settings: Settings
    servers: dict[str, Server]
    fleet: Fleet
    pauser: Pauser
    report: ChaosReport
    history: list[HistoryMatch]
    clock: Callable[[], float]
    say: Callable[[str], None]
    modes: Modes = field(init=False)
    log: RatingLog = field(init=False, default_factory=RatingLog)
    # wave -> (published, rated) in seconds since the start; rated None until it is.
    wave_times: dict[int, tuple[float, float | None]] = field(init=False, default_factory=dict)
    # The wave published last.
    in_flight: list[SimulatedMatch] = field(init=False, default_factory=list)
    wave_index: int = field(init=False, default=-1)
    # Set while every worker is down (an outage): the fleet publishes without waiting.
    outage_on: bool = field(init=False, default=False)
    wave_sizes: dict[int, int] = field(init=False, default_factory=dict)
    # The outage's waves, rated when the first wave after it is (see _rated).
    pending_backlog: list[int] = field(init=False, default_factory=list)
    # Who each match rates, from the offline replay: what a wave waits for.
    pairs_of: dict[str, list[tuple[str, str]]] = field(init=False)

    def __post_init__(self) -> None:
        self.modes = self.settings.load_modes()
        _, pairs = replay(self.history, self.modes)
        self.pairs_of = {m.match_id: [] for m in self.history}
        for pid, match_id in sorted(pairs):
            self.pairs_of[match_id].append((pid, match_id))

    async def drive(
        self, wave_list: list[list[SimulatedMatch]], progress: Callable[[int, int], None] | None
    ) -> None:
        s, config = self.settings, self.config
        expected_pairs = sum(len(p) for p in self.pairs_of.values())
        created = await ensure_topics(s)
        self.say(f"created {len(created)} topics ({s.partitions} partitions each)")
        await self.fleet.start(READY_TIMEOUT)
        self.say(
            f"{config.workers} workers ready ({config.store} store), pids "
            + ", ".join(str(p) for p in self.fleet.pids())
        )
        reader = RatingReader(s, self.log)
        publisher = Publisher(s.kafka.bootstrap_servers)
        redis = AsyncRedis.from_url(s.redis.url, socket_timeout=2.0, socket_connect_timeout=2.0)
        cache = RatingCache(redis, self.modes, KeyLayout(s.cache.prefix))
        stopping = asyncio.Event()
        tasks: list[asyncio.Task[None]] = []
        try:
            await reader.start()
            await publisher.start()
            tasks.append(asyncio.create_task(reader.run()))
            tasks.append(asyncio.create_task(self.fleet.watch(stopping, READY_TIMEOUT)))
            published = await self._stream(
                wave_list, publisher, reader, cache, expected_pairs, progress
            )
            await self._finish(published, reader, cache)
        finally:
            # First of all (also on Ctrl-C): a frozen broker or Redis would hold up every
            # client being stopped below.
            self.pauser.resume_all()
            stopping.set()
            await stop_traffic(reader, publisher, tasks)
            with contextlib.suppress(Exception):
                await cache.aclose()

    async def _stream(
        self,
        wave_list: list[list[SimulatedMatch]],
        publisher: Publisher,
        reader: RatingReader,
        cache: RatingCache,
        expected_ratings: int,
        progress: Callable[[int, int], None] | None,
    ) -> list[SimulatedMatch]:
        """Publish wave after wave with the faults; returns the matches published."""
        s = self.settings
        by_wave = {f.planned.wave: f for f in self.report.faults}
        pairs_of = self.pairs_of
        fault_task: asyncio.Task[None] | None = None
        published: list[SimulatedMatch] = []
        next_report = 0.0
        # Waves published during an outage: waited for together once the workers are back.
        backlog: list[int] = []
        backlog_pairs: list[tuple[str, str]] = []
        for i, wave in enumerate(wave_list):
            fault = by_wave.get(i)
            if fault is not None and fault_task is not None:
                # Faults never overlap: each is measured on its own.
                await fault_task
                fault_task = None
            if fault is not None and fault.planned.kind is FaultKind.KILL_EARLY:
                await self._until_aged(fault.planned.target or 0, fault.planned.age)
            messages = match_messages(wave, s.topics.match_started, s.topics.match_finished)
            try:
                await publisher.publish(messages)
            except KafkaError as exc:
                self.report.stalled = f"publishing wave {i} failed: {exc!r}"
                self.say(f"STALLED: {self.report.stalled}")
                break
            published.extend(wave)
            self.wave_sizes[i] = len(wave)
            self.wave_times[i] = (self.clock(), None)
            self.in_flight, self.wave_index = wave, i
            pairs = [pair for m in wave for pair in pairs_of[m.match_id]]
            if fault is not None:
                if fault.planned.kind is FaultKind.OUTAGE:
                    # Set before the task runs: this wave is already part of the backlog.
                    self.outage_on = True
                fault_task = asyncio.create_task(self._inject(fault, cache))
            if self.outage_on:
                backlog.append(i)
                backlog_pairs.extend(pairs)
                await asyncio.sleep(OUTAGE_WAVE_SECONDS)
                continue
            if backlog:
                # The first wave after an outage is waited for with the outage's backlog.
                self.pending_backlog, backlog = backlog, []
                pairs, backlog_pairs = backlog_pairs + pairs, []
            if not await self._wave_rated(i, pairs, reader):
                break
            if progress is not None:
                progress(len(self.log.distinct), expected_ratings)
            if self.clock() >= next_report:
                next_report = self.clock() + 15.0
                self.say(
                    f"wave {i + 1}/{len(wave_list)}: {len(published):,} matches published, "
                    f"{len(self.log.distinct):,} ratings"
                )
        if fault_task is not None:
            await fault_task
        if backlog and self.report.stalled is None:
            await self._backlog_rated(backlog, backlog_pairs, reader)
        return published

    async def _wave_rated(self, i: int, pairs: list[tuple[str, str]], reader: RatingReader) -> bool:
        """Wait for wave ``i``'s ratings (``pairs``); False when they did not all come (the
        run is stalled: said, and the missing matches traced)."""
        missing = await reader.wait_for(pairs, self.config.wave_timeout)
        if not missing:
            self._rated(i)
            return True
        why = (
            f"the reader failed: {reader.error!r}"
            if reader.error is not None
            else f"after {self.config.wave_timeout:g} s"
        )
        self.report.stalled = (
            f"wave {i}: {len(missing)} of {len(pairs)} ratings missing {why}, "
            f"e.g. {sorted(missing)[:3]}"
        )
        self.say(f"STALLED: {self.report.stalled}")
        self.report.trace = await trace_matches(self.settings, {match for _, match in missing})
        return False

    async def _backlog_rated(
        self, backlog: list[int], pairs: list[tuple[str, str]], reader: RatingReader
    ) -> None:
        """The run ended during an outage: wait for its backlog now."""
        missing = await reader.wait_for(pairs, self.config.wave_timeout)
        if missing:
            self.report.stalled = (
                f"outage backlog: {len(missing)} of {len(pairs)} ratings missing "
                f"after {self.config.wave_timeout:g} s, e.g. {sorted(missing)[:3]}"
            )
            self.say(f"STALLED: {self.report.stalled}")
            return
        for wave_index in backlog:
            self._rated(wave_index)
        self._outage_drained()

    def _rated(self, wave: int) -> None:
        """Wave ``wave`` (and an outage backlog waited for with it) is fully rated."""
        now = self.clock()
        for index in [*self.pending_backlog, wave]:
            self.wave_times[index] = (self.wave_times[index][0], now)
        if self.pending_backlog:
            self.pending_backlog = []
            self._outage_drained()

    def _outage_drained(self) -> None:
        """Record when the outage's backlog was rated (from every worker ready again)."""
        for record in self.report.faults:
            outage = record.planned.kind is FaultKind.OUTAGE
            if outage and record.ended_at is not None and record.drain_seconds is None:
                record.drain_seconds = self.clock() - record.ended_at
                self.say(
                    f"outage backlog of {record.backlog or 0:,} matches rated "
                    f"{record.drain_seconds:.1f} s after every worker was ready"
                )

    async def _until_aged(self, slot: int, age: float) -> None:
        """Wait until slot ``slot``'s worker has been ready for ``age`` seconds (an early
        kill's wave: the victim is killed in the first seconds of its life, not the first
        tenths)."""
        ready_at = self.fleet.slots[slot].ready_at
        if ready_at is not None:
            await asyncio.sleep(max(0.0, ready_at + age - self.clock()))

    def _in_flight(self) -> int:
        """The matches published and not yet fully rated (all of the wave in flight: the
        loop publishes a wave only once the previous one is rated)."""
        return sum(
            1
            for m in self.in_flight
            if not all(self.log.has(pair) for pair in self.pairs_of[m.match_id])
        )

    async def _inject(self, record: FaultRecord, cache: RatingCache) -> None:
        """Inject one fault; any error ends up in its record (and so in the report)."""
        try:
            if record.planned.kind in KILLS:
                await self._kill(record)
            elif record.planned.kind is FaultKind.OUTAGE:
                await self._outage(record)
            else:
                await self._pause(record, cache)
        except Exception as exc:
            record.error = f"{type(exc).__name__}: {str(exc)[:300]}"
            self.say(f"fault {record.planned.describe()} failed: {record.error}")

    def _injected(self, record: FaultRecord) -> None:
        """Note the moment of injection (call it right after the signal was sent)."""
        record.injected_at = self.clock()
        record.in_flight = self._in_flight()

    async def _kill(self, record: FaultRecord) -> None:
        p = record.planned
        await asyncio.sleep(p.delay)
        slot = p.target or 0
        pid = self.fleet.slots[slot].worker.pid
        record.target = f"w{slot} pid {pid}"
        ready_at = self.fleet.slots[slot].ready_at

        def killed() -> None:
            self._injected(record)
            age = ""
            if ready_at is not None and record.injected_at is not None:
                record.after_ready = record.injected_at - ready_at
                age = f" ({record.after_ready:.1f} s after it was ready)"
            self.say(
                f"SIGKILL worker w{slot} (pid {pid}){age} {p.delay:.2f} s after wave {p.wave} "
                f"was published, {record.in_flight} match(es) in flight (wave "
                f"{self.wave_index}); starting its replacement"
            )

        result = await self.fleet.kill_and_restart(slot, READY_TIMEOUT, on_kill=killed)
        record.restart_seconds = result.restart_seconds
        record.ended_at = result.killed_at + result.restart_seconds
        self.say(
            f"w{slot} restarted (pid {result.new_pid}): ready {result.restart_seconds:.1f} s "
            "after the kill"
        )

    async def _outage(self, record: FaultRecord) -> None:
        p = record.planned
        record.target = "every worker"
        first_wave = self.wave_index

        def killed() -> None:
            self._injected(record)
            self.say(
                f"SIGKILL every worker right after wave {p.wave} was published, "
                f"{record.in_flight} match(es) in flight; the fleet goes on for {p.seconds:g} s"
            )

        try:
            record.restart_seconds = await self.fleet.outage(p.seconds, READY_TIMEOUT, killed)
        finally:
            self.outage_on = False
        record.ended_at = self.clock()
        published = sum(self.wave_sizes[w] for w in range(first_wave, self.wave_index + 1))
        record.backlog = published
        self.say(
            f"every worker ready again {record.restart_seconds:.1f} s after the restart; "
            f"{published:,} matches published since the kill"
        )

    async def _pause(self, record: FaultRecord, cache: RatingCache) -> None:
        p = record.planned
        name = "tansu" if p.kind is FaultKind.BROKER_PAUSE else "valkey"
        server = self.servers[name]
        pid = server.process.pid
        record.target = f"{name} pid {pid}"
        before = len(self.log.distinct)
        self.pauser.pause(pid, name)
        self._injected(record)
        stopped = self.clock()
        self.say(
            f"SIGSTOP {name} (pid {pid}) for {p.seconds:g} s right after wave {p.wave} was "
            f"published, {record.in_flight} match(es) in flight"
        )
        await asyncio.sleep(p.seconds)
        self.pauser.resume(pid)
        record.ended_at = self.clock()
        record.ratings_during = len(self.log.distinct) - before
        self.say(
            f"SIGCONT {name} after {record.ended_at - stopped:.1f} s; "
            f"{record.ratings_during:,} ratings were published meanwhile"
        )
        if p.kind is FaultKind.REDIS_PAUSE:
            # Everything rated until Redis returned must reach the cache; the stream goes on
            # meanwhile, so a newer version (of an event seen) counts as caught up too.
            floor = dict(self.log.versions)
            seconds, problems = await self._converge(
                cache,
                floor.keys,
                lambda cached: cache_behind(floor, self.log.by_version, cached),
            )
            record.cache_seconds = seconds
            if seconds is None:
                self.say(
                    f"cache NOT caught up {CACHE_TIMEOUT:g} s after Redis returned: "
                    f"{len(problems)} behind, e.g. {problems[:3]}"
                )
            else:
                self.say(
                    f"cache caught up with the {len(floor):,} players rated so far "
                    f"{seconds:.2f} s after SIGCONT"
                )

    async def _converge(
        self,
        cache: RatingCache,
        keys: Callable[[], Iterable[tuple[str, str]]],
        problems_of: Callable[[dict[tuple[str, str], Fields]], list[str]],
    ) -> tuple[float | None, list[str]]:
        """Poll the cache until ``problems_of`` finds nothing; (seconds it took, []) or
        (None, the last problems) after CACHE_TIMEOUT. Redis errors count as not yet."""
        began = time.monotonic()
        while True:
            try:
                cached = await _read_cache(cache, keys())
                problems = problems_of(cached)
            except (RedisError, OSError) as exc:
                problems = [f"Redis: {exc}"]
            elapsed = time.monotonic() - began
            if not problems:
                return elapsed, []
            if elapsed > CACHE_TIMEOUT:
                return None, problems
            await asyncio.sleep(0.1)

    async def _finish(
        self, published: list[SimulatedMatch], reader: RatingReader, cache: RatingCache
    ) -> None:
        """The end of the run: the cache at the end, redeliveries, then the checks."""
        report, log = self.report, self.log
        report.published = len(published)
        seconds, problems = await self._converge(
            cache,
            log.versions.keys,
            lambda cached: cache_mismatches(log.expected(), cached),
        )
        report.cache_end_seconds = seconds
        if seconds is None:
            self.say(
                f"cache NOT equal to the ratings {CACHE_TIMEOUT:g} s after the last wave: "
                f"{len(problems)} differ, e.g. {problems[:3]}"
            )
        else:
            self.say(
                f"cache equals every player's last rating-changed {seconds:.2f} s after the "
                "last wave"
            )
        await reader.settle(SETTLE_QUIET, 30.0)
        try:
            final = cache_mismatches(log.expected(), await _read_cache(cache, log.versions.keys()))
        except (RedisError, OSError) as exc:
            final = [f"Redis: {exc}"]
        report.records = len(log.records)
        report.ratings = len(log.distinct)
        report.dead_letters = len(reader.dead_letters)
        report.exits = list(self.fleet.exits)
        waits = sorted(done - began for began, done in self.wave_times.values() if done is not None)
        if waits:
            report.wave_median, report.wave_max = waits[len(waits) // 2], waits[-1]
        for record in report.faults:
            if record.injected_at is not None:
                end = record.injected_at if record.ended_at is None else record.ended_at
                record.stall_seconds = longest_wait(self.wave_times, record.injected_at, end)
        ids = {m.match_id for m in published}
        replayer, pairs = replay((h for h in self.history if h.match_id in ids), self.modes)
        once, report.redeliveries = check_exactly_once(log.records, pairs)
        report.checks = [
            check_replay(last_events(log.records), replayer.tables),
            once,
            self._cache_check(final),
            check_crashes([e.describe() for e in report.exits]),
            self._faults_check(),
            self._stream_check(),
            check_stores(self.fleet.lines_with("store audit:")),
        ]

    def _cache_check(self, final: list[str]) -> Check:
        """Check 3: caught up within the deadline of Redis returning; at the end, equal to
        every last rating-changed (how soon after the last wave is reported, not held to the
        deadline: a kill shortly before the end leaves the dead worker's cache-writer
        partitions idle until its consumer-group session expires, which is not Redis's
        doing), and still equal once the redeliveries have arrived."""
        deadline = self.config.cache_deadline
        problems: list[str] = []
        figures: list[str] = []
        for record in self.report.faults:
            if record.planned.kind is not FaultKind.REDIS_PAUSE or record.injected_at is None:
                continue
            seconds = record.cache_seconds
            if seconds is None or seconds > deadline:
                problems.append(
                    f"not caught up within {deadline:g} s of Redis returning ({_seconds(seconds)})"
                )
            figures.append(f"caught up {_seconds(seconds)} after Redis returned")
        end = self.report.cache_end_seconds
        if end is None:
            problems.append(f"not equal to the ratings within {CACHE_TIMEOUT:g} s at the end")
        figures.append(f"equal {_seconds(end)} after the last wave")
        if final:
            problems.append(f"{len(final)} differ after the redeliveries: {final[:3]}")
        if problems:
            return Check("cache", False, "; ".join(problems))
        return Check("cache", True, "; ".join(figures))

    def _faults_check(self) -> Check:
        problems = []
        for record in self.report.faults:
            p = record.planned
            if not record.injected:
                problems.append(f"{p.describe()}: not injected ({record.error})")
            elif record.error is not None:
                problems.append(f"{p.describe()}: {record.error}")
            elif p.kind not in KILLS and record.in_flight == 0:
                problems.append(f"{p.describe()}: no match in flight")
        kinds = [str(f.planned.kind) for f in self.report.faults if f.injected]
        if problems:
            return Check("faults", False, "; ".join(problems))
        return Check(
            "faults",
            True,
            f"{len(kinds)} injected: "
            + ", ".join(f"{kinds.count(k)} {k}" for k in dict.fromkeys(kinds)),
        )

    def _stream_check(self) -> Check:
        r = self.report
        if r.stalled:
            return Check("stream", False, f"stalled at {r.stalled}")
        return Check("stream", True, f"all {r.published:,} matches published and rated")


def _seconds(value: float | None) -> str:
    return "never" if value is None else f"{value:.2f} s"


async def _read_cache(
    cache: RatingCache, keys: Iterable[tuple[str, str]]
) -> dict[tuple[str, str], Fields]:
    """The cached entries of ``keys`` ((mode, player)); players the cache does not know are
    left out. Redis errors propagate."""
    by_mode: dict[str, list[str]] = {}
    for mode, pid in keys:
        by_mode.setdefault(mode, []).append(pid)
    found: dict[tuple[str, str], Fields] = {}
    for mode, pids in by_mode.items():
        for start in range(0, len(pids), 1000):
            entries = await cache.get_many(mode, pids[start : start + 1000])
            for pid, entry in entries.items():
                if not entry.unknown:
                    found[(mode, pid)] = cached_fields(entry)
    return found
