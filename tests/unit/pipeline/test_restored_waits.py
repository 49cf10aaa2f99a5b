"""Every wait has a sender after any restore (docs/guarantees.md, "Every wait has a sender"):
a match restored waiting for snapshots asks again, a snapshot reaching a settled or forgotten
match gets its player's verdict again or a release, an abandon request goes out again, a
player whose rating record came back behind their pending record waits for it, and a match
every player says they have waits for its result read again before it is done.

On the processors wired in memory (harness.py); the crash simulator (tests/unit/crashsim)
drives the same code through whole schedules of crashes and short changelogs."""

from __future__ import annotations

import dataclasses
from typing import Any

import orjson
import pytest
from builders import T0, finish, start
from harness import FINISHED, MATCH_COMMANDS, PLAYER_COMMANDS, STARTED, Cluster, a_starts_two

from stream.config.modes import Modes
from stream.pipeline.outbox import Outbox
from stream.pipeline.partitioning import partition_for
from stream.pipeline.playerpartition import PlayerContext
from stream.pipeline.players import PlayerProcessor
from stream.protocol import (
    MATCHES,
    PENDING,
    RATINGS,
    PendingMatch,
    PendingRecord,
    Rate,
    RatedPlayer,
    Snapshot,
    Watermark,
    encode_command,
    rating_key,
)

pytestmark = pytest.mark.usefixtures("batched")


def commands(c: Cluster, topic: str, kind: str, match_id: str) -> list[list[Any]]:
    """Every ``kind`` command for ``match_id`` sent on ``topic`` so far."""
    found: list[list[Any]] = []
    for (name, _), log in c.logs.items():
        if name == topic:
            for value in log:
                found.extend(
                    cmd for cmd in orjson.loads(value) if cmd[0] == kind and cmd[1] == match_id
                )
    return found


def restart(c: Cluster) -> None:
    """Every partition's memory rebuilt from the tables at its next batch, as after a restore
    (the tables and logs as they are)."""
    c.runner.forget(range(c.partitions))


def test_a_match_restored_waiting_for_snapshots_asks_for_them_again() -> None:
    c = Cluster()
    for p in range(c.partitions):
        c.hold(PLAYER_COMMANDS, p)  # the player side has not read its joins
    c.send(STARTED, start("m1", [["a"], ["b"]], T0))
    c.run()
    assert len(commands(c, PLAYER_COMMANDS, "join", "m1")) == 2
    restart(c)
    c.run()
    # The restored match's first batch sends both joins again: whatever answered the first
    # ones may be gone with a table restored behind them.
    assert len(commands(c, PLAYER_COMMANDS, "join", "m1")) == 4
    assert c.counts["joins_asked_again"] == 1
    for p in range(c.partitions):
        c.release(PLAYER_COMMANDS, p)
    c.send(FINISHED, finish("m1", [0, 1], T0 + 60))
    c.run()
    assert sorted(c.outcomes().values()) == ["loss", "win"]  # each rated once


def test_a_snapshot_reaching_a_settled_match_gets_the_players_verdict_again() -> None:
    c = Cluster()
    c.send(STARTED, start("m1", [["a"], ["b"]], T0))
    c.send(FINISHED, finish("m1", [0, 1], T0 + 60))
    c.run()
    rated = list(c.ratings)
    assert len(rated) == 2
    # A player partition restored behind the rate still waits: it sends its snapshot again.
    snapshot = Snapshot("m1", "a", None, False, T0)
    c.send(MATCH_COMMANDS, orjson.dumps([encode_command(snapshot)]), partition_for("m1", 4))
    c.run()
    rates = commands(c, PLAYER_COMMANDS, "rate", "m1")
    naming_a = [r for r in rates if any(player[0] == "a" for player in r[8])]
    assert len(naming_a) == 2  # the first, and a's alone again
    assert [player[0] for player in naming_a[-1][8]] == ["a"]
    assert c.counts["resent_verdicts"] == 1
    # The player side has it: skipped, nothing published twice.
    assert c.counts["duplicate_results"] == 1
    assert c.ratings == rated


def test_a_snapshot_for_a_match_that_is_gone_releases_its_player() -> None:
    c = Cluster()
    c.send(STARTED, start("m0", [["z"], ["y"]], T0 + 3600))  # event time moves past the ghost
    c.send(FINISHED, finish("m0", [0, 1], T0 + 3660))
    c.run()
    # z's pending record names a match no partition has (a match table restored without it).
    ghost = PendingRecord({"ghost": PendingMatch("1v1", T0, partition_for("ghost", 4))})
    c.pending_table[PENDING.key_bytes("z")] = PENDING.value_bytes(ghost)
    restart(c)
    c.run()
    assert commands(c, MATCH_COMMANDS, "snap", "ghost")  # z asked for it
    assert commands(c, PLAYER_COMMANDS, "cancel", "ghost") == [["cancel", "ghost", ["z"]]]
    assert c.pending("z") == {}


def test_an_abandon_request_goes_out_again_after_a_restore() -> None:
    c = a_starts_two(30.0)  # a starts a newer match
    c.run()
    assert len(commands(c, MATCH_COMMANDS, "abandon", "m1")) == 1
    restart(c)
    c.run()
    # Kept in memory only, like the snapshots: sent again once; the match side keeps the first.
    assert len(commands(c, MATCH_COMMANDS, "abandon", "m1")) == 2
    c.send(FINISHED, finish("m1", [0, 1], T0 + 60))
    c.send(FINISHED, finish("m2", [0, 1], T0 + 90))
    c.run()
    assert c.outcomes() == {
        ("a", "m1"): "win",
        ("b", "m1"): "loss",
        ("a", "m2"): "win",
        ("c", "m2"): "loss",
    }


def test_a_rating_record_behind_the_pending_record_is_waited_for_not_rated_from() -> None:
    c = a_starts_two(120.0)
    c.send(FINISHED, finish("m1", [0, 1], T0 + 60))
    c.run()
    key = RATINGS.key_bytes(rating_key("a", "1v1"))
    after_m1 = c.rating_table[key]
    assert RATINGS.value(after_m1).version == 1
    assert PENDING.value(c.pending_table[PENDING.key_bytes("a")]).seen == {"1v1": 1}
    # The ratings table comes back without m1's result; the pending table with it settled.
    del c.rating_table[key]
    restart(c)
    c.run()
    assert c.counts["ratings_behind_pending"] == 1
    a_snaps = [s for s in commands(c, MATCH_COMMANDS, "snap", "m2") if s[2] == "a"]
    assert len(a_snaps) == 1  # the one before: none from the record without m1
    # The result read again (a redo from the rating table's checkpoint) brings it back.
    c.reread({(PLAYER_COMMANDS, partition_for("a", 4)): 0})
    c.send(FINISHED, finish("m2", [0, 1], T0 + 180))
    c.run()
    assert RATINGS.value(c.rating_table[key]).state.games == 2
    m2 = [r for r in c.ratings if r["match_id"] == "m2" and r["player_id"] == "a"]
    assert len({orjson.dumps(r) for r in m2}) == 1 and m2[0]["games"] == 2


def test_a_match_every_player_says_they_have_waits_for_its_result_read_again() -> None:
    """After a restore the start is read again before the finish; the players answer the joins
    that they have the match. Its evidence about the learned population still needs the result:
    the match stays open (not done) until the result is read, and computes it then."""
    c = Cluster()
    c.send(STARTED, start("m1", [["a"], ["b"]], T0))
    c.send(FINISHED, finish("m1", [0, 1], T0 + 60))
    c.run()
    home = partition_for("m1", 4)
    key = MATCHES.key_bytes("m1")
    assert MATCHES.value(c.match_table[key]).evidence is not None  # learning: evidence held
    # The match table comes back from before the start; the finish is read again last.
    del c.match_table[key]
    c.hold(FINISHED, home)
    c.reread({(STARTED, home): 0})
    c.run()
    entry = MATCHES.value(c.match_table[key])
    assert sorted(entry.settled) == ["a", "b"] and entry.finish is None
    assert entry.done is None  # held open for its result
    c.release(FINISHED, home)
    c.reread({(FINISHED, home): 0})
    c.run()
    entry = MATCHES.value(c.match_table[key])
    assert entry.done is not None and entry.evidence is not None
    assert len(c.outcomes()) == 2  # nobody rated twice


def test_an_older_result_read_again_does_not_hide_a_later_one_the_rating_record_lacks() -> None:
    """The pending table came back after m1 was settled (cancelled: ``done``; the rating it
    got counted in ``seen``), the ratings table from before m0: m0's result read again must
    not lower ``seen``, or m2's snapshot would go out from a record without m1 (found by the
    crash simulator, seed 3682, on a branch whose batches a kill cuts at other points)."""
    players = PlayerProcessor(Modes(), partitions=1)
    partition = players.restore(0, [])
    record = PendingRecord(
        {"m0": PendingMatch("1v1", T0, 0), "m2": PendingMatch("1v1", T0 + 200, 0)},
        done=["m1"],
        seen={"1v1": 2},
    )
    pending = {PENDING.key_bytes("a"): PENDING.value_bytes(record)}
    out = Outbox()
    ctx = PlayerContext.of(partition, {}, pending, out, 1.0)
    rate = Rate("m0", "1v1", T0 + 60, [["a"], ["b"]], [0, 1], None, {"a": None, "b": None}, [])
    players.on_command(ctx, dataclasses.replace(rate, players=[RatedPlayer("a", None, None)]))
    players.on_command(ctx, Watermark(0, T0 + 300))  # past m2's start
    after = ctx.pending.get("a")
    assert after is not None and after.seen == {"1v1": 2} and list(after.matches) == ["m2"]
    assert [c for cs in out.match_commands.values() for c in cs if isinstance(c, Snapshot)] == []
    assert out.counts["ratings_behind_pending"] == 1
