"""stream/pipeline/checkpoints.py: what each flush writes at the end of a changelog partition's
batch, and where a worker restarts an input from the tables' checkpoints: at its commit when
they have it all, lower where one came back short, from the start where one came back empty,
and at the commit (reported) where the tables were written before checkpoints existed."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from stream.pipeline.checkpoints import AgentInputs, Behind, Checkpoints
from stream.protocol.checkpoints import (
    checkpoint_key,
    decode_checkpoint,
    encode_checkpoint,
    is_checkpoint,
)

MATCHES = AgentInputs("matches", ("started", "finished", "mc"), ("matches", "clocks"))
PLAYERS = AgentInputs("players", ("pc",), ("ratings", "pending"))


def checkpoints() -> Checkpoints:
    return Checkpoints((MATCHES, PLAYERS))


def test_the_key_is_no_table_key_and_the_value_round_trips() -> None:
    # Table keys are JSON: a string, a list or a number never starts with a NUL byte.
    assert is_checkpoint(checkpoint_key(3)) and not is_checkpoint(b'"alice"')
    assert not is_checkpoint(None)
    assert checkpoint_key(3) != checkpoint_key(13)
    assert decode_checkpoint(encode_checkpoint({"mc": 7, "started": 2})) == {"mc": 7, "started": 2}
    for bad in (b"{}", b'{"v":2,"read":{}}', b'{"v":1,"read":{"mc":-1}}', b"not json"):
        try:
            decode_checkpoint(bad)
        except ValueError:
            continue
        raise AssertionError(f"{bad!r} decoded")


def test_a_commit_checkpoints_every_table_of_an_agent_whose_inputs_moved() -> None:
    c = checkpoints()
    c.started({("started", 0): 0, ("finished", 0): 0, ("mc", 0): 0, ("pc", 0): 0})
    marks = c.records({("started", 0): 4, ("mc", 0): 9}, written=[])
    value = encode_checkpoint({"started": 4, "finished": 0, "mc": 9})
    assert marks == {"matches": {0: value}, "clocks": {0: value}}  # the player side did not move
    # Nothing is taken as read until the flush arrived: the same commit checkpoints again.
    assert c.records({("started", 0): 4, ("mc", 0): 9}, written=[]) == marks
    c.wrote({("started", 0): 4, ("mc", 0): 9})
    assert c.records({("started", 0): 4, ("mc", 0): 9}, written=[]) == {}


def test_every_batch_a_flush_sends_ends_with_its_tables_checkpoint() -> None:
    c = checkpoints()
    c.started({("pc", 1): 5})
    # A flush before a revocation (nothing chosen) that writes ratings[1]: the last commit's.
    assert c.records(None, written=[("ratings", 1)]) == {
        "ratings": {1: encode_checkpoint({"pc": 5})}
    }
    # A partition this worker never read has nothing to say.
    assert c.records(None, written=[("ratings", 2)]) == {}


def restart(
    c: Checkpoints,
    committed: dict[tuple[str, int], int],
    held: dict[tuple[str, int], dict[str, int] | None],
    empty: frozenset[tuple[str, int]] = frozenset(),
) -> tuple[dict[tuple[str, int], int], list[Behind], list[tuple[str, int]]]:
    def read(table: str, partition: int) -> bytes | None:
        offsets = held.get((table, partition))
        return None if offsets is None else encode_checkpoint(offsets)

    found = c.restart(committed, read, lambda table, p: (table, p) in empty)
    return found.offsets, found.behind, found.unchecked


def test_tables_with_everything_restart_at_the_commit() -> None:
    committed = {("pc", 0): 10}
    offsets, behind, unchecked = restart(
        checkpoints(), committed, {("ratings", 0): {"pc": 10}, ("pending", 0): {"pc": 12}}
    )
    assert offsets == committed and behind == [] and unchecked == []


def test_a_table_restored_short_restarts_its_agents_inputs_at_its_checkpoint() -> None:
    committed = {("started", 0): 5, ("finished", 0): 5, ("mc", 0): 40, ("pc", 0): 10}
    offsets, behind, _ = restart(
        checkpoints(),
        committed,
        {
            ("matches", 0): {"started": 5, "finished": 5, "mc": 40},
            ("clocks", 0): {"started": 3, "finished": 5, "mc": 31},
            ("ratings", 0): {"pc": 10},
            ("pending", 0): {"pc": 10},
        },
    )
    assert offsets == {("started", 0): 3, ("finished", 0): 5, ("mc", 0): 31, ("pc", 0): 10}
    assert [b.describe() for b in behind] == [
        "table clocks[0] holds started[0] up to offset 3, committed at 5",
        "table clocks[0] holds mc[0] up to offset 31, committed at 40",
    ]


def test_a_table_that_came_back_empty_restarts_from_the_start() -> None:
    committed = {("pc", 0): 10, ("pc", 1): 10}
    offsets, behind, unchecked = restart(
        checkpoints(),
        committed,
        {("ratings", 0): {"pc": 10}, ("ratings", 1): None, ("pending", 1): None},
        # Partition 0: pending lost its whole changelog beside a ratings table that has it.
        # Partition 1: both empty, while the inputs are committed: lost alike.
        empty=frozenset({("pending", 0), ("ratings", 1), ("pending", 1)}),
    )
    assert offsets == {("pc", 0): 0, ("pc", 1): 0}
    assert {(b.table, b.partition, b.checkpoint) for b in behind} == {
        ("pending", 0, None),
        ("ratings", 1, None),
        ("pending", 1, None),
    }
    assert unchecked == []


def test_tables_written_before_checkpoints_are_trusted_and_reported() -> None:
    committed = {("pc", 0): 10}
    offsets, behind, unchecked = restart(checkpoints(), committed, {})
    assert offsets == committed and behind == []
    assert unchecked == [("ratings", 0), ("pending", 0)]


def test_inputs_never_committed_need_no_checkpoint() -> None:
    committed = {("pc", 0): 0}
    offsets, behind, unchecked = restart(
        checkpoints(), committed, {}, frozenset({("ratings", 0), ("pending", 0)})
    )
    assert offsets == committed and behind == [] and unchecked == []


# A table partition's life: flushes, each committing the next offsets (or none: a flush before
# a revocation), and the flush its changelog comes back at.
FLUSHES = st.lists(st.tuples(st.integers(0, 5), st.booleans()), min_size=1, max_size=12)


@given(FLUSHES, st.data())
def test_a_restart_never_starts_above_what_a_restored_table_holds(
    flushes: list[tuple[int, bool]], data: st.DataObject
) -> None:
    """Whatever flushes a table saw and whichever flush its changelog comes back at, the input
    restarts at or below the offset the restored state holds everything up to."""
    c = checkpoints()
    c.started({("pc", 0): 0})
    read = 0  # what the state holds everything below
    changelog: list[tuple[int, dict[str, int] | None]] = []  # (state's read, checkpoint)
    committed = 0
    for moved, commits in flushes:
        read += moved
        chosen = {("pc", 0): read} if commits else None
        marks = c.records(chosen, written=[("ratings", 0)])
        mark = marks.get("ratings", {}).get(0)
        changelog.append((read, None if mark is None else decode_checkpoint(mark)))
        c.wrote(chosen)
        if commits:
            committed = read
    back = data.draw(st.integers(0, len(changelog)))
    restored = changelog[:back]
    last = next((cp for _, cp in reversed(restored) if cp is not None), None)
    offsets, _, _ = restart(
        checkpoints(),
        {("pc", 0): committed},
        {("ratings", 0): last, ("pending", 0): last},
        frozenset() if restored else frozenset({("ratings", 0), ("pending", 0)}),
    )
    held = restored[-1][0] if restored else 0
    assert offsets[("pc", 0)] <= held
