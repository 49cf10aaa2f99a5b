"""One schedule run to the end, and the invariants checked after it.

The run (:class:`Simulation`): the fleet publishes the workload's waves; live workers take
batches in an order drawn from the seed, commit now and then, and the combiner's worker ticks
every ``SKILLSTREAM_TICK_SECONDS`` of simulated wall time while the combiner wants it (each
batch takes a millisecond or so; with nothing to read, time jumps to the next tick). Kills,
rebalances, lost records and consumer re-seeks come where the schedule put them. A membership
change is a rebalance as Faust's eager protocol makes it: every live worker flushes and gives
up every partition (crash point ``revoked``, with a commit before it half the time), then the
partitions are dealt out again and each is restored from its changelog, from an earlier flush
where the schedule says.

It ends once everything is published, every fault is done, no worker has a record left to
read and every (player, match) the replay rates has been rated, plus a few tick rounds for
anything still on its way, and until nothing waits any more; or, stuck,
:data:`SETTLE_TICKS` ticks after the last disruption.

The invariants (:func:`check`): no internal error or dead letter; every (player, match) the
replay rates rated exactly once (byte-identical repeats allowed), nothing else rated; every
player's last rating change equal to the replay exactly; nothing stuck.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field

import orjson

from stream.chaos.verify import check_exactly_once, check_games, check_replay, last_events
from stream.config.modes import Modes
from stream.config.settings import CacheSettings, Settings
from stream.crashsim.broker import Broker
from stream.crashsim.schedule import Kill, Schedule
from stream.crashsim.worker import TABLES, Crash, CrashPlan, SimWorker
from stream.crashsim.workload import T0, Publication, Workload, draw_workload, mixed
from stream.pipeline.batches import MATCH_TABLE, PENDING_TABLE
from stream.pipeline.watermarks import tick_wanted
from stream.protocol import MATCHES, PENDING, Tick, encode_command

__all__ = ["SETTLE_TICKS", "Outcome", "Simulation", "run_schedule"]

# The simulated wall clock starts a year after the events (a backlog's distance).
WALL0 = T0 + 365 * 86_400.0
# After the last disruption (a publication, a kill, a rebalance, a restore) everything must
# be rated within this many leader ticks (10 s of simulated wall time at the default tick):
# the liveness bound of docs/guarantees.md is a round of watermarks and three hops.
SETTLE_TICKS = 100
# An armed crash point that is not reached within this many steps kills between two batches.
ARMED_STEPS = 300
# Tick rounds after everything is rated, for whatever is still on its way.
TAIL_TICKS = 8
# A run that takes more steps than this is stuck in a loop of its own.
MAX_STEPS = 200_000


@dataclass
class Outcome:
    """What one schedule did, and what the checks found."""

    seed: int
    problems: list[str] = field(default_factory=list)
    steps: int = 0
    ratings: int = 0
    expected: int = 0
    kills: int = 0
    behind: int = 0
    settle_ticks: int = 0
    description: str = ""

    @property
    def passed(self) -> bool:
        return not self.problems


@dataclass
class _Join:
    """A worker (a new incarnation of ``index``) joining at ``step``; ``short``: the chance
    that each table partition of ``partitions`` is restored from an earlier flush."""

    step: int
    index: int
    partitions: frozenset[int]
    short: float


class Simulation:
    """One schedule on the simulated broker and workers."""

    def __init__(
        self, schedule: Schedule, modes: Modes | None = None, *, use_checkpoints: bool = True
    ) -> None:
        self.schedule = sc = schedule
        self.use_checkpoints = use_checkpoints
        self.modes = modes or Modes()
        self.settings = s = Settings(
            app_id="sim", cache=CacheSettings(writer="off"), partitions=sc.partitions
        )
        self.rng = random.Random(sc.seed * 7919 + 1)
        self.broker = Broker()
        self.wall = WALL0
        self.next_tick = WALL0 + s.worker.tick_seconds
        self.workload: Workload = draw_workload(
            random.Random(sc.seed),
            partitions=sc.partitions,
            started_topic=s.topics.match_started,
            finished_topic=s.topics.match_finished,
            players=sc.players,
            waves=sc.waves,
            duplicates=sc.duplicates,
            misrouted=sc.misrouted,
        )
        if sc.mix:
            # From a generator of its own: every other draw of the seed is what it was.
            waves = mixed(self.workload.waves, sc.mix, random.Random(f"{sc.seed} mix"))
            self.workload.waves = waves
        self.workers: list[SimWorker | None] = [None] * sc.workers
        self.incarnation = [0] * sc.workers
        self.joins: list[_Join] = []
        self.kills = list(sc.kills)
        self.armed: dict[int, tuple[Kill, int]] = {}
        self.rebalances = list(sc.rebalances)
        self.step = 0
        self.published = 0
        # A wave's other topic, due at a wall time (Schedule.topic_lag).
        self.lagging: list[tuple[float, list[Publication]]] = []
        self.last_disruption = 0
        self.ticks_since = 0
        self.outcome = Outcome(sc.seed, description=sc.describe())
        # The (player, match) pairs rated so far, and how many rating changes they cover.
        self._seen: set[tuple[str, str]] = set()
        self._read = 0

    # --- the run ------------------------------------------------------------------------------

    async def run(self, expected: set[tuple[str, str]]) -> None:
        """Run the schedule until it has settled (or is stuck)."""
        for index in range(self.schedule.workers):
            self.workers[index] = self._worker(index)
        await self._rebalance(short={})
        tail = None
        while self.step < MAX_STEPS:
            self.step += 1
            await self._disruptions()
            worker = self._ready_worker()
            if worker is None:
                await self._tick(jump=True)
            else:
                await self._work(worker)
            if self._quiet() and self._rated(expected):
                tail = TAIL_TICKS if tail is None else tail
                # Then on until nothing waits (a match kept open for its learning window's
                # close), within the liveness bound: check() says what is left.
                if tail <= 0 and (self.ticks_since > SETTLE_TICKS or not self.waiting()):
                    break
                if self._ready_worker() is None:
                    tail -= 1
                    await self._tick(jump=True)
            elif self._quiet() and self.ticks_since > SETTLE_TICKS:
                break
        self.outcome.steps = self.step
        self.outcome.settle_ticks = self.ticks_since

    def _quiet(self) -> bool:
        """Everything published, every fault done, every partition owned."""
        return (
            self.published == len(self.workload.waves)
            and not self.lagging
            and not self.kills
            and not self.armed
            and not self.rebalances
            and not self.joins
        )

    def _rated(self, expected: set[tuple[str, str]]) -> bool:
        ratings = self.broker.ratings
        if len(ratings) < len(expected):
            return False
        seen = self._seen
        for value in ratings[self._read :]:
            event = orjson.loads(value)
            seen.add((event["player_id"], event["match_id"]))
        self._read = len(ratings)
        return expected <= seen

    async def _disruptions(self) -> None:
        sc, step = self.schedule, self.step
        waves = self.workload.waves
        if self.published < len(waves) and step >= (self.published + 1) * sc.publish_every:
            wave = waves[self.published]
            later: list[Publication] = []
            if sc.topic_lag:
                # One topic now, the other topic_lag seconds later, which first drawn per wave.
                first = self.rng.choice(sorted({event.topic for event in wave}))
                later = [event for event in wave if event.topic != first]
                wave = [event for event in wave if event.topic == first]
            for event in wave:
                self.broker.append(event.topic, event.partition, event.value)
            if later:
                self.lagging.append((self.wall + sc.topic_lag, later))
            self.published += 1
            self._disrupted()
        while self.lagging and self.lagging[0][0] <= self.wall:
            for event in self.lagging.pop(0)[1]:
                self.broker.append(event.topic, event.partition, event.value)
            self._disrupted()
        while self.kills and self.kills[0].step <= step:
            kill = self.kills.pop(0)
            worker = self.workers[kill.worker]
            if worker is None or kill.worker in self.armed:
                continue
            if kill.point == "between":
                await self._kill(kill.worker, kill)
            else:
                plan = worker.plan
                plan.point, plan.nth = kill.point, plan.seen.get(kill.point, 0) + kill.nth
                self.armed[kill.worker] = (kill, step)
        for index, (kill, since) in list(self.armed.items()):
            if step - since > ARMED_STEPS:
                await self._kill(index, kill)
        while self.rebalances and self.rebalances[0] <= step:
            self.rebalances.pop(0)
            await self._rebalance(short={})
        due = [join for join in self.joins if join.step <= step]
        if due:
            self.joins = [join for join in self.joins if join.step > step]
            for join in due:
                self.workers[join.index] = self._worker(join.index)
            short = {p: join.short for join in due for p in join.partitions}
            await self._rebalance(short=short)

    def _disrupted(self) -> None:
        self.last_disruption = self.step
        self.ticks_since = 0

    def _ready_worker(self) -> SimWorker | None:
        ready = [w for w in self.workers if w is not None and w.readable()]
        return self.rng.choice(ready) if ready else None

    async def _work(self, worker: SimWorker) -> None:
        sc, rng = self.schedule, self.rng
        if self.wall >= self.next_tick:
            await self._tick(jump=False)
        try:
            handed = await worker.step(rng, sc.batch, sc.lose)
            # A batch costs about half a millisecond, and 30 us per record (the worker's
            # CPU per event on this project's machine: docs/benchmarks.md).
            self.wall += 0.0005 + 0.00003 * handed
            if rng.random() < sc.commit_chance:
                await worker.commit()
            if sc.reseek and rng.random() < sc.reseek:
                worker.reseek(rng)
        except Crash:
            await self._crashed(worker)

    async def _tick(self, *, jump: bool) -> None:
        """The leader's tick (if any worker lives), and the stall watchdog's look."""
        if jump:
            self.wall = max(self.wall, self.next_tick)
        self.next_tick = self.wall + self.settings.worker.tick_seconds
        self.ticks_since += 1
        if not any(self.workers):
            return
        # To the event-time combiner's partition, from the worker that reads it and only while
        # the combiner wants one, as the worker's tick goes (stream/pipeline/topology.py).
        if any(
            worker is not None
            and 0 in worker.owned
            and tick_wanted(worker.runner.match_partitions.get(0))
            for worker in self.workers
        ):
            value = orjson.dumps([encode_command(Tick(self.wall))])
            self.broker.append(self.settings.match_commands_topic, 0, value)
        for worker in self.workers:
            if worker is not None:
                worker.fetched(tick=True)
                self._unstick(worker)

    def _unstick(self, worker: SimWorker) -> None:
        """The stall watchdog: a partition whose records were handed over but not processed
        (one lost on its way, nothing after it to show the gap) is read again."""
        for tp, at in worker.fetch.items():
            position = worker.runner.positions.position(*tp)
            if position is not None and position < at and at >= self.broker.end(*tp):
                worker.fetch[tp] = position

    def waiting(self) -> list[str]:
        """What still waits at the end: matches with a line-up not settled, players with a
        match pending (every partition has an owner by then)."""
        found: list[str] = []
        for worker in self.workers:
            if worker is None:
                continue
            for key, value in worker.tables.contents(MATCH_TABLE).items():
                entry = MATCHES.value(value)
                if entry.teams is not None and entry.done is None:
                    found.append(f"match {orjson.loads(key)}")
            for key, value in worker.tables.contents(PENDING_TABLE).items():
                record = PENDING.value(value)
                if record.matches:
                    found.append(
                        f"player {orjson.loads(key)} ({', '.join(sorted(record.matches))})"
                    )
        return found

    # --- kills and rebalances -----------------------------------------------------------------

    async def _crashed(self, worker: SimWorker) -> None:
        index = self.workers.index(worker)
        kill, _ = self.armed.get(index, (None, 0))
        await self._kill(index, kill)

    async def _kill(self, index: int, kill: Kill | None) -> None:
        """SIGKILL worker ``index``: its partitions have no owner until its next incarnation
        joins (``kill.down`` steps later), and their tables may come back short."""
        worker = self.workers[index]
        self.armed.pop(index, None)
        if worker is None:
            return
        self.workers[index] = None
        self.outcome.kills += 1
        self.outcome.behind += len(worker.restarts)
        down, short = (0, 0.0) if kill is None else (kill.down, kill.short)
        self.joins.append(_Join(self.step + down, index, frozenset(worker.owned), short))
        self._disrupted()

    async def _rebalance(self, short: dict[int, float]) -> None:
        """Faust's eager rebalance among the live workers (see the module docstring)."""
        live = [i for i, w in enumerate(self.workers) if w is not None]
        for index in live:
            worker = self.workers[index]
            assert worker is not None
            try:
                if self.rng.random() < 0.5:
                    await worker.commit()
                await worker.flush_revoked()
            except Crash:
                await self._crashed(worker)
                return  # its next incarnation's join rebalances again
            worker.revoke(set(worker.owned))
        live = [i for i, w in enumerate(self.workers) if w is not None]
        if not live:
            return
        order = list(range(self.schedule.partitions))
        self.rng.shuffle(order)
        deal: dict[int, list[int]] = {i: [] for i in live}
        for n, partition in enumerate(order):
            deal[live[n % len(live)]].append(partition)
        self._cut_short(short)
        for index, partitions in deal.items():
            worker = self.workers[index]
            assert worker is not None
            worker.assign(partitions)
            self.outcome.behind += len(worker.restarts)
            worker.restarts.clear()
        self._disrupted()

    def _cut_short(self, short: dict[int, float]) -> None:
        """Each table partition of ``short``'s partitions loses the tail of its changelog
        after a flush drawn at random, with the partition's chance."""
        for partition, chance in sorted(short.items()):
            for table in TABLES:
                changelog = self.broker.changelog(table, partition)
                if chance and self.rng.random() < chance:
                    changelog.truncate(self.rng.randint(0, len(changelog.ends)))

    def _worker(self, index: int) -> SimWorker:
        self.incarnation[index] += 1
        return SimWorker(
            f"w{index}.{self.incarnation[index]}",
            self.settings,
            self.modes,
            self.broker,
            lambda: self.wall,
            CrashPlan(),
            use_checkpoints=self.use_checkpoints,
            stale=self.schedule.stale,
            # Drawn only then, so a schedule without them runs as it did before they existed.
            rng=random.Random(self.rng.random()) if self.schedule.stale else None,
        )


def check(sim: Simulation, expected: set[tuple[str, str]], replayed: object) -> list[str]:
    """The invariants over a finished run (module docstring)."""
    problems = [f"dead letter: {reason}" for reason in sim.broker.dead_letters]
    values = sim.broker.ratings
    once, _ = check_exactly_once(values, expected)
    if not once.passed:
        problems.append(once.detail)
    # Mixed waves start matches late, applied out of the order of play (Schedule.mix): each
    # result counted once, not the replay's ratings.
    compare = check_games if sim.schedule.mix else check_replay
    replay = compare(last_events(values), replayed)  # type: ignore[arg-type]
    if not replay.passed:
        problems.append(replay.detail)
    waiting = sim.waiting()
    if waiting:
        problems.append(f"stuck: {len(waiting)} waiting at the end: {', '.join(waiting[:5])}")
    elif sim.ticks_since > SETTLE_TICKS:
        problems.append(f"stuck: not settled {SETTLE_TICKS} ticks after the last disruption")
    return problems


def run_schedule(
    schedule: Schedule, modes: Modes | None = None, *, use_checkpoints: bool = True
) -> Outcome:
    """Run ``schedule`` and check it (``use_checkpoints``: :class:`SimWorker`'s)."""
    sim = Simulation(schedule, modes, use_checkpoints=use_checkpoints)
    expected, replayed = sim.workload.expected(sim.modes)
    asyncio.run(sim.run(expected))
    outcome = sim.outcome
    outcome.ratings = len(sim.broker.ratings)
    outcome.expected = len(expected)
    outcome.problems = check(sim, expected, replayed)
    return outcome


__all__ += ["TABLES", "check"]
