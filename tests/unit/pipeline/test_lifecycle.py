"""stream/pipeline/lifecycle.py: a match entry's life as transitions, each read here alone: what
a start, a finish, a snapshot and an abandon request make of the entry, and what they ask the
match side to do. The whole lifecycle, applied, runs in test_processors.py."""

from __future__ import annotations

import copy

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from stream.deadletters import Origin
from stream.events import DEFAULT_LIMITS, MatchFinished, MatchStarted
from stream.pipeline import lifecycle
from stream.pipeline.lifecycle import Effects, Wait
from stream.pipeline.matchentry import early_entry
from stream.protocol import Abandon, MatchEntry, Snapshot, StoredMessage
from stream.ratings.skill import PlayerState

T0 = 1_780_000_000.0
TEAMS = (("a",), ("b",))
STATE = PlayerState(1500.0, 200.0, 0.06)
# The finish as it was read: its bytes are what a waiting finish is decoded from again.
FINISH = {"match_id": "m-1", "mode": "1v1", "finished_at": int((T0 + 100) * 1000)}
MESSAGE = StoredMessage(
    b"m-1",
    orjson.dumps({**FINISH, "teams": [["a"], ["b"]], "ranks": [0, 1]}),
    Origin("match-finished", 0, 9, 123),
)


def started(teams: tuple[tuple[str, ...], ...] = TEAMS) -> MatchStarted:
    return MatchStarted("m-1", "1v1", T0, teams)


def finished(teams: tuple[tuple[str, ...], ...] | None = TEAMS, mode: str = "1v1") -> MatchFinished:
    return MatchFinished("m-1", mode, T0 + 100, teams, (0, 1), frozenset(), None)


def test_a_start_creates_the_entry_and_joins_its_players() -> None:
    entry, effects = lifecycle.start(None, started(), "1v1", DEFAULT_LIMITS)
    assert entry is not None and (entry.teams, entry.start) == ([["a"], ["b"]], T0)
    assert effects == Effects(join=True, advance=True)
    again, duplicate = lifecycle.start(entry, started(), "1v1", DEFAULT_LIMITS)
    assert again is entry and duplicate == Effects(count="duplicate_starts")


def test_a_start_keeps_the_early_commands_of_its_players_and_releases_the_others() -> None:
    early = early_entry(T0)
    early.snaps = {"a": STATE, "x": STATE}
    entry, effects = lifecycle.start(early, started(), "1v1", DEFAULT_LIMITS)
    assert entry is not None and entry.snaps == {"a": STATE}
    assert effects.release is not None and effects.release.snaps == {"x": STATE}
    assert effects.join and effects.advance


def test_a_finish_without_its_start_waits_for_it() -> None:
    entry, effects = lifecycle.finish(
        None, finished(), "1v1", MESSAGE, grace_seconds=60.0, now=T0 + 500
    )
    assert entry is not None and entry.wait is not None and entry.finish is not None
    # Event time is past the finish already: it waits from now (its start may be as late).
    assert effects == Effects(wait=Wait(T0 + 500.001, unjoined=True))
    _, alone = lifecycle.finish(None, finished(None), "1v1", MESSAGE, grace_seconds=60.0, now=None)
    assert alone == Effects(wait=Wait(T0 + 160.0, unjoined=False))


def test_a_start_completes_a_waiting_finish_or_refuses_its_result() -> None:
    waiting, _ = lifecycle.finish(None, finished(), "1v1", MESSAGE, grace_seconds=60.0, now=None)
    entry, effects = lifecycle.start(waiting, started(), "1v1", DEFAULT_LIMITS)
    assert entry is not None and entry.finish is not None and entry.wait is None
    assert effects == Effects(join=True, advance=True)
    other, _ = lifecycle.finish(None, finished(), "1v1", MESSAGE, grace_seconds=60.0, now=None)
    entry, effects = lifecycle.start(other, started((("a",), ("c",))), "1v1", DEFAULT_LIMITS)
    assert entry is not None and entry.finish is None  # the result is refused, the match goes on
    assert effects.letter is not None
    assert effects.letter.reason == "match-finished: teams differ from the match-started line-up"
    assert effects.letter.value == MESSAGE.value and effects.join and effects.advance


def test_a_finish_is_checked_against_its_start() -> None:
    entry, _ = lifecycle.start(None, started(), "1v1", DEFAULT_LIMITS)
    _, wrong_mode = lifecycle.finish(
        entry, finished(mode="2v2"), "2v2", MESSAGE, grace_seconds=60.0, now=None
    )
    assert wrong_mode.letter is not None
    assert wrong_mode.letter.reason == (
        "match-finished: mode '2v2' differs from the match-started mode '1v1'"
    )
    entry, effects = lifecycle.finish(
        entry, finished(), "1v1", MESSAGE, grace_seconds=60.0, now=None
    )
    assert entry is not None and entry.finish is not None and effects == Effects(advance=True)
    _, again = lifecycle.finish(entry, finished(), "1v1", MESSAGE, grace_seconds=60.0, now=None)
    assert again == Effects(count="duplicate_finishes")


def test_snapshots_are_kept_once_and_late_ones_counted() -> None:
    entry, _ = lifecycle.start(None, started(), "1v1", DEFAULT_LIMITS)
    snap = Snapshot("m-1", "a", STATE, False, T0)
    entry, effects = lifecycle.snapshot(entry, snap, T0)
    assert entry is not None and entry.snaps == {"a": STATE} and effects.advance
    _, again = lifecycle.snapshot(entry, snap, T0)
    assert again == Effects()
    assert entry is not None
    entry.done = T0 + 100
    _, late = lifecycle.snapshot(entry, Snapshot("m-1", "b", STATE, False, T0), T0 + 200)
    assert late == Effects(count="late_snapshots")
    # Read before its start, while that start can still come: kept for it.
    early, kept = lifecycle.snapshot(None, Snapshot("m-2", "a", STATE, False, T0 + 50), T0)
    assert early is not None and early.start == T0 + 50 and kept.advance


def test_an_abandon_request_is_recorded_once_or_released() -> None:
    entry, _ = lifecycle.start(None, started(), "1v1", DEFAULT_LIMITS)
    request = Abandon("m-1", "a", T0 + 30)
    entry, effects = lifecycle.abandon_request(entry, request, T0)
    assert entry is not None and entry.abandons == {"a": T0 + 30} and effects.advance
    _, later = lifecycle.abandon_request(entry, Abandon("m-1", "a", T0 + 40), T0)
    assert later == Effects()  # the earlier abandonment stands
    _, gone = lifecycle.abandon_request(None, Abandon("m-9", "a", T0), T0 + 10)
    assert gone == Effects(release_player="a")


def test_a_player_who_has_the_match_read_before_its_start_is_kept_for_it() -> None:
    # A match partition reading its inputs again after a restore reads the answer to a join
    # before the start that sent it: the player has the match already (applied). Dropped, the
    # start read next would make an entry waiting for good on that player.
    applied = Snapshot("m-1", "a", STATE, True, T0)
    early, effects = lifecycle.snapshot(None, applied, T0 - 10)
    assert early is not None and early.settled == ["a"] and effects == Effects(advance=True)
    entry, _ = lifecycle.start(early, started(), "1v1", DEFAULT_LIMITS)
    assert entry is not None and entry.settled == ["a"] and entry.snaps == {"a": STATE}
    # Once event time is past its start, or from a worker that sent no start, it is late.
    assert lifecycle.snapshot(None, applied, T0 + 1)[0] is None
    assert lifecycle.snapshot(None, Snapshot("m-1", "a", STATE, True), T0 - 10)[0] is None


# Any input of a match, as a transition takes it (snapshots and abandon requests of the line-up's
# players and of one outside it, applied or not, finishes with or without a line-up).
INPUTS = st.one_of(
    st.builds(lambda: ("start",)),
    st.builds(lambda teams: ("finish", teams), st.sampled_from([TEAMS, None])),
    st.builds(
        lambda pid, applied, dt: ("snapshot", Snapshot("m-1", pid, STATE, applied, T0 + dt)),
        st.sampled_from(["a", "b", "x"]),
        st.booleans(),
        st.sampled_from([0.0, 5.0]),
    ),
    st.builds(
        lambda pid, dt: ("abandon", Abandon("m-1", pid, T0 + dt)),
        st.sampled_from(["a", "b", "x"]),
        st.sampled_from([10.0, 30.0, 200.0]),
    ),
)


@settings(max_examples=300)
@given(st.lists(INPUTS, max_size=10), st.sampled_from([None, T0, T0 + 150.0]))
def test_no_transition_changes_the_entry_it_is_given(
    inputs: list[tuple[object, ...]], now: float | None
) -> None:
    # stream/pipeline/decision.py composes these as pure functions: a transition that changes
    # the match returns a new entry, so a caller's copy (a table's, a test's) stays as it was.
    entry: MatchEntry | None = None
    for item in inputs:
        given = copy.deepcopy(entry)
        match item:
            case ("start",):
                after, _ = lifecycle.start(entry, started(), "1v1", DEFAULT_LIMITS)
            case ("finish", teams):
                assert teams is None or isinstance(teams, tuple)
                after, _ = lifecycle.finish(
                    entry, finished(teams), "1v1", MESSAGE, grace_seconds=60.0, now=now
                )
            case ("snapshot", Snapshot() as snap):
                after, _ = lifecycle.snapshot(entry, snap, now)
            case ("abandon", Abandon() as request):
                after, _ = lifecycle.abandon_request(entry, request, now)
            case _:
                raise AssertionError(item)
        assert entry == given
        entry = after
