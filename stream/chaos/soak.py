"""`skillstream soak`: many seeded runs, each killing workers at planned phases of their lives,
and what every kill cost: lost, doubled and stuck matches, and the work redone.

One seed (:func:`run_seed`): a fresh local stack; one worker (two once a rebalance phase adds
one); the plan's waves (stream/chaos/soakplan.py), each published once the one before is rated
(so the live ratings must equal an offline replay); the kills where the plan puts them. A
worker that dies (killed from outside, or by its own crash point) is started again at once, by
a supervisor that also arms the replacement with the next crash point of the plan. Then:

- lost: a (player, match) the replay rates that never got a rating-changed;
- doubled: one that got two different ones;
- stuck: a match not rated within ``stuck_seconds`` of the moment its wave was out and every
  worker ready (rated later, or never);
- replay: every player's last rating-changed equals the offline replay;
- the redo window of each kill: the rating-changed records its successor sent again
  (byte-identical to ones sent before the kill), and how far back the first of them had first
  come (seconds before the kill): what the crash made the successor do again.

Failure: a stack or a first worker that does not start raises (StackError, WorkerError); what
goes wrong after that (a wave never rated, a kill that could not land) ends up in the seed's
report. Every process a seed starts is stopped before the next seed, also on Ctrl-C.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from stream.chaos.soakplan import (
    Kill,
    SoakMatch,
    SoakPlan,
    plan_matches,
    plan_seed,
    wave_events,
)
from stream.chaos.trace import trace_matches
from stream.chaos.traffic import Publisher, RatingReader, stop_traffic
from stream.chaos.verify import (
    Check,
    RatingLog,
    check_exactly_once,
    check_replay,
    last_events,
)
from stream.chaos.workerfleet import (
    READY_TIMEOUT,
    ChaosWorker,
    harness_env,
    operator_env,
    worker_warnings,
)
from stream.config.settings import Settings
from stream.config.stores import STORES, store_named
from stream.history import read_history
from stream.local.stack import LocalStack
from stream.local.workers import remove_log
from stream.offline.replayer import Replayer
from stream.pipeline.topics import ensure_topics

__all__ = ["KillOutcome", "SeedReport", "SoakConfig", "SoakReport", "run_seed", "run_soak"]

# After the last wave: how long a missing rating may still come before it counts as lost.
FINAL_WAIT = 60.0
# Spare waves (published only while a kill has not landed) come this far apart: a crash point
# counted in commits needs the worker to live through a few commit intervals, and a wave of
# instant matches is rated in a fraction of one.
SPARE_WAVE_GAP = 1.0
# How much older than its planned age an early kill's victim may be before it is replaced.
EARLY_SLACK = 0.5


@dataclass(frozen=True)
class SoakConfig:
    seeds: int = 50
    first_seed: int = 1
    kills: int = 3
    store: str = "memory"
    # The local environment's partitions (None: the local stack's default) and session; the
    # operator's environment keeps a worker's defaults for both.
    partitions: int | None = None
    session_timeout: float = 4.0
    # The liveness bound the run holds the pipeline to (docs/guarantees.md).
    stuck_seconds: float = 30.0
    keep_logs: bool = False
    # What the seed would draw, replaced (stream/chaos/soakplan.py plan_seed).
    phases: tuple[str, ...] | None = None
    matches: int | None = None
    team_size: int | None = None
    order: str | None = None
    # The workers' environment, "local" or "operator" (None: the seed's draw).
    environment: str | None = None

    def __post_init__(self) -> None:
        if self.seeds < 1 or self.kills < 1:
            raise ValueError(f"need seeds >= 1 and kills >= 1, got {self.seeds}, {self.kills}")
        store_named(self.store, "store")
        self.plan(self.first_seed)  # the same checks as the runs will make

    def plan(self, seed: int) -> SoakPlan:
        """Seed ``seed``'s plan under this configuration (ValueError naming a bad option)."""
        return plan_seed(
            seed,
            self.kills,
            phases=self.phases,
            matches=self.matches,
            team_size=self.team_size,
            order=self.order,
            environment=self.environment,
        )


@dataclass
class KillOutcome:
    """What one planned kill did."""

    phase: str
    planned: str
    landed: bool = False
    at: float | None = None  # seconds since the seed started
    wave: int | None = None  # the wave last published when it landed
    after_ready: float | None = None  # the victim's age
    in_flight: int = 0  # matches of that wave not yet rated when it landed
    restart_seconds: float | None = None  # death -> the replacement's "Worker ready"
    repeats: int = 0  # rating-changed records sent again by the successor
    # How much processing the successor redid: the time any worker was ready and working
    # between the first of those records' first coming and the kill (a chain of workers
    # killed before they could commit redo their predecessors' uncommitted work, and the
    # time between them, restarting, is no work); and the same span in wall time.
    redo_seconds: float | None = None
    redo_wall_seconds: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {k: (round(v, 3) if isinstance(v, float) else v) for k, v in vars(self).items()}


@dataclass
class SeedReport:
    seed: int
    plan: str
    kills: list[KillOutcome] = field(default_factory=list)
    expected: int = 0  # (player, match) pairs the replay rates
    lost: int = 0
    doubled: int = 0
    stuck: int = 0  # matches rated later than the bound, or never
    checks: list[Check] = field(default_factory=list)
    stalled: str | None = None
    unexpected_exits: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    trace: list[str] = field(default_factory=list)
    logs: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        return (
            not self.lost
            and not self.doubled
            and not self.stuck
            and self.stalled is None
            and not self.unexpected_exits
            and all(k.landed for k in self.kills)
            and all(c.passed for c in self.checks)
        )

    def line(self) -> str:
        landed = [k for k in self.kills if k.landed]
        redo = [k.redo_seconds for k in landed if k.redo_seconds is not None]
        window = f"{max(redo):.1f} s" if redo else "0 s"
        kills = ", ".join(k.phase + ("" if k.landed else " (did not land)") for k in self.kills)
        verdict = "PASS" if self.passed else "FAIL"
        return (
            f"seed {self.seed}: {verdict} in {self.seconds:.0f} s; kills {kills}; lost "
            f"{self.lost}, doubled {self.doubled}, stuck {self.stuck} of {self.expected} "
            f"ratings; {sum(k.repeats for k in landed)} sent again, redo window at most {window}"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "seed": self.seed,
            "passed": self.passed,
            "plan": self.plan,
            "kills": [k.to_json() for k in self.kills],
            "expected": self.expected,
            "lost": self.lost,
            "doubled": self.doubled,
            "stuck": self.stuck,
            "checks": [c.to_json() for c in self.checks],
            "stalled": self.stalled,
            "unexpected_exits": self.unexpected_exits,
            "warnings": self.warnings,
            "trace": self.trace,
            "logs": self.logs,
            "seconds": round(self.seconds, 1),
        }


@dataclass
class SoakReport:
    config: SoakConfig
    seeds: list[SeedReport] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return bool(self.seeds) and all(s.passed for s in self.seeds)

    def summary(self) -> dict[str, Any]:
        kills = [k for s in self.seeds for k in s.kills]
        landed = [k for k in kills if k.landed]
        by_phase: dict[str, list[KillOutcome]] = {}
        for k in landed:
            by_phase.setdefault(k.phase, []).append(k)
        windows = [k.redo_seconds for k in landed if k.redo_seconds is not None]
        return {
            "seeds": len(self.seeds),
            "passed": sum(s.passed for s in self.seeds),
            "kills": len(kills),
            "landed": len(landed),
            "lost": sum(s.lost for s in self.seeds),
            "doubled": sum(s.doubled for s in self.seeds),
            "stuck": sum(s.stuck for s in self.seeds),
            "ratings": sum(s.expected for s in self.seeds),
            "repeats_per_kill": _spread([float(k.repeats) for k in landed]),
            "redo_seconds": _spread([w for w in windows if w is not None]),
            "redo_wall_seconds": _spread(
                [k.redo_wall_seconds for k in landed if k.redo_wall_seconds is not None]
            ),
            "restart_seconds": _spread(
                [k.restart_seconds for k in landed if k.restart_seconds is not None]
            ),
            "phases": {
                phase: {
                    "kills": len(ks),
                    "repeats": _spread([float(k.repeats) for k in ks]),
                    "redo_seconds": _spread(
                        [k.redo_seconds for k in ks if k.redo_seconds is not None]
                    ),
                }
                for phase, ks in sorted(by_phase.items())
            },
        }

    def text(self) -> str:
        s = self.summary()
        lines = [
            f"soak: {s['seeds']} seeds, {s['passed']} passed; {s['landed']} of {s['kills']} "
            f"kills landed; {s['ratings']:,} ratings expected: lost {s['lost']}, doubled "
            f"{s['doubled']}, stuck {s['stuck']}",
            "  redo window (s of work redone) per kill: " + _describe(s["redo_seconds"]),
            "  the same in wall time (a chain of kills before a commit adds up): "
            + _describe(s["redo_wall_seconds"]),
            "  ratings sent again per kill: " + _describe(s["repeats_per_kill"]),
            "  restart (death to ready, s): " + _describe(s["restart_seconds"]),
            "  by phase:",
        ]
        for phase, p in s["phases"].items():
            lines.append(
                f"    {phase:<11} {p['kills']:>3} kills; redo window {_describe(p['redo_seconds'])}"
                f"; sent again {_describe(p['repeats'])}"
            )
        for seed in self.seeds:
            if not seed.passed:
                lines.append(seed.line())
                lines.extend(f"    {c.name}: {c.detail}" for c in seed.checks if not c.passed)
                if seed.stalled:
                    lines.append(f"    stalled: {seed.stalled}")
                lines.extend(f"    {w}" for w in seed.warnings[-10:])
                lines.extend(f"    {t}" for t in seed.trace[:40])
        lines.append(f"result: {'PASS' if self.passed else 'FAIL'}")
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        return {
            "config": vars(self.config),
            "summary": self.summary(),
            "seeds": [s.to_json() for s in self.seeds],
            "passed": self.passed,
        }


def _spread(values: Sequence[float]) -> dict[str, float] | None:
    if not values:
        return None
    ordered = sorted(values)
    return {
        "min": round(ordered[0], 3),
        "median": round(statistics.median(ordered), 3),
        "p90": round(ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))], 3),
        "max": round(ordered[-1], 3),
    }


def _describe(spread: dict[str, float] | None) -> str:
    if spread is None:
        return "none"
    return (
        f"median {spread['median']:g}, p90 {spread['p90']:g}, max {spread['max']:g} "
        f"(min {spread['min']:g})"
    )


def run_soak(
    config: SoakConfig,
    emit: Callable[[str], None] = print,
    progress: Callable[[int, int], None] | None = None,
) -> SoakReport:
    """Every seed in turn; ``emit`` gets a line per seed, ``progress`` (seeds done, seeds)."""
    report = SoakReport(config)
    if progress is not None:
        progress(0, config.seeds)
    for index in range(config.seeds):
        seed = config.first_seed + index
        result = run_seed(seed, config)
        report.seeds.append(result)
        emit(result.line())
        if progress is not None:
            progress(index + 1, config.seeds)
    return report


def run_seed(seed: int, config: SoakConfig, say: Callable[[str], None] | None = None) -> SeedReport:
    """One seed on a fresh local stack (see the module docstring)."""
    plan = config.plan(seed)
    report = SeedReport(seed, plan.describe())
    began = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="skillstream-soak-") as tmp, LocalStack() as stack:
        env = _worker_env(plan, config, stack)
        run = _SeedRun(plan, config, env, Path(tmp), report, say or (lambda line: None))
        try:
            asyncio.run(run.drive())
        finally:
            run.stop_workers()
    report.seconds = time.monotonic() - began
    return report


class _TimedLog(RatingLog):
    """The rating log, with when each record arrived (seconds since the seed started)."""

    def __init__(self, clock: Callable[[], float]) -> None:
        super().__init__()
        self.clock = clock
        self.arrivals: list[tuple[float, bytes]] = []

    def add(self, value: bytes) -> None:
        self.arrivals.append((self.clock(), value))
        super().add(value)


@dataclass
class _Slot:
    """A worker slot: its current process, what it is armed with, when it was ready."""

    name: str
    env: dict[str, str]
    worker: ChaosWorker
    armed: Kill | None = None
    ready_at: float | None = None
    incarnation: int = 0
    # Its worker's [ready, died] interval (died None while it lives).
    working: list[float | None] | None = None


def _worker_env(plan: SoakPlan, config: SoakConfig, stack: LocalStack) -> dict[str, str]:
    """The workers' environment on ``stack``: an operator's, or the local harness's."""
    tag = f"soak{uuid.uuid4().hex[:6]}"
    if plan.environment == "operator":
        return operator_env(stack, tag, store=config.store)
    # The cache is not what this harness measures: one consumer less per worker.
    return harness_env(
        stack,
        tag,
        session_timeout=config.session_timeout,
        store=config.store,
        partitions=config.partitions,
        cache_writer="off",
    )


# Not a value: compared by identity (eq=False), as any object that runs something.
@dataclass(eq=False)
class _SeedRun:
    """One seed's run on its stack (one event loop: asyncio.run in run_seed)."""

    plan: SoakPlan
    config: SoakConfig
    env: dict[str, str]
    tmp: Path
    report: SeedReport
    say: Callable[[str], None]
    began: float = field(init=False, default_factory=time.monotonic)
    settings: Settings = field(init=False)
    waves: list[list[SoakMatch]] = field(init=False)
    rng: random.Random = field(init=False)
    log: _TimedLog = field(init=False)
    slots: list[_Slot] = field(init=False, default_factory=list)
    workers: list[ChaosWorker] = field(init=False, default_factory=list)
    # The kills still to land, in plan order; the outcome of each.
    pending: list[tuple[Kill, KillOutcome]] = field(init=False, default_factory=list)
    wave_index: int = field(init=False, default=-1)
    current: list[SoakMatch] = field(init=False, default_factory=list)
    # The first wave went out before the first worker was ready (and when).
    early: bool = field(init=False, default=False)
    published_early: float = field(init=False, default=0.0)
    # Workers this harness SIGKILLed or stopped (by pid): their exit is no crash.
    killed: set[int] = field(init=False, default_factory=set)
    # When a worker last said it was ready (the liveness bound counts from there), and
    # every worker's [ready, died] interval.
    last_ready: float = field(init=False, default=0.0)
    working: list[list[float | None]] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        self.settings = Settings.from_env(self.env)
        self.waves = plan_matches(self.plan)
        self.rng = random.Random(self.plan.seed * 104_729 + 3)
        self.log = _TimedLog(self.clock)
        for kill in self.plan.kills:
            outcome = KillOutcome(kill.phase, kill.describe())
            self.report.kills.append(outcome)
            self.pending.append((kill, outcome))

    def clock(self) -> float:
        return time.monotonic() - self.began

    # --- workers --------------------------------------------------------------------------------

    def _next_kill(self) -> Kill | None:
        """The first kill of the plan that has not landed: kills land in plan order."""
        return next((k for k, o in self.pending if not o.landed), None)

    def _launch(self, slot: _Slot) -> None:
        """Start the slot's next worker, armed with the next kill if that is a crash point
        no other worker carries."""
        env = dict(slot.env)
        slot.armed = None
        kill = self._next_kill()
        carried = any(s.armed is kill for s in self.slots)
        if kill is not None and kill.crash_at is not None and not carried:
            slot.armed = kill
            env["SKILLSTREAM_CRASH_AT"] = kill.crash_at
        if slot.incarnation == 0:
            # The placeholder the slot was made with never ran: only its empty log is left.
            remove_log(slot.worker.log_path)
        slot.incarnation += 1
        slot.worker = ChaosWorker(env, f"soak-{slot.name}.{slot.incarnation}")
        self.workers.append(slot.worker)
        slot.ready_at = None
        slot.worker.launch()

    async def _ready(self, slot: _Slot) -> None:
        await slot.worker.ready(READY_TIMEOUT)
        slot.ready_at = self.last_ready = self.clock()
        self.working.append([slot.ready_at, None])
        slot.working = self.working[-1]

    def _new_slot(self) -> _Slot:
        name = f"w{len(self.slots)}"
        env = dict(self.env)
        if STORES[self.config.store].on_disk:
            (self.tmp / name).mkdir(parents=True, exist_ok=True)
            env["SKILLSTREAM_DATA_DIR"] = str(self.tmp / name)
        slot = _Slot(name, env, ChaosWorker(env, f"soak-{name}.0"))
        self.slots.append(slot)
        return slot

    async def _supervise(self) -> None:
        """Restart any worker that exits, at once (its replacement armed with the next
        crash point); a death by a crash point lands that kill."""
        while True:
            for slot in self.slots:
                code = slot.worker.exited()
                if code is None:
                    continue
                died = self.clock()
                if slot.working is not None:
                    slot.working[1] = died
                killed = slot.armed
                if killed is not None and code == -9:
                    self._landed(killed, slot, died)
                elif slot.worker.pid not in self.killed:
                    self.report.unexpected_exits.append(
                        f"{slot.worker.name} exited with {code} at {died:.1f} s: "
                        + slot.worker.tail(5).replace("\n", " | ")
                    )
                self._launch(slot)
                await self._ready(slot)
                self._restarted(died, slot)
                self.say(f"{slot.name} restarted, ready {slot.ready_at:.1f} s")
            await asyncio.sleep(0.05)

    def _landed(self, kill: Kill, slot: _Slot, at: float) -> None:
        outcome = next(o for k, o in self.pending if k is kill)
        outcome.landed = True
        outcome.at = at
        outcome.wave = self.wave_index
        outcome.after_ready = None if slot.ready_at is None else at - slot.ready_at
        outcome.in_flight = sum(
            1
            for m in self.current
            if not all(self.log.has((p, m.match_id)) for team in m.teams for p in team)
        )
        self.say(f"{kill.phase} landed on {slot.worker.name} at {at:.1f} s")

    def _restarted(self, died: float, slot: _Slot) -> None:
        for _, outcome in self.pending:
            if outcome.landed and outcome.at == died and outcome.restart_seconds is None:
                assert slot.ready_at is not None
                outcome.restart_seconds = slot.ready_at - died

    def stop_workers(self) -> None:
        for worker in self.workers:
            with contextlib.suppress(Exception):
                worker.kill()
        if self.config.keep_logs or not self.report.passed:
            self.report.logs = [str(w.log_path) for w in self.workers]
            if not self.report.passed:
                self.report.warnings = worker_warnings(self.workers)
        if not self.config.keep_logs:
            for worker in self.workers:
                remove_log(worker.log_path)

    # --- the run ---------------------------------------------------------------------------------

    async def drive(self) -> None:
        s = self.settings
        await ensure_topics(s)
        first = self._new_slot()
        self._launch(first)
        anywhere = None if self.plan.keyed else (s.partitions, random.Random(self.plan.seed))
        publisher = Publisher(s.kafka.bootstrap_servers, anywhere)
        await publisher.start()
        if self.plan.early_publish:
            # The fleet does not wait for the workers: the first wave goes out while the
            # first worker is still joining the group and recovering its tables.
            await self._publish(publisher, 0)
            self.early = True
        await self._ready(first)
        reader = RatingReader(s, self.log)
        await reader.start()
        tasks = [asyncio.create_task(reader.run()), asyncio.create_task(self._supervise())]
        try:
            published = await self._waves(publisher, reader)
            history, expected = self._replay(self.waves[:published])
            self.report.expected = len(expected)
            missing = await reader.wait_for(expected, FINAL_WAIT)
            await reader.settle(3.0, 20.0)
            self._check(history, expected, missing)
        finally:
            await stop_traffic(reader, publisher, tasks)

    def _replay(self, waves: list[list[SoakMatch]]) -> tuple[Replayer, list[tuple[str, str]]]:
        """The offline replay of the waves published, and every (player, match) it rates."""
        path = self.tmp / "history.jsonl"
        with path.open("wb") as f:
            for wave in waves:
                for played in wave:
                    f.write(orjson.dumps(played.history_line()) + b"\n")
        replayer = Replayer(self.settings.load_modes())
        pairs: list[tuple[str, str]] = []
        for match in read_history(path):
            pairs.extend((pid, match.match_id) for pid in replayer.apply(match))
        return replayer, pairs

    async def _waves(self, publisher: Publisher, reader: RatingReader) -> int:
        """Publish the planned waves, and spare ones while a kill has not landed; returns how
        many went out."""
        for i, wave in enumerate(self.waves):
            if i >= self.plan.planned:
                if self._next_kill() is None:
                    return i
                await asyncio.sleep(SPARE_WAVE_GAP)
            # The next kill of the plan, once its wave has come (a kill waits for the one
            # before it to land: a soon-after kill hits that kill's replacement).
            due = self._next_kill()
            if due is not None and due.wave > i:
                due = None
            victim = self.slots[0]
            timed = due if due is not None and due.crash_at is None else None
            joins = due is not None and due.phase == "rebalance" and victim.armed is due
            if timed is not None:
                if timed.phase == "early":
                    await self._young(victim, timed)
                await self._until_aged(victim, timed.age)
            if i == 0 and self.early:
                published = self.published_early
            else:
                await self._publish(publisher, i)
                published = self.clock()
            self.wave_index, self.current = i, wave
            if timed is not None:
                await asyncio.sleep(timed.delay)
                await self._kill_from_outside(victim, timed)
            if joins and len(self.slots) == 1:
                # The victim's crash points count from its first match event: a joiner that
                # came before the victim read the wave would rebalance it unarmed.
                pairs = [(p, m.match_id) for m in wave for team in m.teams for p in team]
                waited = self.clock() + READY_TIMEOUT
                while not any(self.log.has(pair) for pair in pairs) and self.clock() < waited:
                    await asyncio.sleep(0.05)
                joiner = self._new_slot()
                self._launch(joiner)
                await self._ready(joiner)
            pairs = [(p, m.match_id) for m in wave for team in m.teams for p in team]
            if not await self._rated(reader, pairs, published):
                return i + 1
        return len(self.waves)

    async def _publish(self, publisher: Publisher, i: int) -> None:
        """Publish wave ``i`` in its style's order (and note when, for the first)."""
        s = self.settings
        topics = {"started": s.topics.match_started, "finished": s.topics.match_finished}
        messages = [
            (topics[kind], str(event["match_id"]).encode(), orjson.dumps(event))
            for kind, event in wave_events(self.waves[i], self.plan.waves[i], self.rng)
        ]
        await publisher.publish(messages)
        if i == 0:
            self.published_early = self.clock()

    async def _young(self, slot: _Slot, kill: Kill) -> None:
        """An early kill must find its victim before its first commit: a victim already older
        than the kill's age (it was rating the waves before, or redoing a kill's) is stopped
        cleanly first, as a deploy would, and the kill waits for its successor."""
        if slot.ready_at is None or self.clock() - slot.ready_at <= kill.age + EARLY_SLACK:
            return
        incarnation = slot.incarnation
        if slot.worker.pid is not None:
            self.killed.add(slot.worker.pid)
        self.say(f"{slot.worker.name} {self.clock() - slot.ready_at:.1f} s old: stopped cleanly")
        await asyncio.to_thread(slot.worker.stop)
        while slot.incarnation == incarnation or slot.ready_at is None:
            await asyncio.sleep(0.05)

    async def _until_aged(self, slot: _Slot, age: float) -> None:
        while slot.ready_at is None:
            await asyncio.sleep(0.05)
        await asyncio.sleep(max(0.0, slot.ready_at + age - self.clock()))

    async def _kill_from_outside(self, slot: _Slot, kill: Kill) -> None:
        if slot.ready_at is None or slot.worker.exited() is not None:
            return  # mid-restart: this kill cannot land here
        if slot.worker.pid is not None:
            self.killed.add(slot.worker.pid)
        slot.armed = kill
        slot.worker.kill()
        # The supervisor sees the exit (-9, armed) and lands the kill.

    async def _rated(
        self, reader: RatingReader, pairs: list[tuple[str, str]], published: float
    ) -> bool:
        """Wait for the wave's ratings; count its matches stuck past the bound. False if the
        run must stop (a wave never rated)."""
        bound = self.config.stuck_seconds
        while True:
            missing = await reader.wait_for(pairs, 1.0)
            if not missing:
                return True
            # From the wave, or the last worker that became ready since (a kill, or a chain
            # of them, makes the wave wait for the last replacement).
            since = max(published, self.last_ready)
            restarting = any(
                s.ready_at is None or s.worker.exited() is not None for s in self.slots
            )
            if restarting or self.clock() < since + bound:
                continue
            matches = {m for _, m in missing}
            self.report.stuck += len(matches)
            self.say(f"wave {self.wave_index}: {len(matches)} matches stuck past {bound:g} s")
            still = await reader.wait_for(missing, FINAL_WAIT)
            if still:
                self.report.stalled = (
                    f"wave {self.wave_index}: {len(still)} of {len(pairs)} ratings missing "
                    f"{bound + FINAL_WAIT:g} s after every worker was ready, e.g. "
                    f"{sorted(still)[:3]}"
                )
                self.report.trace = await trace_matches(self.settings, {m for _, m in still})
                return False
            return True

    def _check(
        self, replayer: Replayer, expected: list[tuple[str, str]], missing: set[tuple[str, str]]
    ) -> None:
        values = [value for _, value in self.log.arrivals]
        exactly_once, _ = check_exactly_once(values, expected)
        replay = check_replay(last_events(values), replayer.tables)
        self.report.checks = [exactly_once, replay]
        self.report.lost = len(missing)
        first: dict[tuple[str, str], bytes] = {}
        doubled: set[tuple[str, str]] = set()
        for value in values:
            event = orjson.loads(value)
            pair = (event["player_id"], event["match_id"])
            if first.setdefault(pair, value) != value:
                doubled.add(pair)
        self.report.doubled = len(doubled)
        self._redo()

    def _redo(self) -> None:
        """Each landed kill's repeats: records that arrived after it, byte-identical to one
        that arrived before it, up to the next kill; and how long before the kill the earliest
        of those had first arrived."""
        arrivals = self.log.arrivals
        landed = sorted((o for o in self.report.kills if o.landed), key=lambda o: o.at or 0.0)
        for index, outcome in enumerate(landed):
            at = outcome.at or 0.0
            following = landed[index + 1].at if index + 1 < len(landed) else None
            until = float("inf") if following is None else following
            seen: dict[bytes, float] = {}
            for when, value in arrivals:
                if when <= at:
                    seen.setdefault(value, when)
            earliest: float | None = None
            for when, value in arrivals:
                if at < when <= until and value in seen:
                    outcome.repeats += 1
                    first = seen[value]
                    earliest = first if earliest is None else min(earliest, first)
            if earliest is None:
                outcome.redo_seconds = outcome.redo_wall_seconds = 0.0
            else:
                outcome.redo_wall_seconds = at - earliest
                outcome.redo_seconds = self._worked(earliest, at)

    def _worked(self, start: float, end: float) -> float:
        """How long some worker was ready within [start, end]."""
        spans = sorted(
            (max(a or 0.0, start), min(end if b is None else b, end)) for a, b in self.working
        )
        total, reach = 0.0, start
        for begin, finish in spans:
            first = max(begin, reach)
            if finish > first:
                total += finish - first
                reach = finish
        return total
