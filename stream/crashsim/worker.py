"""A simulated worker: the real batch runner and processors, a consumer that reads the owned
partitions in an order the schedule draws, and the commit protocol in its order.

What it runs is the worker's own code: :class:`stream.pipeline.batches.BatchRunner` with the
match and player processors, the commit order of :class:`stream.commits.Commits` and the
tables' checkpoints (:class:`stream.pipeline.checkpoints.Checkpoints`). What it replaces is
Faust and Kafka: the consumer (``fetch``: the next offset to hand over per partition), the
producer (:meth:`SimWorker._deliver` appends to the simulated broker) and the tables' stores
(stream/crashsim/tables.py).

A crash is :class:`Crash`, raised from a crash point the schedule armed (or between two steps):
the worker is then dropped whole, as SIGKILL drops a process, and what it had not flushed or
committed is gone.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from stream.commits import Commits
from stream.config.modes import Modes
from stream.config.settings import Settings
from stream.crashsim.broker import Broker
from stream.crashsim.tables import SimTables
from stream.deadletters import DeadLetter
from stream.delivery import OutRecord
from stream.pipeline.batches import (
    CLOCK_TABLE,
    MATCH_TABLE,
    PENDING_TABLE,
    POPULATION_TABLE,
    RATING_TABLE,
    BatchRunner,
    Message,
    agent_inputs,
)
from stream.pipeline.checkpoints import Checkpoints
from stream.pipeline.matches import MatchProcessor
from stream.pipeline.players import PlayerProcessor
from stream.protocol.checkpoints import checkpoint_key

__all__ = ["Crash", "CrashPlan", "SimWorker"]

# How long a stale fetch answer stays a partition's last at most (simulated wall seconds):
# longer than the settle (0.5 s), which an answer this old used to slip past.
STALE_SECONDS = 1.5

TABLES = (MATCH_TABLE, CLOCK_TABLE, RATING_TABLE, PENDING_TABLE, POPULATION_TABLE)

TopicPartition = tuple[str, int]


class Crash(BaseException):
    """The schedule kills the worker here (a BaseException: no handler of the worker's code
    may contain it, as none can contain SIGKILL)."""


@dataclass
class CrashPlan:
    """Where the schedule kills a worker: at the ``nth`` time (counting from 1) it reaches
    crash point ``point`` (stream/pipeline/crashpoints.py names), or, for ``delivering``, after
    ``nth``-1 records of a delivery are out. None: not armed."""

    point: str | None = None
    nth: int = 1
    seen: dict[str, int] = field(default_factory=dict)

    def reached(self, point: str) -> None:
        count = self.seen[point] = self.seen.get(point, 0) + 1
        if point == self.point and count == self.nth:
            raise Crash(point)


class SimWorker:
    """One worker process of the simulation (its tables, runner and consumer)."""

    def __init__(
        self,
        name: str,
        settings: Settings,
        modes: Modes,
        broker: Broker,
        wall: Callable[[], float],
        plan: CrashPlan,
        *,
        use_checkpoints: bool = True,
        stale: float = 0.0,
        rng: random.Random | None = None,
    ) -> None:
        """``use_checkpoints``: False starts every input at its committed offset whatever the
        tables hold, as workers did before checkpoints (to see what they prevent); ``stale``:
        the chance that a fetch answer stays the last one for a while (:meth:`fetched`),
        drawn from ``rng``."""
        self.name = name
        self.use_checkpoints = use_checkpoints
        self.stale = stale
        self.rng = rng or random.Random(0)
        self.wall = wall
        self.settings = s = settings
        self.broker = broker
        self.plan = plan
        self.agents = agent_inputs(s)
        self.checkpoints = Checkpoints(self.agents)
        self.tables = SimTables(broker, TABLES, self.checkpoints, plan.reached)
        self.runner = BatchRunner(
            s,
            MatchProcessor(
                modes,
                partitions=s.partitions,
                retention_seconds=s.worker.retention_seconds,
                lateness_seconds=s.worker.event_lateness_seconds,
                report_seconds=s.worker.progress_seconds,
            ),
            PlayerProcessor(modes, partitions=s.partitions, announce_seconds=s.worker.tick_seconds),
            self.tables,
            self._deliver,
            self._end_offset,
            wall_clock=wall,
            crash_point=plan.reached,
        )
        self.commits = Commits(
            self.tables.flush,
            lambda: None,  # the schedule commits (its early commit included)
            lambda delay, call: None,
            clock=wall,
            crash_point=plan.reached,
        )
        self.owned: set[int] = set()
        # The next offset the consumer hands over per owned input partition, and the end it
        # saw there at its last fetch answer and when (the high watermark the runner is told),
        # and until when a stale answer stays the last one.
        self.fetch: dict[TopicPartition, int] = {}
        self.seen_end: dict[TopicPartition, tuple[int, float]] = {}
        self.stale_until: dict[TopicPartition, float] = {}
        self.inputs = [topic for agent in self.agents for topic in agent.topics]
        self.match_inputs = {s.topics.match_started, s.topics.match_finished}
        self.restarts: list[str] = []

    # --- assignment -----------------------------------------------------------------------------

    def assign(self, partitions: Iterable[int]) -> None:
        """Take ``partitions`` over: restore their tables, then start every input where the
        checkpoints say, as the Faust adapter does (stream/pipeline/app.py ``_sought``)."""
        numbers = sorted(set(partitions))
        for partition in numbers:
            for table in TABLES:
                self.tables.restore(table, partition)
        committed = {
            (topic, p): self.broker.committed.get((topic, p), 0)
            for topic in self.inputs
            for p in numbers
        }
        restart = self.checkpoints.restart(committed, self._checkpoint, self.tables.empty)
        offsets = restart.offsets if self.use_checkpoints else committed
        for behind in restart.behind:
            self.restarts.append(behind.describe())
        self.checkpoints.started(offsets)
        self.runner.positions.sought(offsets)
        self.commits.sought()
        self.fetch.update(offsets)
        self.owned.update(numbers)

    def revoke(self, partitions: Iterable[int]) -> None:
        """``partitions`` leave this worker (after :meth:`flush_revoked`)."""
        numbers = set(partitions)
        self.runner.revoked(numbers)
        self.checkpoints.forget(numbers)
        for table in TABLES:
            for partition in numbers:
                self.tables.drop(table, partition)
        self.fetch = {tp: o for tp, o in self.fetch.items() if tp[1] not in numbers}
        self.seen_end = {tp: o for tp, o in self.seen_end.items() if tp[1] not in numbers}
        self.stale_until = {tp: t for tp, t in self.stale_until.items() if tp[1] not in numbers}
        self.owned -= numbers

    def _checkpoint(self, table: str, partition: int) -> bytes | None:
        found: bytes | None = self.tables.contents(table).get(checkpoint_key(partition))
        return found

    # --- consuming ------------------------------------------------------------------------------

    def fetched(self, *, tick: bool = False) -> None:
        """A fetch round: the consumer learns every owned partition's end (its high
        watermark) and the time of the answer, records or not, as each fetch response tells
        it. At a ``tick``, with the schedule's ``stale`` chance, an input partition's answer
        stays its last one for up to STALE_SECONDS while records arrive behind it, unread (a
        partition paused, an answer slow to come back): a bound resting on the clock of now
        instead of the answer's would make a promise those records break."""
        end, now = self.broker.end, self.wall()
        seen: dict[TopicPartition, tuple[int, float]] = {}
        for tp in self.fetch:
            known = self.seen_end.get(tp)
            if known is not None and now < self.stale_until.get(tp, now):
                seen[tp] = known
                continue
            seen[tp] = (end(*tp), now)
            if (
                tick
                and self.stale
                and tp[0] in self.match_inputs
                and self.rng.random() < self.stale
            ):
                self.stale_until[tp] = now + self.rng.uniform(0.0, STALE_SECONDS)
        self.seen_end = seen

    def readable(self) -> list[TopicPartition]:
        """The owned input partitions with records not handed over yet: while a partition's
        last answer is a stale one, only those up to the end it gave (nothing newer was
        fetched)."""
        return [tp for tp, at in self.fetch.items() if at < self._fetchable(tp)]

    def _fetchable(self, tp: TopicPartition) -> int:
        """How far the consumer can hand over ``tp``: the broker's end, or while its last
        answer is stale, the end that answer gave."""
        end = self.broker.end(*tp)
        now = self.wall()
        if now < self.stale_until.get(tp, now):
            end = min(end, self.seen_end[tp][0])
        return end

    async def step(self, rng: random.Random, batch: int, lose: float = 0.0) -> int:
        """One batch: records of one agent from partitions drawn at random, each partition's
        in order, as Faust hands them over; ``lose``: the chance that a record is dropped on
        its way (the runner must notice the gap). Returns how many records were handed
        over (0: nothing was readable)."""
        self.fetched()
        candidates = self.readable()
        if not candidates:
            return 0
        first = rng.choice(sorted(candidates))
        agent = self._agent(first[0])
        others = sorted(tp for tp in candidates if tp != first and self._agent(tp[0]) == agent)
        rng.shuffle(others)
        messages: list[Message] = []
        for tp in [first, *others]:
            if len(messages) >= batch:
                break
            take = rng.randint(1, batch - len(messages))
            log = self.broker.logs[tp]
            start = self.fetch[tp]
            end = min(self._fetchable(tp), start + take)
            for offset in range(start, end):
                if lose and rng.random() < lose:
                    continue
                messages.append(Message(tp[0], tp[1], offset, None, None, log[offset]))
            self.fetch[tp] = end
        if not messages:
            return 1
        run = self.runner.player_batch if agent == "players" else self.runner.match_batch
        report = await run(messages)
        admission = report.admission
        for tp, offset in {**admission.restart, **admission.rewind}.items():
            self.fetch[tp] = offset
        return len(messages)

    def reseek(self, rng: random.Random) -> None:
        """The consumer reads a partition again from its committed offset while the runner
        has a position (Faust's seek back to the commits during a rebalance): repeats."""
        if self.fetch:
            tp = rng.choice(sorted(self.fetch))
            self.fetch[tp] = min(self.fetch[tp], self.broker.committed.get(tp, 0))

    # --- committing -----------------------------------------------------------------------------

    async def commit(self) -> bool:
        """A commit as Faust makes it, in the protocol's order: choose the offsets (each
        capped at the runner's position), flush with their checkpoints, commit."""
        chosen: dict[TopicPartition, int] = {}
        for tp in self.fetch:
            position = self.runner.positions.position(*tp)
            if position is not None and position > self.broker.committed.get(tp, 0):
                chosen[tp] = position
        if not chosen:
            return False
        if not await self.commits.before_commit(chosen):
            return False
        self.broker.committed.update(chosen)
        self.commits.committed()
        return True

    async def flush_revoked(self) -> None:
        """The flush before partitions leave (no checkpoints: nothing is committed)."""
        await self.tables.flush()
        self.plan.reached("revoked")

    # --- the ports ------------------------------------------------------------------------------

    async def _deliver(self, agent: str, records: list[OutRecord]) -> list[DeadLetter]:
        """Append every record to its topic; ``delivering`` is a crash point before each."""
        rated = self.settings.topics.rating_changed
        for record in records:
            self.plan.reached("delivering")
            if record.letter is not None:
                self.broker.dead_letters.append(record.letter.reason)
            elif record.topic == rated:
                self.broker.ratings.append(record.value or b"")
            else:
                assert record.partition is not None and record.value is not None
                self.broker.append(record.topic, record.partition, record.value)
        return []

    def _end_offset(self, topic: str, partition: int) -> tuple[int, float] | None:
        return self.seen_end.get((topic, partition))

    def _agent(self, topic: str) -> str:
        return "players" if topic == self.settings.player_commands_topic else "matches"

    def held_writes(self) -> Mapping[str, int]:
        return {table: len(held) for table, held in self.tables.held.items()}
