"""The batch runner's own rules, on the in-memory harness: a bad command goes alone, and state
is written only once the batch's outputs are delivered."""

from __future__ import annotations

import asyncio

import orjson
import pytest
from harness import (
    FINISHED,
    MATCH_COMMANDS,
    PLAYER_COMMANDS,
    STARTED,
    T0,
    Cluster,
    a_match,
    epoch_ms,
)

from stream.deadletters import DeadLetter
from stream.delivery import OutRecord
from stream.pipeline.playerpartition import PlayerContext
from stream.protocol import PlayerCommand, Rate
from stream.retry import Outage


def test_malformed_commands_are_dead_lettered_alone_with_their_reason() -> None:
    c = Cluster(partitions=1)
    c.send(MATCH_COMMANDS, b'[["snap"], ["tick", 1], ["bogus", 2], 7]', partition=0)
    c.send(PLAYER_COMMANDS, b'[["rate"], ["join", 1], ["cancel", "m", []]]', partition=0)
    c.send(PLAYER_COMMANDS, b"null", partition=0)
    a_match(c)
    c.run()
    reasons = [(letter.value, letter.reason) for letter in c.dead_letters]
    assert reasons == [
        (b'["snap"]', "malformed command: snap command: expected 5 to 8 elements, got 1"),
        (b'["bogus",2]', "malformed command: unknown match command 'bogus'"),
        (b"7", "malformed command: match command: expected a list, got int"),
        (b'["rate"]', "malformed command: rate command: expected at least 9 elements, got 1"),
        (b'["join",1]', "malformed command: join command: expected 6 to 8 elements, got 2"),
        (b"null", "expected a JSON array of commands, got NoneType"),
    ]
    # The well-formed commands beside them were carried out, and the match was rated.
    assert c.outcomes() == {("a", "m1"): "win", ("b", "m1"): "loss"}


class Failing:
    """A player processor that fails on one match's rate command."""

    def __init__(self, inner: object, match_id: str) -> None:
        self.inner, self.match_id = inner, match_id

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    def on_command(self, ctx: PlayerContext, command: PlayerCommand) -> None:
        if isinstance(command, Rate) and command.match_id == self.match_id:
            raise RuntimeError("boom")
        self.inner.on_command(ctx, command)  # type: ignore[attr-defined]


def test_an_unexpected_error_dead_letters_that_command_and_the_batch_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    c = Cluster(partitions=1)
    c.allow_internal_errors = True
    c.runner.players = Failing(c.runner.players, "m1")  # type: ignore[assignment]
    a_match(c, "m1")
    a_match(c, "m2", ("c", "d"))
    c.run()
    (letter,) = c.dead_letters
    assert letter.reason == "internal error: RuntimeError('boom')"
    assert orjson.loads(letter.value or b"")[:2] == ["rate", "m1"]
    assert {match for _, match in c.outcomes()} == {"m2"}
    (logged,) = [r for r in caplog.records if r.getMessage().startswith("internal error")]
    assert logged.exc_info is not None and logged.__dict__["match_id"] == "m1"


def test_state_is_written_only_after_the_outputs_are_delivered() -> None:
    c = Cluster(partitions=1)
    a_match(c)
    message = c.message(c.queue.popleft())
    attempts: list[int] = []
    deliver = c.runner.deliver

    async def flaky(agent: str, records: list[OutRecord]) -> list[DeadLetter]:
        attempts.append(len(records))
        # Nothing of this batch is in the tables before its outputs are delivered.
        assert c.match_table == {} and c.store.tables["clocks"] == {}
        if len(attempts) == 1:
            raise ConnectionError("broker gone")
        return await deliver(agent, records)

    c.runner.deliver = flaky

    async def redo() -> None:
        await c.runner.until_done(
            lambda: c.runner.match_batch([message]),
            Outage("matches: batch failed"),
            events=1,
            partitions=[0],
        )

    asyncio.run(redo())
    # Both joins packed in one message, sent again whole; then, once the broker has them, the
    # partition's report to the event-time combiner.
    assert attempts == [1, 1, 1]
    assert len(c.match_table) == 1 and len(c.store.tables["clocks"]) == 1
    # Delivered once: the failed attempt reached nobody.
    waiting, *delivered = c.queue
    assert waiting[0] == FINISHED
    assert sorted({item[0] for item in delivered}) == [MATCH_COMMANDS, PLAYER_COMMANDS]
    # Both joins; the report to the combiner last, on its own.
    (joins,) = [item for item in delivered if item[0] == PLAYER_COMMANDS]
    assert [command[0] for command in orjson.loads(joins[3])] == ["join", "join"]
    assert [command[0] for command in orjson.loads(delivered[-1][3])] == ["rep"]


def test_the_clock_is_stored_once_known_then_each_second_of_event_time() -> None:
    """Not with every batch (a record and a produce batch each), but never missing once an
    event was read: a partition restarted with no clock and no new event would never decide."""
    c = Cluster(partitions=1)

    def started(match_id: str, at: float) -> None:
        event = {"match_id": match_id, "mode": "1v1", "started_at": epoch_ms(at)}
        c.send(STARTED, {**event, "teams": [["a"], ["b"]]}, partition=0)
        asyncio.run(c.runner.match_batch([c.message(c.queue.pop())]))

    def stored() -> float:
        return float(orjson.loads(c.store.tables["clocks"][b"0"]))

    started("m1", T0)
    assert stored() == T0
    started("m2", T0 + 0.5)
    assert stored() == T0
    started("m3", T0 + 1.0)
    assert stored() == T0 + 1.0


def test_a_partition_taken_over_before_its_first_tick_still_moves_on() -> None:
    """Its inputs read and committed, then a restart before any tick, and no event after: the
    stored clock is what lets event time move on (a chaos run stalled for good without it)."""
    c = Cluster(partitions=1)
    a_match(c)
    for _ in range(2):  # the start and the finish, each its own batch, no tick
        asyncio.run(c.runner.match_batch([c.message(c.queue.popleft())]))
    c.runner.forget([0])
    c.run()
    assert c.outcomes() == {("a", "m1"): "win", ("b", "m1"): "loss"}


@pytest.mark.parametrize("fail_on", ["matches", "clocks"])
def test_a_failed_table_write_leaves_the_batch_to_be_redone(fail_on: str) -> None:
    c = Cluster(partitions=1)
    a_match(c)
    batch = [c.message(c.queue.popleft())]
    write = c.store.write
    failed: list[str] = []

    async def failing(table: str, *args: object) -> None:
        if table == fail_on and not failed:
            failed.append(table)
            raise OSError("disk full")
        await write(table, *args)  # type: ignore[arg-type]

    c.store.write = failing  # type: ignore[method-assign,assignment]
    with pytest.raises(OSError):
        asyncio.run(c.runner.match_batch(batch))
    c.runner.forget([0])
    asyncio.run(c.runner.match_batch(batch))
    c.queue.clear()
    c.run()
    # Redone against the tables as they were: the same entry, the clock stored.
    assert len(c.match_table) == 1 and len(c.store.tables["clocks"]) == 1
