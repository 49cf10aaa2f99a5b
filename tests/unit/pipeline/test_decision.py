"""stream/pipeline/decision.py: the match decision as data. A match's life walked through the
decider alone: the joins and the timeout when it starts, the ``rate`` commands once both
snapshots and the result are in (and only then), its retention, a finish that waits for its
start, and a start that never comes; and, over every input of that walk, the entry given is
never changed."""

from __future__ import annotations

import copy
import dataclasses

import orjson
from test_lifecycle import FINISH, MESSAGE, STATE, T0

from stream.config.modes import parse_modes
from stream.events import DEFAULT_LIMITS, MatchFinished, MatchStarted
from stream.pipeline.decision import (
    Deadline,
    Decider,
    Decision,
    Letter,
    RunDue,
    Unjoined,
    Watch,
    Write,
)
from stream.pipeline.learnedpopulation import Populations
from stream.pipeline.partitioning import partition_for
from stream.pipeline.verdicts import Clock, Count, Send, Unfold
from stream.protocol import (
    Cancel,
    Join,
    MatchEntry,
    Ordered,
    PopulationRecord,
    Position,
    Rate,
    Snapshot,
    StoredMessage,
)

PARTITIONS = 4
RETENTION = 3600.0
# Fixed populations (a learning mode waits for its window's: test_a_learning_mode_waits_...).
MODES = parse_modes({"default": {"population": {"window_days": 0.0}}})
HOME = partition_for("m-1", PARTITIONS)


def decider() -> Decider:
    return Decider(MODES, PARTITIONS, Populations(MODES, PARTITIONS), DEFAULT_LIMITS, RETENTION)


def clock(now: float | None) -> Clock:
    # Every player partition's abandon requests are out up to now, and no player partition
    # was told that every join is out beyond it (a start before it is late).
    return Clock(now, now, PopulationRecord(), HOME, now)


def started() -> MatchStarted:
    return MatchStarted("m-1", "1v1", T0, (("a",), ("b",)))


def finished(teams: tuple[tuple[str, ...], ...] | None = (("a",), ("b",))) -> MatchFinished:
    return MatchFinished("m-1", "1v1", T0 + 100, teams, (0, 1), frozenset(), None)


def snap(player: str) -> Snapshot:
    return Snapshot("m-1", player, STATE, False, T0)


def sent(decision: Decision) -> list[object]:
    return [e.command for e in decision.effects if isinstance(e, Send)]


def unchanged(before: MatchEntry | None, decide: Decision, given: MatchEntry | None) -> MatchEntry:
    assert given == before, "the decision changed the entry it was given"
    assert decide.entry is not None
    return decide.entry


def test_a_match_walked_through_the_decider() -> None:
    d = decider()
    timeout = T0 + MODES.pending("1v1").timeout_seconds
    first = d.start(None, started(), "1v1", clock(T0))
    assert first.write is Write.PUT
    assert sent(first) == [Join("m-1", p, "1v1", T0, HOME) for p in ("a", "b")]
    assert Deadline(timeout) in first.effects and Watch(None) in first.effects
    entry = first.entry
    # One snapshot: nothing to rate yet.
    given = copy.deepcopy(entry)
    one = d.snapshot(entry, snap("a"), clock(T0 + 1))
    entry = unchanged(given, one, entry)
    assert sent(one) == [] and entry.snaps == {"a": STATE}
    given = copy.deepcopy(entry)
    two = d.snapshot(entry, snap("b"), clock(T0 + 2))
    entry = unchanged(given, two, entry)
    assert sent(two) == [] and entry.done is None
    # The result: each player rated from it, the match done, kept for its retention.
    given = copy.deepcopy(entry)
    result = d.finish(entry, finished(), "1v1", MESSAGE, clock(T0 + 101))
    entry = unchanged(given, result, entry)
    rates = [c for c in sent(result) if isinstance(c, Rate)]
    assert sorted(p.player_id for c in rates for p in c.players) == ["a", "b"]
    assert all(c.at == T0 + 100 and c.ranks == [0, 1] for c in rates)
    assert entry.done == T0 + 101 and entry.settled == ["a", "b"]
    assert Deadline(T0 + 101 + RETENTION) in result.effects
    # Read again (a redelivery): nothing twice.
    again = d.finish(entry, finished(), "1v1", MESSAGE, clock(T0 + 102))
    assert again.write is Write.NONE and again.effects == [Count("duplicate_finishes")]
    # Past its retention it is forgotten.
    gone = d.advance("m-1", entry, clock(T0 + 101 + RETENTION))
    assert (gone.entry, gone.write) == (None, Write.DELETE)


def test_a_finish_first_waits_for_its_start_then_stands_in_for_it() -> None:
    d = decider()
    waiting = d.finish(None, finished(), "1v1", MESSAGE, clock(T0 + 50))
    assert waiting.write is Write.PUT and waiting.entry is not None
    until = T0 + 100.001
    assert waiting.effects == [Unjoined(T0 + 100), Deadline(until), RunDue()]
    # No start by then: the finish's line-up stands in, the players are joined.
    given = copy.deepcopy(waiting.entry)
    stood = d.advance("m-1", waiting.entry, clock(until))
    entry = unchanged(given, stood, waiting.entry)
    assert entry.teams == [["a"], ["b"]] and entry.start == T0 + 100
    assert [c for c in sent(stood) if isinstance(c, Join)] == [
        Join("m-1", p, "1v1", T0 + 100, HOME) for p in ("a", "b")
    ]
    assert Count("finished_without_start") in stood.effects


def test_a_finish_without_a_line_up_or_a_start_is_dead_lettered() -> None:
    d = decider()
    without = StoredMessage(b"m-1", orjson.dumps({**FINISH, "ranks": [0, 1]}), MESSAGE.origin)
    alone = d.finish(None, finished(None), "1v1", without, clock(T0))
    assert alone.entry is not None
    wait = alone.entry.wait
    assert wait is not None
    done = d.advance("m-1", alone.entry, clock(wait.until))
    assert done.write is Write.DELETE
    [letter] = [e for e in done.effects if isinstance(e, Letter)]
    assert "no match-started arrived within the grace period" in letter.letter.reason


def test_a_timeout_cancels_nobody_and_rates_both_as_timed_out() -> None:
    d = decider()
    entry = d.start(None, started(), "1v1", clock(T0)).entry
    for player in ("a", "b"):
        assert entry is not None
        entry = d.snapshot(entry, snap(player), clock(T0 + 1)).entry
    assert entry is not None
    timeout = T0 + MODES.pending("1v1").timeout_seconds
    early = d.advance("m-1", entry, clock(timeout - 1))
    assert sent(early) == []
    late = d.advance("m-1", entry, clock(timeout))
    rates = [c for c in sent(late) if isinstance(c, Rate)]
    assert {p.label for c in rates for p in c.players} == {"timeout"}
    assert not any(isinstance(c, Cancel) for c in sent(late))
    assert late.entry is not None and late.entry.done == timeout


def test_a_learning_mode_waits_for_its_window_s_population() -> None:
    modes = parse_modes({"default": {"population": {"window_days": 1.0}}})
    d = Decider(modes, PARTITIONS, Populations(modes, PARTITIONS), DEFAULT_LIMITS, RETENTION)
    entry = d.start(None, started(), "1v1", clock(T0)).entry
    for player in ("a", "b"):
        assert entry is not None
        entry = d.snapshot(entry, snap(player), clock(T0 + 1)).entry
    held = d.finish(entry, finished(), "1v1", MESSAGE, clock(T0 + 101))
    assert sent(held) == []
    [unfold] = [e for e in held.effects if isinstance(e, Unfold)]
    assert unfold.until == Populations(modes, PARTITIONS).needs("1v1", T0)


def late_clock(now: float) -> Clock:
    """A partition that has told the player partitions every join is out up to ``now``."""
    return Clock(now, now, PopulationRecord(), HOME, now)


def test_a_late_start_is_ordered_by_its_players_latest_position() -> None:
    d = decider()
    first = d.start(None, started(), "1v1", late_clock(T0 + 50))
    entry = first.entry
    assert entry is not None and entry.late and entry.order is None
    assert sent(first) == [Join("m-1", p, "1v1", T0, HOME, None, True) for p in ("a", "b")]
    one = d.position(entry, Position("m-1", "a", T0 + 60), late_clock(T0 + 50))
    assert one.write is Write.PUT and sent(one) == [] and one.entry is not None
    both = d.position(one.entry, Position("m-1", "b", T0 + 40), late_clock(T0 + 50))
    assert both.entry is not None and both.entry.order == T0 + 60
    by_partition = {partition_for(p, PARTITIONS) for p in ("a", "b")}
    assert sorted(sent(both), key=lambda c: c.players) == sorted(  # type: ignore[attr-defined]
        (
            Ordered("m-1", T0 + 60, [p for p in ("a", "b") if partition_for(p, PARTITIONS) == n])
            for n in by_partition
        ),
        key=lambda c: c.players,
    )
    # Asked again (read again after a restore): the order, to that player alone.
    again = d.position(both.entry, Position("m-1", "b", T0 + 40), late_clock(T0 + 50))
    assert again.write is Write.NONE
    assert sent(again) == [Ordered("m-1", T0 + 60, ["b"])]


def test_a_start_on_time_is_not_asked_about() -> None:
    d = decider()
    first = d.start(None, started(), "1v1", late_clock(T0))
    assert first.entry is not None and not first.entry.late
    assert sent(first) == [Join("m-1", p, "1v1", T0, HOME) for p in ("a", "b")]


def test_a_position_for_a_start_taken_for_on_time_asks_every_player() -> None:
    """The entry was made again after its table came back behind the one that asked: one
    player's position says the start was late, so every player is asked again."""
    d = decider()
    entry = d.start(None, started(), "1v1", late_clock(T0)).entry
    assert entry is not None
    asked = d.position(entry, Position("m-1", "a", T0 + 60), late_clock(T0))
    assert asked.entry is not None and asked.entry.late and asked.entry.order is None
    assert sent(asked) == [Join("m-1", p, "1v1", T0, HOME, None, True) for p in ("a", "b")]


def test_a_position_nobody_asked_for_is_counted() -> None:
    d = decider()
    stray = d.position(None, Position("m-1", "a", T0), late_clock(T0))
    assert stray.write is Write.NONE and stray.effects == [Count("stray_positions")]
    entry = d.start(None, started(), "1v1", late_clock(T0 + 50)).entry
    assert entry is not None
    stranger = d.position(entry, Position("m-1", "zz", T0), late_clock(T0 + 50))
    assert stranger.effects == [Count("stray_positions")]


def test_snapshots_taken_before_a_later_order_are_dropped_and_one_for_it_counts() -> None:
    """a's snapshot went at once, taken for the start (its position); b had passed it, so the
    order is later: a's is dropped and a sends another for the order. A snapshot for the order
    settles the match; one taken for the start, read after the order, is refused."""
    d = decider()
    entry = d.start(None, started(), "1v1", late_clock(T0 + 50)).entry
    assert entry is not None
    entry = d.position(entry, Position("m-1", "a", T0), late_clock(T0 + 50)).entry
    assert entry is not None
    early = dataclasses.replace(snap("a"), turn=T0)
    held = d.snapshot(entry, early, late_clock(T0 + 50))
    assert held.entry is not None and "a" in held.entry.snaps
    ordered = d.position(held.entry, Position("m-1", "b", T0 + 40), late_clock(T0 + 50))
    assert ordered.entry is not None and ordered.entry.order == T0 + 40
    assert "a" not in ordered.entry.snaps
    stale = d.snapshot(ordered.entry, early, late_clock(T0 + 50))
    assert stale.effects == [Count("snapshots_before_their_turn")]
    entry = ordered.entry
    for player in ("a", "b"):
        taken = dataclasses.replace(snap(player), turn=T0 + 40)
        entry = d.snapshot(entry, taken, late_clock(T0 + 50)).entry
        assert entry is not None
    assert set(entry.snaps) == {"a", "b"}
