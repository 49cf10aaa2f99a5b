"""stream/pipeline/repeats.py, and the batch runner counting commands sent again and again:
counted, still sent (a receiver may need a copy again), and nothing changes for them."""

from __future__ import annotations

import builders
from harness import FINISHED, MATCH_COMMANDS, PLAYER_COMMANDS, STARTED, T0, Cluster

from stream.pipeline.repeats import RepeatedCommands


def test_a_command_delivered_limit_times_is_a_repeat_from_then_on() -> None:
    repeats = RepeatedCommands(limit=2)
    assert not repeats.repeated(0, b"x")
    repeats.delivered([(0, b"x")])
    assert not repeats.repeated(0, b"x")
    repeats.delivered([(0, b"x")])
    assert repeats.repeated(0, b"x")
    # The same bytes to another partition, or other bytes, are other commands.
    assert not repeats.repeated(1, b"x") and not repeats.repeated(0, b"y")


def test_a_revocation_starts_the_counts_afresh() -> None:
    repeats = RepeatedCommands(limit=1)
    repeats.delivered([(0, b"x")])
    assert repeats.repeated(0, b"x")
    repeats.clear()
    assert not repeats.repeated(0, b"x")


def test_only_the_last_distinct_commands_are_remembered() -> None:
    repeats = RepeatedCommands(limit=1, capacity=2)
    repeats.delivered([(0, b"a"), (0, b"b"), (0, b"c")])
    assert not repeats.repeated(0, b"a") and repeats.repeated(0, b"c")


def test_a_partition_read_again_and_again_is_counted_and_changes_nothing() -> None:
    c = Cluster(partitions=1)
    c.send(STARTED, builders.start("m1", [["a"], ["b"]], T0))
    c.run()
    before = dict(c.match_table)
    # The player commands read again and again within one generation (a failed batch each
    # time: the partitions' memory rebuilt from the tables, no rebalance): each reading answers
    # the joins of the running match once more with the same snapshots. Past 3 deliveries each
    # is counted, and still sent: the receiver may have forgotten what it read (a settled
    # match's entry after the retention, crash simulator seed 2664). (The event-time
    # protocol's own commands are never counted: the same promise again changes nothing,
    # stream/pipeline/packing.py.)
    answers = [snapshots(c)]
    for _ in range(5):
        c.runner.forget([0])
        c.positions.sought({(PLAYER_COMMANDS, 0): 0})
        c.seek(PLAYER_COMMANDS, 0, 0)
        c.run()
        answers.append(snapshots(c))
    assert c.match_table == before
    assert answers == [2, 4, 6, 8, 10, 12]  # each reading answered both joins again
    counted = c.counts["repeated_commands"]
    assert counted == 6  # the fourth to sixth copies of each
    # A rebalance starts the counts afresh: the reading after it is not counted.
    c.reread({(PLAYER_COMMANDS, 0): 0})
    c.run()
    assert c.counts["repeated_commands"] == counted
    assert c.match_table == before
    c.send(FINISHED, builders.finish("m1", [0, 1], T0 + 60))
    c.run()
    assert c.outcomes() == {("a", "m1"): "win", ("b", "m1"): "loss"}


def test_a_match_made_anew_after_its_retention_settles_on_answers_sent_many_times() -> None:
    # The crash simulator's seed 2664: the answers a match made anew needs are byte for byte
    # those its players sent before, to the entries the earlier copies made.
    c = Cluster(partitions=1)
    c.send(STARTED, builders.start("m1", [["a"], ["b"]], T0))
    c.send(FINISHED, builders.finish("m1", [0, 1], T0 + 60))
    c.run()
    rated = len(c.ratings)
    for copy in range(1, 6):
        # Event time passes the match's retention (600 s here) and its learning window (6 h):
        # its entry is forgotten.
        at = T0 + 30_000 * copy
        c.send(STARTED, builders.start(f"x{copy}", [["c"], ["d"]], at))
        c.send(FINISHED, builders.finish(f"x{copy}", [0, 1], at + 60))
        c.run()
        assert b'"m1"' not in c.match_table
        # A copy of its start read now (the fleet's duplicate, or an older worker life's
        # forward still in the log) makes it anew; its players' answers, "I have this match"
        # in the same bytes each time, settle it as a duplicate.
        c.send(STARTED, builders.start("m1", [["a"], ["b"]], T0))
        c.run()
        assert c.open_matches() == [], f"copy {copy}"
    assert c.counts["repeated_commands"] >= 8  # the 4th and 5th joins and answers, at least
    assert len(c.ratings) == rated + 2 * 5  # the x matches', nothing of m1's again
    assert c.pending("a") == {} and c.pending("b") == {}


def snapshots(c: Cluster) -> int:
    """Snapshots sent to the match side so far."""
    return sum(value.count(b'["snap"') for value in c.logs.get((MATCH_COMMANDS, 0), []))
