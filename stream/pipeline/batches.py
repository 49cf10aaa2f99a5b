"""The batch runner: one batch, steps 1-3 of the commit protocol (stream/commits.py),
with no Faust in it.

A batch:
0. admit the records: only the next record of each input partition is processed, in offset
   order; one processed before is skipped, one after a gap is held and its partition read again
   from the gap (:class:`stream.pipeline.positions.InputPositions`);
1. process every admitted message against working copies of the table records
   (:class:`StateView`), in per-partition contexts (:class:`MatchContext`, :class:`PlayerContext`);
2. and 3. :func:`stream.commits.close_batch`: deliver the outbox as records (packed commands,
   rating-changed, dead letters: stream/pipeline/packing.py) through the delivery port and
   wait until the broker has them,
   then write the changed table records and the match partitions' clocks through the table
   port (held until the commit);
4. move the partitions' positions past the admitted records and return a :class:`BatchReport`;
   the caller acks what was processed or skipped, withholds the acks of what was held and
   reads again the partitions it names (``rewind``).

Failure, contained to the message: a message that cannot be parsed or used goes to the
dead-letter topic; a malformed command of a packed message is dead-lettered alone (reason
``malformed command: ...``); an unexpected error while processing one message or one command
dead-letters that message or command (reason ``internal error: ...``) and the batch goes on.

Failure that stops the batch: any error from the ports (broker unreachable, a table write
failing) propagates; :meth:`BatchRunner.until_done` redoes the whole batch with backoff, after
forgetting the match partitions' clocks and deadlines so they are rebuilt from the tables.

The Faust app (stream/pipeline/app.py) adapts its events to :class:`Message` and provides the
ports; tests drive the same runner with tables in dictionaries (tests/unit/pipeline/harness.py).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Protocol, TypeVar

import orjson

from stream.commits import close_batch
from stream.config.settings import TABLES, Settings
from stream.deadletters import DeadLetter, Origin
from stream.delivery import OutRecord
from stream.pipeline.checkpoints import AgentInputs
from stream.pipeline.matches import MatchProcessor
from stream.pipeline.matchpartition import FINISHED, STARTED, MatchContext, MatchPartition
from stream.pipeline.outbox import Outbox
from stream.pipeline.packing import Outputs, command_match_id, log_context
from stream.pipeline.partitioning import partition_for
from stream.pipeline.playerpartition import PlayerContext, PlayerPartition
from stream.pipeline.players import PlayerProcessor
from stream.pipeline.positions import Admission, InputPositions
from stream.pipeline.view import StateView
from stream.protocol import (
    CLOCKS,
    MATCHES,
    PENDING,
    POPULATIONS,
    MatchCommand,
    PlayerCommand,
    PopulationRecord,
    ProtocolError,
    decode_commands,
    decode_match_command,
    decode_player_command,
)
from stream.ratings.fastinit import fast_init
from stream.retry import Backoff, Outage

log = logging.getLogger("skillstream.worker")

C = TypeVar("C", MatchCommand, PlayerCommand)
# A partition's context in a batch: MatchContext or PlayerContext.
Ctx = TypeVar("Ctx")


# Table names, as the app declares them (stream/config/settings.py, TABLES: written once).
MATCH_TABLE, CLOCK_TABLE, RATING_TABLE, PENDING_TABLE, POPULATION_TABLE = TABLES


def agent_inputs(settings: Settings) -> tuple[AgentInputs, AgentInputs]:
    """Which tables each agent writes from which inputs (a table partition's checkpoint names
    those inputs' offsets: stream/pipeline/checkpoints.py)."""
    s = settings
    return (
        AgentInputs(
            "matches",
            (s.topics.match_started, s.topics.match_finished, s.match_commands_topic),
            (MATCH_TABLE, CLOCK_TABLE, POPULATION_TABLE),
        ),
        AgentInputs("players", (s.player_commands_topic,), (RATING_TABLE, PENDING_TABLE)),
    )


# The clocks table holds a partition's latest event time so that, after a restart, event time
# moves on from there even if no event comes (without one, nothing is ever decided). It is
# written once the clock is known and then each time it has moved this far: a restart may
# resume up to this much behind, which only delays decisions; writing it with every batch
# cost a third of a record and of a produce batch per match at 500 matches/s.
CLOCK_STEP_SECONDS = 1.0


@fast_init
@dataclass(frozen=True, slots=True)
class Message:
    """One input message, as the runner sees it. ``handle`` is the adapter's own (the Faust
    event): the runner only passes it back to the table port."""

    topic: str
    partition: int
    offset: int
    timestamp_ms: int | None
    key: bytes | None
    value: bytes | None
    handle: object = None


class Tables(Protocol):
    """The table port: current contents, and the write of a batch's changes.

    ``write`` applies ``changes`` (encoded key: encoded value, None to delete) to ``table``:
    ``contents`` shows them at once, and they reach its changelog partition ``partition``
    before the offsets of the batch's messages are committed (the Faust port holds them until
    then: stream/pipeline/changelogs.py); ``last`` is the batch's last message on that
    partition. An error propagates and the batch is redone (the writes are idempotent).
    """

    def contents(self, table: str) -> Mapping[bytes, bytes]: ...

    async def write(
        self, table: str, partition: int, changes: dict[bytes, bytes | None], last: Message
    ) -> None: ...


# The delivery port: send every record and wait until the broker has it; returns the records it
# refused for good, as dead letters (stream/delivery.py). Retries are its own business.
Deliver = Callable[[str, list[OutRecord]], Awaitable[list[DeadLetter]]]

# The end offset port: the offset after the last record the broker held on (topic, partition)
# when it last answered the consumer, and when the broker made that answer, at the latest (wall
# seconds, the runner's wall clock; None: not known yet). A partition is caught up as of that
# time when its position has reached that end; watermarks rest on it (docs/event-time.md), and
# unknown only delays them.
EndOffset = Callable[[str, int], tuple[int, float] | None]


@dataclass
class BatchReport:
    """What a batch did, for the metrics: its outbox (counts, outputs), its inputs, and which of
    them were not processed (``admission``: repeats to acknowledge, held records whose acks
    the caller withholds, partitions to read again)."""

    agent: str
    out: Outbox
    events: int
    admission: Admission[Message]
    per_topic: Counter[str] = field(default_factory=Counter)
    seconds: float = 0.0


@dataclass(frozen=True)
class _Batch:
    """A batch in hand: its outbox, what was admitted (by input partition in ``groups``) and
    the wall time it runs at."""

    out: Outbox
    admission: Admission[Message]
    groups: dict[int, list[Message]]
    wall: float


def _by_partition(messages: Sequence[Message]) -> dict[int, list[Message]]:
    groups: dict[int, list[Message]] = {}
    for message in messages:
        groups.setdefault(message.partition, []).append(message)
    return groups


# A service, not a value: compared and hashed by identity.
@dataclass(eq=False)
class BatchRunner:
    """Runs match and player batches against the tables and the delivery port it is given."""

    settings: Settings
    matches: MatchProcessor
    players: PlayerProcessor
    tables: Tables
    deliver: Deliver
    end_offset: EndOffset
    wall_clock: Callable[[], float] = time.time
    # The soak harness's crash points (stream/pipeline/crashpoints.py), armed by the first
    # batch with a match event; no-ops otherwise.
    crash_point: Callable[[str], None] = lambda point: None
    # Called once, by the first batch with a match event (None from then on).
    first_event: Callable[[], None] | None = lambda: None
    # The next offset to process on every input partition (both agents').
    positions: InputPositions = field(default_factory=InputPositions, init=False)
    # The outbox as records to send (packed commands, repeats counted).
    outputs: Outputs = field(init=False)
    input_kinds: dict[str, str] = field(init=False)
    # The partitions whose state across batches is current (rebuilt after assignment).
    match_partitions: dict[int, MatchPartition] = field(default_factory=dict, init=False)
    player_partitions: dict[int, PlayerPartition] = field(default_factory=dict, init=False)

    def __post_init__(self) -> None:
        s = self.settings
        self.outputs = Outputs(s)
        self.input_kinds = {s.topics.match_started: STARTED, s.topics.match_finished: FINISHED}

    # --- match partitions -----------------------------------------------------------------------

    def forget(self, partitions: Iterable[int]) -> None:
        """Rebuild these partitions' clocks and deadlines from the tables before their next
        batch (after a revocation, or a failed batch)."""
        for partition in partitions:
            self.match_partitions.pop(partition, None)
            self.player_partitions.pop(partition, None)

    def revoked(self, partitions: Iterable[int]) -> None:
        """These partitions went to another worker (or may have): their state is rebuilt from
        the tables and their inputs are read from their commits when they come back."""
        numbers = list(partitions)
        self.forget(numbers)
        self.positions.forget(numbers)
        # Whoever receives a command may now rebuild its state from a changelog older than the
        # copies it was sent (a restore from an earlier flush), where a copy dropped then (a
        # snapshot read before the start it answers) matters again: repeats are counted afresh
        # in every generation, which still stops a loop within one.
        self.outputs.repeats.clear()

    def caught_up(
        self, topic: str, partition: int, reached: Mapping[tuple[str, int], int]
    ) -> float | None:
        """Since when (wall time) every record the broker held on (topic, partition) has been
        processed here, counting the batch in hand (``reached``): the time of the broker's
        last answer, whose end the position has reached. None: not caught up, or either end
        unknown."""
        position = reached.get((topic, partition))
        if position is None:
            position = self.positions.position(topic, partition)
        fetched = self.end_offset(topic, partition)
        if position is None or fetched is None or position < fetched[0]:
            return None
        return fetched[1]

    def match_partition(self, number: int, wall: float) -> MatchPartition:
        """The partition's state; after (re)assignment, its clock and deadlines from the tables."""
        found = self.match_partitions.get(number)
        if found is not None:
            return found
        stored = self.tables.contents(CLOCK_TABLE).get(CLOCKS.key_bytes(number))
        entries = []
        for key, value in self.tables.contents(MATCH_TABLE).items():
            match_id = orjson.loads(key)
            if value is not None and partition_for(match_id, self.matches.partitions) == number:
                entries.append((match_id, MATCHES.value(value)))
        clock = None if stored is None else CLOCKS.value(stored)
        learned = self.tables.contents(POPULATION_TABLE).get(POPULATIONS.key_bytes(number))
        populations = None if learned is None else POPULATIONS.value(learned)
        found = self.match_partitions[number] = self.matches.restore(
            number, clock, entries, wall, populations
        )
        return found

    def player_partition(self, number: int, wall: float) -> PlayerPartition:
        """The partition's state; after (re)assignment, its waiting players from the tables."""
        found = self.player_partitions.get(number)
        if found is not None:
            return found
        records = []
        for key, value in self.tables.contents(PENDING_TABLE).items():
            player_id = orjson.loads(key)
            if value is not None and partition_for(player_id, self.players.partitions) == number:
                records.append((player_id, PENDING.value(value)))
        found = self.player_partitions[number] = self.players.restore(number, records, wall)
        return found

    # --- batches ------------------------------------------------------------------------------

    async def match_batch(self, messages: Sequence[Message]) -> BatchReport:
        return await self._batch("matches", messages, self._process_matches, self._hold_match)

    async def player_batch(self, messages: Sequence[Message]) -> BatchReport:
        return await self._batch("players", messages, self._process_players, self._hold_player)

    async def _batch(
        self,
        agent: str,
        messages: Sequence[Message],
        process: Callable[[_Batch], dict[int, Ctx]],
        hold: Callable[[int, Ctx, Message], Awaitable[None]],
    ) -> BatchReport:
        """One batch of either agent (module docstring, 0-4): ``process`` runs the admitted
        messages, partition by partition, into per-partition contexts; ``hold`` writes one
        partition's changed table records, given the batch's last message on it."""
        started = time.perf_counter()
        wall = self.wall_clock()
        out = Outbox()
        admission = self.positions.admit(messages)
        batch = _Batch(out, admission, _by_partition(admission.accepted), wall)
        contexts = process(batch)

        async def hold_all() -> None:
            for number, group in batch.groups.items():
                await hold(number, contexts[number], group[-1])

        await close_batch(partial(self._deliver, out, agent), hold_all, self.crash_point)
        return self._report(agent, out, len(messages), admission, started)

    def _process_matches(self, batch: _Batch) -> dict[int, MatchContext]:
        out, wall = batch.out, batch.wall
        contexts: dict[int, MatchContext] = {}
        table = self.tables.contents(MATCH_TABLE)
        for number, group in batch.groups.items():
            partition = self.match_partition(number, wall)
            ctx = contexts[number] = MatchContext.of(partition, table, out, wall)
            if partition.rejoin:
                self.matches.ask_again(ctx)
            for message in group:
                origin = Origin(message.topic, number, message.offset, message.timestamp_ms)
                key, value = message.key, message.value
                try:
                    kind = self.input_kinds.get(message.topic)
                    if kind is not None:
                        if self.first_event is not None:
                            self.first_event()
                            self.first_event = None
                        self.matches.on_event(ctx, kind, key, value, origin)
                    else:
                        for data in self._commands(out, message, origin):
                            handle = partial(self.matches.on_command, ctx)
                            self._one_command(out, data, origin, decode_match_command, handle)
                except Exception as exc:
                    log.exception(
                        "internal error on %s[%d]@%d",
                        origin.topic,
                        origin.partition,
                        origin.offset,
                        extra=log_context(origin, key),
                    )
                    out.dead_letter(DeadLetter(key, value, origin, f"internal error: {exc!r}"))
            if self.matches.report_due(partition, wall):
                reached = batch.admission.reached
                self.matches.report(
                    ctx,
                    started_caught_up=self.caught_up(
                        self.settings.topics.match_started, number, reached
                    ),
                    finished_caught_up=self.caught_up(
                        self.settings.topics.match_finished, number, reached
                    ),
                )
            self.matches.combine(ctx)
            self.matches.close_windows(ctx)
        return contexts

    async def _hold_match(self, number: int, ctx: MatchContext, last: Message) -> None:
        await self.tables.write(MATCH_TABLE, number, ctx.view.changes(), last)
        clock = ctx.partition.latest
        stored = ctx.partition.stored
        if clock is not None and (stored is None or clock >= stored + CLOCK_STEP_SECONDS):
            clocks: StateView[int, float] = StateView({}, CLOCKS)
            clocks.put(number, clock)
            await self.tables.write(CLOCK_TABLE, number, clocks.changes(), last)
            ctx.partition.stored = clock
        if ctx.partition.populations_changed:
            learned: StateView[int, PopulationRecord] = StateView({}, POPULATIONS)
            learned.put(number, ctx.partition.populations)
            await self.tables.write(POPULATION_TABLE, number, learned.changes(), last)
            ctx.partition.populations_changed = False

    def _process_players(self, batch: _Batch) -> dict[int, PlayerContext]:
        out, wall = batch.out, batch.wall
        contexts: dict[int, PlayerContext] = {}
        ratings = self.tables.contents(RATING_TABLE)
        pending = self.tables.contents(PENDING_TABLE)
        for number, group in batch.groups.items():
            partition = self.player_partition(number, wall)
            ctx = contexts[number] = PlayerContext.of(partition, ratings, pending, out, wall)
            for message in group:
                origin = Origin(message.topic, message.partition, message.offset)
                handle = partial(self.players.on_command, ctx)
                for data in self._commands(out, message, origin):
                    self._one_command(out, data, origin, decode_player_command, handle)
            self.players.report(ctx)
        return contexts

    async def _hold_player(self, number: int, ctx: PlayerContext, last: Message) -> None:
        await self.tables.write(RATING_TABLE, number, ctx.ratings.changes(), last)
        await self.tables.write(PENDING_TABLE, number, ctx.pending.changes(), last)

    def _one_command(
        self,
        out: Outbox,
        data: object,
        origin: Origin,
        decode: Callable[[object], C],
        handle: Callable[[C], None],
    ) -> None:
        """One command of a packed message: a failure dead-letters this command alone."""
        try:
            command = decode(data)
        except ProtocolError as exc:
            out.dead_letter(_command_letter(data, origin, f"malformed command: {exc}"))
            return
        try:
            handle(command)
        except Exception as exc:
            log.exception(
                "internal error on a command from %s[%d]@%d: %r",
                origin.topic,
                origin.partition,
                origin.offset,
                data,
                extra={
                    **log_context(origin, None),
                    "match_id": command_match_id(command),
                },
            )
            out.dead_letter(_command_letter(data, origin, f"internal error: {exc!r}"))

    @staticmethod
    def _commands(out: Outbox, message: Message, origin: Origin) -> list[object]:
        """A packed message's commands, undecoded; none if it is not a JSON array (then the
        message is dead-lettered whole)."""
        try:
            return decode_commands(message.value)
        except ProtocolError as exc:
            out.dead_letter(DeadLetter(message.key, message.value, origin, str(exc)))
            return []

    async def _deliver(self, out: Outbox, agent: str) -> None:
        """Send everything and wait until the broker has it (a record it refuses becomes a
        dead letter, anything else is retried by the port until it works); then the reports to
        the combiner, the same way (stream/pipeline/outbox.py)."""
        if not out:
            return
        for after in (False, True):
            if after and not out.after:
                break
            records, sent = self.outputs.records(out, after=after)
            for letter in await self.deliver(agent, records):
                log.error(
                    "output to %s refused by Kafka, dead-lettered: %s",
                    letter.origin.topic,
                    letter.reason,
                )
                out.dead_letter(letter)
            self.outputs.delivered(sent)

    def _report(
        self,
        agent: str,
        out: Outbox,
        events: int,
        admission: Admission[Message],
        started: float,
    ) -> BatchReport:
        """The batch is done: its partitions' positions move past what it processed."""
        self.positions.advance(admission)
        report = BatchReport(agent, out, events, admission)
        for message in admission.accepted:
            report.per_topic[message.topic] += 1
        report.seconds = time.perf_counter() - started
        return report

    # --- redo until done ------------------------------------------------------------------------

    async def until_done(
        self,
        attempt: Callable[[], Awaitable[object]],
        outage: Outage,
        *,
        events: int,
        partitions: Iterable[int],
        on_redo: Callable[[], None] = lambda: None,
        on_cancel: Callable[[], None] = lambda: None,
    ) -> None:
        """Run ``attempt()`` until it succeeds; never raise but for cancellation.

        An error redoes the whole batch after a backoff (0.1 s doubling to 5 s): the first
        failure is logged with its traceback, later ones only counted, and the end of the run
        of failures is logged. The batch's match partitions (``partitions``) are rebuilt from
        the tables first, as after a restart. Cancellation (stop, rebalance) calls
        ``on_cancel`` (the app withholds the batch's acks there) and propagates.
        """
        backoff = Backoff()
        numbers = set(partitions)
        try:
            while True:
                try:
                    await attempt()
                except Exception as exc:
                    outage.failed(f"{exc!r}, {events} event(s) to redo", exc)
                    on_redo()
                    self.forget(numbers)
                    await backoff.wait()
                    continue
                outage.recovered()
                return
        except asyncio.CancelledError:
            on_cancel()
            raise


def _command_letter(data: object, origin: Origin, reason: str) -> DeadLetter:
    return DeadLetter(None, orjson.dumps(data), origin, reason)
