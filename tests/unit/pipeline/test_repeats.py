"""stream/pipeline/repeats.py, and the batch runner holding back commands sent again and again:
counted, never sent once more, and nothing changes for it."""

from __future__ import annotations

import builders
from harness import FINISHED, PLAYER_COMMANDS, STARTED, T0, Cluster

from stream.pipeline.repeats import RepeatedCommands


def test_a_command_delivered_limit_times_is_not_allowed_again() -> None:
    repeats = RepeatedCommands(limit=2)
    assert repeats.allows(0, b"x")
    repeats.delivered([(0, b"x")])
    assert repeats.allows(0, b"x")
    repeats.delivered([(0, b"x")])
    assert not repeats.allows(0, b"x")
    # The same bytes to another partition, or other bytes, are other commands.
    assert repeats.allows(1, b"x") and repeats.allows(0, b"y")


def test_a_revocation_starts_the_counts_afresh() -> None:
    # After a rebalance a receiver may rebuild its state from an earlier flush, where a copy
    # it dropped before counts again (the crash simulator's seed 2905).
    repeats = RepeatedCommands(limit=1)
    repeats.delivered([(0, b"x")])
    assert not repeats.allows(0, b"x")
    repeats.clear()
    assert repeats.allows(0, b"x")


def test_only_the_last_distinct_commands_are_remembered() -> None:
    repeats = RepeatedCommands(limit=1, capacity=2)
    repeats.delivered([(0, b"a"), (0, b"b"), (0, b"c")])
    assert repeats.allows(0, b"a") and not repeats.allows(0, b"c")


def test_a_partition_read_again_and_again_stops_repeating_itself_and_changes_nothing() -> None:
    c = Cluster(partitions=1)
    c.send(STARTED, builders.start("m1", [["a"], ["b"]], T0))
    c.run()
    before = dict(c.match_table)
    # The player commands read again and again within one generation (a failed batch each
    # time: the partitions' memory rebuilt from the tables, no rebalance): each reading answers
    # the joins of the running match once more with the same snapshots, until they have been
    # delivered 3 times. (The event-time protocol's own commands are never held back: the same
    # promise again changes nothing, stream/pipeline/packing.py.)
    for _ in range(5):
        c.runner.forget([0])
        c.positions.sought({(PLAYER_COMMANDS, 0): 0})
        c.seek(PLAYER_COMMANDS, 0, 0)
        c.run()
    assert c.match_table == before
    held = c.counts["repeated_commands"]
    assert held > 0
    # A rebalance starts the counts afresh: the reading after it answers once more.
    c.reread({(PLAYER_COMMANDS, 0): 0})
    c.run()
    assert c.counts["repeated_commands"] == held
    assert c.match_table == before
    c.send(FINISHED, builders.finish("m1", [0, 1], T0 + 60))
    c.run()
    assert c.outcomes() == {("a", "m1"): "win", ("b", "m1"): "loss"}
