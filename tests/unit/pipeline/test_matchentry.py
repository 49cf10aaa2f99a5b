"""stream/pipeline/matchentry.py: what event time makes of an entry (``due``), a finish that
stands in for its start, and commands read before a start, split between the line-up and the
rest. Pure functions on entries; the whole lifecycle runs in test_processors.py."""

from __future__ import annotations

from stream.config.modes import PendingConfig
from stream.deadletters import Origin
from stream.pipeline.matchentry import (
    Due,
    due,
    early_entry,
    missing,
    new_entry,
    next_deadline,
    split_early,
    stand_in,
)
from stream.protocol import Finish, MatchEntry, StoredMessage, Waiting
from stream.ratings.skill import PlayerState

T0 = 1_780_000_000.0
POLICY = PendingConfig(grace_seconds=60.0, timeout_seconds=600.0)
RETENTION = 3600.0
STATE = PlayerState(1500.0, 200.0, 0.06)


def running() -> MatchEntry:
    return new_entry("1v1", (("a",), ("b",)), T0)


def waiting_finish(until: float) -> MatchEntry:
    entry = new_entry("1v1", None, None)
    entry.finish = Finish(T0 + 100, None, [0, 1], [], None)
    entry.wait = Waiting(StoredMessage(b"m", b"{}", Origin("match-finished", 0, 3)), until)
    return entry


def test_nothing_is_decided_before_event_time_is_known() -> None:
    for entry in (running(), waiting_finish(T0), early_entry(T0)):
        assert due(entry, None, POLICY, RETENTION) in (Due.KEEP, Due.SETTLE)
    assert due(waiting_finish(T0), None, POLICY, RETENTION) is Due.KEEP


def test_a_running_match_is_for_the_verdicts_to_settle() -> None:
    assert due(running(), T0 + 1, POLICY, RETENTION) is Due.SETTLE
    assert next_deadline(running(), POLICY, RETENTION) == T0 + 600.0  # its timeout


def test_a_settled_match_is_kept_for_its_retention_then_forgotten() -> None:
    entry = running()
    entry.done = T0 + 100
    assert due(entry, T0 + 100 + RETENTION - 1, None, RETENTION) is Due.KEEP
    assert due(entry, T0 + 100 + RETENTION, None, RETENTION) is Due.FORGET


def test_commands_before_a_start_are_given_up_once_it_cannot_come() -> None:
    entry = early_entry(T0 + 30)
    assert due(entry, T0 + 30, None, RETENTION) is Due.KEEP
    assert due(entry, T0 + 30.001, None, RETENTION) is Due.GIVE_UP
    anonymous = early_entry(None)  # an abandon request only: its newer start bounds it
    anonymous.abandons["a"] = T0 + 10
    assert due(anonymous, T0 + 10.001, None, RETENTION) is Due.GIVE_UP


def test_a_finish_waits_for_its_start_until_its_wait_is_over() -> None:
    assert due(waiting_finish(T0 + 200), T0 + 199, None, RETENTION) is Due.KEEP
    assert due(waiting_finish(T0 + 200), T0 + 200, None, RETENTION) is Due.NO_START


def test_a_finish_line_up_stands_in_for_the_start_it_dates_at_the_finish() -> None:
    waiting = waiting_finish(T0 + 200)
    entry, problem = stand_in(waiting, (("a", "c"), ("b",)))
    assert problem is None
    assert (entry.teams, entry.start, entry.wait) == ([["a", "c"], ["b"]], T0 + 100, None)
    assert waiting == waiting_finish(T0 + 200)  # the entry given is not changed
    assert due(entry, T0 + 300, POLICY, RETENTION) is Due.SETTLE
    three = waiting_finish(T0 + 200)
    assert stand_in(three, (("a",), ("b",), ("c",)))[1] == (
        "ranks: expected one rank per team (3), got 2"
    )


def test_early_commands_split_between_the_line_up_and_the_rest() -> None:
    early = early_entry(T0)
    early.snaps = {"a": STATE, "x": None}
    early.abandons = {"b": T0 + 5, "y": T0 + 6}
    early.settled = ["a", "x"]
    mine, rest = split_early(early, {"a", "b"})
    assert (mine.snaps, mine.abandons, mine.settled) == ({"a": STATE}, {"b": T0 + 5}, ["a"])
    assert (rest.snaps, rest.abandons) == ({"x": None}, {"y": T0 + 6})
    entry = new_entry("1v1", (("a",), ("b",)), T0, mine)
    assert (entry.snaps, entry.abandons, entry.settled) == ({"a": STATE}, {"b": T0 + 5}, ["a"])
    assert early.snaps == {"a": STATE, "x": None}  # the early entry itself is left as it was


def test_a_late_start_waits_first_for_the_positions_not_yet_said() -> None:
    entry = MatchEntry("1v1", [["a"], ["b", "c"]], 100.0, late=True, positions={"b": 120.0})
    assert missing(entry) == "the positions of a, c (a start read late)"
    entry.positions.update(a=100.0, c=100.0)
    entry.order = 120.0
    assert missing(entry) == "the snapshots of a, b, c"
