"""Event time decides, not arrival (docs/event-time.md): whatever order the partitions and the
two input topics are read in, every rating equals replay of the matches in the order they were
played. The harness holds partitions back to play a worker that has not got round to them."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import orjson
import pytest
from builders import T0
from harness import FINISHED, STARTED, Cluster, drain_in_order, epoch_ms
from hypothesis import given, settings
from hypothesis import strategies as st
from replay_1v1 import Match, as_history, live_states, replayed

from stream.config.modes import Modes
from stream.deadletters import Origin
from stream.offline.explaining import explained_changes
from stream.offline.replayer import Replayer, in_play_order
from stream.pipeline import watermarks
from stream.pipeline.eventtime import SETTLE_TICKS
from stream.pipeline.matches import MatchProcessor
from stream.pipeline.matchpartition import MatchContext
from stream.pipeline.outbox import Outbox
from stream.pipeline.partitioning import partition_for
from stream.pipeline.playerpartition import PlayerContext
from stream.pipeline.players import PlayerProcessor
from stream.protocol import MATCHES, Combined, PlayerReport, Report

# Every test with one message per runner call and with batches (tests/conftest.py, batched).
pytestmark = pytest.mark.usefixtures("batched")

PARTITIONS = 4
ORIGIN = Origin(FINISHED, 0, 0, 1_780_000_000_000)


def history(seed: int, matches: int = 24, players: int = 6, length: float = 60.0) -> list[Match]:
    """1v1 matches in which no player's matches overlap, some starting at the same instant."""
    rng = random.Random(seed)
    free_at = {f"p{i}": 0.0 for i in range(players)}
    out: list[Match] = []
    at = T0
    for i in range(matches):
        at += rng.choice([0.0, 5.0, 30.0])
        idle = sorted(p for p, free in free_at.items() if free < at)
        if len(idle) < 2:
            at = min(free_at.values()) + 1.0
            idle = sorted(p for p, free in free_at.items() if free < at)
        a, b = rng.sample(idle, 2)
        finish = at + length
        free_at[a] = free_at[b] = finish
        out.append((f"m{i:02d}", at, finish, [[a], [b]], rng.choice([[0, 1], [1, 0], [0, 0]])))
    return out


def send_all(c: Cluster, matches: list[Match]) -> None:
    """Every event, in the order the fleet published them (by event time)."""
    events: list[tuple[float, str, dict[str, Any]]] = []
    for match_id, start, finish, teams, ranks in matches:
        ids = {"match_id": match_id, "mode": "1v1"}
        events.append((start, STARTED, {**ids, "started_at": epoch_ms(start), "teams": teams}))
        events.append((finish, FINISHED, {**ids, "finished_at": epoch_ms(finish), "ranks": ranks}))
    for _, topic, event in sorted(events, key=lambda e: e[0]):
        c.send(topic, event)


def drained(matches: list[Match], seed: int, report_seconds: float | None = None) -> Cluster:
    """Every event of ``matches`` published in order, then read partition by partition in an
    order ``seed`` draws."""
    c = Cluster(partitions=PARTITIONS, report_seconds=report_seconds)
    send_all(c, matches)
    drain_in_order(c, seed)
    return c


def live(c: Cluster) -> dict[tuple[str, str], tuple[Any, ...]]:
    return live_states(c.ratings)


def tps() -> list[tuple[str, int]]:
    return [(topic, p) for topic in (STARTED, FINISHED) for p in range(PARTITIONS)]


# Progress reported on ticks only (None), or also at the end of every batch (0.0, the way a busy
# worker reports): either way a report is a promise the watermarks may rely on.
REPORTS = [None, 0.0]


def overlapping(seed: int, matches: int = 24, players: int = 6) -> list[Match]:
    """1v1 matches between players picked at random, busy or not, of 30 s to 5 min, a new one
    every 15 s: a player's matches overlap and many results come after an abandonment."""
    rng = random.Random(seed)
    out: list[Match] = []
    for i in range(matches):
        start = T0 + i * 15.0
        a, b = rng.sample([f"p{j}" for j in range(players)], 2)
        finish = start + rng.choice([30.0, 90.0, 300.0])
        out.append((f"m{i:02d}", start, finish, [[a], [b]], rng.choice([[0, 1], [1, 0], [0, 0]])))
    return out


@pytest.mark.parametrize("report_seconds", REPORTS)
@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("backlog", [history, overlapping], ids=["apart", "overlapping"])
def test_a_backlog_read_partition_by_partition_in_any_order_equals_replay(
    backlog: Callable[[int], list[Match]], seed: int, report_seconds: float | None
) -> None:
    """Whether a player's matches overlap or not: where they do, many results come after an
    abandonment, and are settled as replay settles them."""
    matches = backlog(seed)
    c = drained(matches, seed, report_seconds)
    if backlog is overlapping:
        assert "abandoned" in c.outcomes().values()
    assert live(c) == replayed(matches)


@pytest.mark.parametrize("seed", range(4))
def test_every_live_event_with_its_explanation_equals_replay_explain(seed: int) -> None:
    """Whole rating-changed events, ``why`` included: what the worker published for each
    player is what ``skillstream replay --in-play-order --explain PLAYER`` prints, byte for
    byte (a backlog read in a seeded order, so the worker's batches differ from replay's)."""
    matches = history(seed)
    c = drained(matches, seed)
    players = sorted({p for m in matches for team in m[3] for p in team})
    for player in players:
        published = sorted(
            (e for e in c.ratings if e["player_id"] == player), key=lambda e: e["version"]
        )
        replayer = Replayer(Modes())
        offline = list(
            explained_changes(in_play_order(as_history(matches), replayer), replayer, player)
        )
        assert [orjson.dumps(e) for e in published] == [orjson.dumps(e) for e in offline]
        assert all("why" in e for e in offline) and len(offline) > 0


@pytest.mark.parametrize("report_seconds", REPORTS)
@pytest.mark.parametrize("seed", range(8))
def test_finishes_without_starts_read_in_any_order_equal_replay(
    seed: int, report_seconds: float | None
) -> None:
    """A fleet that publishes only the finish, with the line-up: each match is rated once no
    start can come, and a player's matches in the order of their finishes, however the
    partitions are read (their joins are sent late, when event time passes the finish: the
    watermarks must not promise them earlier)."""
    matches = [(m, finish, finish, teams, ranks) for m, _, finish, teams, ranks in history(seed)]
    c = Cluster(partitions=PARTITIONS, report_seconds=report_seconds)
    for match_id, _, finish, teams, ranks in matches:
        c.send(
            FINISHED,
            {
                "match_id": match_id,
                "mode": "1v1",
                "finished_at": epoch_ms(finish),
                "teams": teams,
                "ranks": ranks,
            },
        )
    drain_in_order(c, seed)
    assert c.counts["finished_without_start"] == len(matches)
    assert live(c) == replayed(matches)


def test_a_restored_partition_still_holds_its_watermark_below_a_waiting_finish() -> None:
    """After a restart the match partition rebuilds, from its table, which finishes with a
    line-up still wait for event time (their joins are not out): its report names the
    earliest, and the combiner's watermark for the player partitions stays there, however far
    event time has gone."""
    matches = MatchProcessor(Modes(), partitions=1)
    wall = T0 + 500
    ctx = MatchContext.of(matches.restore(0, None, [], wall), {}, Outbox(), wall)
    for match_id, at, teams in [("m2", T0 + 20, [["c"], ["d"]]), ("m1", T0 + 10, None)]:
        event = {"match_id": match_id, "mode": "1v1", "finished_at": epoch_ms(at), "ranks": [0, 1]}
        if teams is not None:
            event["teams"] = teams
        matches.on_event(ctx, FINISHED, match_id.encode(), orjson.dumps(event), ORIGIN)
    table = {k: v for k, v in ctx.view.changes().items() if v is not None}
    entries = [(orjson.loads(k), MATCHES.value(v)) for k, v in table.items()]
    restored = matches.restore(0, None, entries, wall)
    # Only the finish with a line-up will send joins dated at its finish.
    assert restored.unjoined == [(T0 + 20, "m2")]
    assert restored.pending  # both finishes wait: event time must keep moving
    restored.latest = T0 + 100  # read on its inputs since
    restored.time.clock.observe(T0 + 100, wall)
    combiner = restored.combiner
    assert combiner is not None
    ((_, greeting),) = combiner.on_tick(wall).views  # it reads the combiner's greeting
    watermarks.on_view(restored, greeting, wall)
    out = Outbox()
    matches.report(
        MatchContext.of(restored, table, out, wall),
        started_caught_up=wall,
        finished_caught_up=wall,
    )
    (report,) = out.after[0]
    assert isinstance(report, Report)
    assert (report.started, report.unjoined, report.pending) == (T0 + 100, T0 + 20, True)
    combiner.on_report(report, wall)
    for n in range(SETTLE_TICKS):  # event time has stood there a while
        combiner.on_tick(wall + n * 0.1)
    assert combiner.now() == T0 + 100
    assert combiner.mark(wall + 1) == T0 + 20


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    held=st.lists(st.sampled_from(tps()), unique=True),
    steps=st.integers(0, 6),
    overlaps=st.booleans(),
    report_seconds=st.sampled_from(REPORTS),
)
def test_any_holding_pattern_of_partitions_gives_replay(
    seed: int,
    held: list[tuple[str, int]],
    steps: int,
    overlaps: bool,
    report_seconds: float | None,
) -> None:
    """Held partitions released in the drawn order after ``steps`` rounds of ticks of the
    others: replay, every (player, match) once, with or without overlapping matches."""
    matches = overlapping(seed, matches=12) if overlaps else history(seed, matches=12)
    c = Cluster(partitions=PARTITIONS, report_seconds=report_seconds)
    c.tick_rounds = steps
    for tp in held:
        c.hold(*tp)
    send_all(c, matches)
    c.run()
    c.tick_rounds = 50
    for tp in held:
        c.release(*tp)
        c.run()
    c.run()
    assert live(c) == replayed(matches)


def test_a_finish_read_before_its_start_waits_for_it() -> None:
    c = Cluster(partitions=PARTITIONS)
    matches: list[Match] = [("m1", T0, T0 + 60, [["a"], ["b"]], [0, 1])]
    home = partition_for("m1", PARTITIONS)
    c.hold(STARTED, home)
    send_all(c, matches)
    c.run()
    assert c.ratings == []  # not rated as a finish without a start
    c.release(STARTED, home)
    c.run()
    assert live(c) == replayed(matches)
    assert c.runner.match_partitions[home].time.now is not None


def test_a_finish_whose_start_never_comes_is_rated_from_its_line_up() -> None:
    c = Cluster(partitions=PARTITIONS)
    c.tick_rounds = 0
    finish = {"match_id": "m1", "mode": "1v1", "finished_at": epoch_ms(T0 + 60)}
    c.send(FINISHED, {**finish, "ranks": [0, 1], "teams": [["a"], ["b"]]})
    c.run()
    for _ in range(3):  # event time stands at the finish: a start may still come
        c.tick(c.wall)
        c.run()
    assert c.ratings == []
    c.tick_rounds = 50  # and now it moves on with the wall clock
    c.run()
    assert c.outcomes() == {("a", "m1"): "win", ("b", "m1"): "loss"}


def test_a_finish_unread_on_a_lagging_partition_is_not_taken_for_an_abandonment() -> None:
    """Player a starts m2 while m1 is pending; m1's finish sits unread on a held partition while
    event time elsewhere passes the grace period: m1 is rated from its result, not abandoned."""
    c = Cluster(partitions=PARTITIONS)
    home = partition_for("m1", PARTITIONS)
    c.hold(FINISHED, home)
    matches: list[Match] = [
        ("m1", T0, T0 + 60, [["a"], ["b"]], [0, 1]),
        ("m2", T0 + 100, T0 + 160, [["a"], ["c"]], [1, 0]),
        # Event time moves far past m2's start plus the grace period (60 s).
        ("m3", T0 + 1000, T0 + 1060, [["x"], ["y"]], [0, 1]),
    ]
    send_all(c, matches)
    c.run()
    assert ("a", "m1") not in c.outcomes()
    c.release(FINISHED, home)
    c.run()
    assert c.outcomes()[("a", "m1")] == "win"
    assert live(c) == replayed(matches)


def test_matches_starting_at_the_same_instant_apply_in_match_id_order() -> None:
    """Player a in three matches started at once, each result within the grace period: no
    order from the timeline, so match id order, as replay applies it."""
    c = Cluster(partitions=PARTITIONS)
    matches: list[Match] = [
        (f"m{i}", T0, T0 + 10 + i, [["a"], [f"o{i}"]], [0, 1]) for i in (3, 1, 2)
    ]
    send_all(c, matches)
    c.run()
    assert [e["match_id"] for e in c.ratings if e["player_id"] == "a"] == ["m1", "m2", "m3"]
    assert live(c) == replayed(matches)


def test_a_late_finish_read_before_its_late_start_waits_from_now() -> None:
    """Event time is far past a match whose events come only now (a server whose clock is
    behind, say), the finish without a line-up read first: it waits a grace period from now for
    its start, as before the watermarks, instead of being dead-lettered at once."""
    c = Cluster(partitions=PARTITIONS)
    send_all(c, [("x1", T0 + 1000, T0 + 1060, [["x"], ["y"]], [0, 1])])
    c.run()
    ids = {"match_id": "m1", "mode": "1v1"}
    c.send(FINISHED, {**ids, "finished_at": epoch_ms(T0 + 60), "ranks": [1, 0]})
    c.send(STARTED, {**ids, "started_at": epoch_ms(T0), "teams": [["a"], ["b"]]})
    c.run()
    assert c.dead_letters == []
    assert c.outcomes()[("a", "m1")] == "loss"


@pytest.mark.parametrize("seed", range(4))
def test_a_fleet_that_publishes_each_match_once_it_is_over_is_rated_as_played(seed: int) -> None:
    """Both events of a match at its finish, the start dated when it began: starts behind
    event time when read, yet no player has moved past them, so every rating equals replay
    and no join is late. The finishes come within the lateness (matches that end at the same
    moment are published a few harness ticks apart). (Whether a start counts as late here
    depends on when the partition last heard of the others: with nothing pending between two
    matches the combiner sends no views. The ratings do not depend on it.)"""
    matches = history(seed)
    c = Cluster(partitions=PARTITIONS, lateness=1.0)
    for match_id, start, finish, teams, ranks in sorted(matches, key=lambda m: (m[2], m[0])):
        ids = {"match_id": match_id, "mode": "1v1"}
        c.send(STARTED, {**ids, "started_at": epoch_ms(start), "teams": teams})
        c.send(FINISHED, {**ids, "finished_at": epoch_ms(finish), "ranks": ranks})
        c.run()
    assert live(c) == replayed(matches)
    assert (c.counts["late_joins"], c.counts["late_finishes"]) == (0, 0)


def test_a_start_read_after_its_player_moved_on_is_a_late_join() -> None:
    """a plays m1 from T0 to T0 + 120 s; a's m0, started 30 s into m1, is published after m1
    was rated: m1 was settled without it (by event time a abandoned m1 at T0 + 90 s)."""
    c = Cluster(partitions=PARTITIONS)
    send_all(
        c,
        [
            ("m1", T0, T0 + 120, [["a"], ["b"]], [0, 1]),
            ("x", T0 + 1000, T0 + 1060, [["x"], ["y"]], [0, 1]),
        ],
    )
    c.run()
    assert ("a", "m1") in c.outcomes()
    assert c.counts["late_joins"] == 0
    send_all(c, [("m0", T0 + 30, T0 + 150, [["a"], ["c"]], [1, 0])])
    c.run()
    # a had moved on; c had not played before.
    assert (c.counts["late_starts"], c.counts["late_joins"]) == (1, 1)


def test_a_start_read_after_an_overlap_within_the_grace_period_is_late_but_harmless() -> None:
    """a plays m1 from T0 to T0 + 60 s; a's m0, started 30 s into m1, is published after m1 was
    rated: by event time m1's result (at 60 s) came before m0 could abandon it (at 90 s), so
    the order of play holds and nothing differs from replay."""
    matches: list[Match] = [
        ("m1", T0, T0 + 60, [["a"], ["b"]], [0, 1]),
        ("x", T0 + 1000, T0 + 1060, [["x"], ["y"]], [0, 1]),
        ("m0", T0 + 30, T0 + 150, [["a"], ["c"]], [1, 0]),
    ]
    c = Cluster(partitions=PARTITIONS)
    send_all(c, matches[:2])
    c.run()
    send_all(c, matches[2:])
    c.run()
    assert (c.counts["late_starts"], c.counts["late_joins"]) == (1, 0)
    assert live(c) == replayed(matches)


def test_a_start_read_after_a_later_match_of_its_player_was_snapshotted_is_a_late_join() -> None:
    """a's m2 starts at T0 + 100 s and event time passes it, so a's snapshot for it goes out;
    then a's m0, started at T0 + 50 s, is read: m2 was snapshotted without it."""
    c = Cluster(partitions=PARTITIONS)
    c.send(
        STARTED,
        {
            "match_id": "m2",
            "mode": "1v1",
            "started_at": epoch_ms(T0 + 100),
            "teams": [["a"], ["c"]],
        },
    )
    send_all(c, [("x", T0 + 1000, T0 + 1060, [["x"], ["y"]], [0, 1])])
    c.run()
    assert c.counts["late_joins"] == 0
    c.send(
        STARTED,
        {"match_id": "m0", "mode": "1v1", "started_at": epoch_ms(T0 + 50), "teams": [["a"], ["d"]]},
    )
    c.run()
    assert (c.counts["late_starts"], c.counts["late_joins"]) == (1, 1)


def test_a_late_start_of_an_older_match_is_applied_after_the_newer_one_not_lost() -> None:
    """A fleet that publishes each match once it is over, and a player in two overlapping
    matches: the newer one (m, from T0 + 30 s) is read first and snapshotted; the older one
    (p, T0 to T0 + 60 s) comes after it, late. Its snapshot waits until m is rated, so both
    results are applied (out of the order of play); from the same state one would have been
    taken for a redelivery and dropped."""
    c = Cluster(partitions=PARTITIONS)
    send_all(c, [("x", T0 + 1000, T0 + 1060, [["x"], ["y"]], [0, 1])])
    c.run()
    m, p = {"match_id": "m", "mode": "1v1"}, {"match_id": "p", "mode": "1v1"}
    c.send(STARTED, {**m, "started_at": epoch_ms(T0 + 30), "teams": [["a"], ["c"]]})
    c.run()
    # m's snapshot of a is out; its result is not in when p's start comes.
    c.send(STARTED, {**p, "started_at": epoch_ms(T0), "teams": [["a"], ["b"]]})
    c.send(FINISHED, {**p, "finished_at": epoch_ms(T0 + 60), "ranks": [0, 1]})
    c.send(FINISHED, {**m, "finished_at": epoch_ms(T0 + 90), "ranks": [0, 1]})
    c.run()
    outcomes = c.outcomes()
    assert (outcomes[("a", "m")], outcomes[("a", "p")]) == ("win", "win")
    assert c.counts["late_joins"] == 1
    state = c.state("a", "1v1")
    assert state is not None and state.games == 2
    assert [e["match_id"] for e in c.ratings if e["player_id"] == "a"] == ["m", "p"]


def _overlap_runs(matches: list[Match], late: str) -> tuple[Cluster, Cluster]:
    """The same history twice: every event in event-time order (the late-timed result read
    at once, before event time reaches it), and ``late``'s finish published only after event
    time has passed it (read after every decision it could lose to)."""
    in_order = Cluster(partitions=PARTITIONS)
    send_all(in_order, matches)
    in_order.run()
    after = Cluster(partitions=PARTITIONS)
    send_all(after, [m for m in matches if m[0] != late])
    _, start, finish, teams, ranks = next(m for m in matches if m[0] == late)
    ids = {"match_id": late, "mode": "1v1"}
    after.send(STARTED, {**ids, "started_at": epoch_ms(start), "teams": teams})
    after.run()
    after.send(FINISHED, {**ids, "finished_at": epoch_ms(finish), "ranks": ranks})
    after.run()
    return in_order, after


def test_a_result_timed_after_an_abandonment_loses_to_it_whenever_it_is_read() -> None:
    """Player a starts m2 100 s into m1, whose result comes 300 s in: by event time a abandoned
    m1 at 160 s (grace 60 s), so a is scored abandoned and b rated from the result, whether the
    result was read before that decision or after it (stream.ratings.settling)."""
    matches: list[Match] = [
        ("m1", T0, T0 + 300, [["a"], ["b"]], [0, 1]),
        ("m2", T0 + 100, T0 + 400, [["a"], ["c"]], [1, 0]),
        ("x", T0 + 1000, T0 + 1060, [["x"], ["y"]], [0, 1]),
    ]
    in_order, after = _overlap_runs(matches, "m1")
    # Read after event time passed it: counted, for the operator to raise the lateness.
    assert (in_order.counts["late_finishes"], after.counts["late_finishes"]) == (0, 1)
    for c in (in_order, after):
        outcomes = c.outcomes()
        assert outcomes[("a", "m1")] == "abandoned"
        assert outcomes[("b", "m1")] == "loss"
        assert outcomes[("a", "m2")] == "loss"
        assert c.dead_letters == []
    assert live(in_order) == live(after)
    assert live(in_order) == replayed(matches)


def test_a_result_timed_after_the_timeout_loses_to_it_whenever_it_is_read() -> None:
    """m1's result comes after the mode's timeout (7,200 s): both players time out, whether the
    result was read before event time reached the timeout or after."""
    matches: list[Match] = [
        ("m1", T0, T0 + 7300, [["a"], ["b"]], [0, 1]),
        ("x", T0 + 8000, T0 + 8060, [["x"], ["y"]], [0, 1]),
    ]
    in_order, after = _overlap_runs(matches, "m1")
    for c in (in_order, after):
        assert c.outcomes()[("a", "m1")] == "timeout"
        assert c.outcomes()[("b", "m1")] == "timeout"
    assert live(in_order) == live(after)
    assert live(in_order) == replayed(matches)


def test_a_result_within_the_grace_period_of_a_newer_start_is_rated_from_the_result() -> None:
    """The same overlap with m1's result 50 s after a's newer start: within the grace period,
    so rated from it. (Read after event time has passed the abandonment it would have been
    published later than the lateness allows: docs/event-time.md, not covered.)"""
    matches: list[Match] = [
        ("m1", T0, T0 + 150, [["a"], ["b"]], [0, 1]),
        ("m2", T0 + 100, T0 + 400, [["a"], ["c"]], [1, 0]),
        ("x", T0 + 1000, T0 + 1060, [["x"], ["y"]], [0, 1]),
    ]
    c = Cluster(partitions=PARTITIONS)
    send_all(c, matches)
    c.run()
    assert c.outcomes()[("a", "m1")] == "win"
    assert live(c) == replayed(matches)


def test_an_abandon_request_names_the_next_start_even_when_a_later_one_is_read_first() -> None:
    """a plays m1 (0-300 s), then m2 from 225 s and m3 from 300 s. m2's start sits on a held
    partition while m3's is read: the request to abandon m1 must name m2's start (abandoned at
    285 s, before the result), not m3's (360 s, after it)."""
    ids = [f"k{i}" for i in range(40)]
    m1 = ids[0]
    m2 = next(i for i in ids if partition_for(i, PARTITIONS) != partition_for(m1, PARTITIONS))
    m3 = next(
        i
        for i in ids
        if partition_for(i, PARTITIONS)
        not in {partition_for(m1, PARTITIONS), partition_for(m2, PARTITIONS)}
    )
    matches: list[Match] = [
        (m1, T0, T0 + 300, [["a"], ["b"]], [0, 1]),
        (m2, T0 + 225, T0 + 315, [["a"], ["c"]], [0, 1]),
        (m3, T0 + 300, T0 + 600, [["a"], ["d"]], [0, 1]),
        ("x", T0 + 1000, T0 + 1060, [["x"], ["y"]], [0, 1]),
    ]
    c = Cluster(partitions=PARTITIONS)
    c.hold(STARTED, partition_for(m2, PARTITIONS))
    send_all(c, matches)
    c.run()
    c.release(STARTED, partition_for(m2, PARTITIONS))
    c.run()
    assert c.outcomes()[("a", m1)] == "abandoned"
    assert live(c) == replayed(matches)


def test_a_player_partition_reports_a_moved_watermark_at_most_once_a_tick() -> None:
    """The combiner's watermark may come several times a tick; a report that only moves the
    abandon floor goes out once per ``announce_seconds``, with the latest floor; one asked for,
    or that says the partition is pending or no longer, goes at once."""
    players = PlayerProcessor(Modes(), partitions=2, announce_seconds=0.1)
    partition = players.restore(0, [])

    def reports(wall: float, at: float | None) -> list[PlayerReport]:
        out = Outbox()
        ctx = PlayerContext.of(partition, {}, {}, out, wall)
        players.on_command(ctx, Combined(at))
        players.report(ctx)
        assert not out.match_commands
        return [c for c in out.after[0] if isinstance(c, PlayerReport)]

    life = partition.life  # named at the restore; every report carries it
    assert reports(10.0, 100.0) == [PlayerReport(0, 100.0, False, life)]  # the first since restore
    assert reports(10.05, 101.0) == []  # within the tick: held
    assert reports(10.2, 102.0) == [PlayerReport(0, 102.0, False, life)]
    assert reports(10.25, None) == [PlayerReport(0, 102.0, False, life)]  # asked
    assert reports(10.4, 102.0) == []  # nothing new to say


def burst(c: Cluster, matches: list[Match], cut: float, first: str) -> None:
    """The events of ``matches`` before ``cut`` published as played, then the rest from a
    fleet that buffered them and sent them at once: the broker has the ``first`` topic's
    records a moment before the other's, the workers read them to its end (the other topic
    looks read to its end too: its records are not there yet), and the leader ticks
    SETTLE_TICKS - 1 times before the other topic's records arrive."""
    events: list[tuple[float, str, dict[str, Any]]] = []
    for match_id, start, finish, teams, ranks in matches:
        ids = {"match_id": match_id, "mode": "1v1"}
        events.append((start, STARTED, {**ids, "started_at": epoch_ms(start), "teams": teams}))
        events.append((finish, FINISHED, {**ids, "finished_at": epoch_ms(finish), "ranks": ranks}))
    events.sort(key=lambda e: e[0])
    for _, topic, event in (e for e in events if e[0] < cut):
        c.send(topic, event)
    c.run()
    later = [(topic, event) for at, topic, event in events if at >= cut]
    second = FINISHED if first == STARTED else STARTED
    for topic, event in later:
        if topic == first:
            c.send(topic, event)
    c.tick_rounds = 0
    c.run()
    for _ in range(SETTLE_TICKS - 1):
        c.tick(c.wall + 0.001)
        c.run()
    for topic, event in later:
        if topic == second:
            c.send(topic, event)
    c.tick_rounds = 50
    c.run()


@pytest.mark.parametrize("first", [FINISHED, STARTED])
@pytest.mark.parametrize("shape", ["in turn", "overlapping"])
@pytest.mark.parametrize("seed", range(4))
def test_a_burst_read_one_topic_ahead_of_the_other_is_rated_as_played(
    first: str, shape: str, seed: int
) -> None:
    """Found by the re-rate's e2e test (docs/event-time.md): the last 30 of 40 matches, 8 to
    20 minutes of play, sent at once to a running worker. Event time leaps with the topic read
    first; decisions wait until it has stood there SETTLE_TICKS ticks, and so do the
    watermarks, so the other topic's records, read meanwhile, count: no finish is taken for
    one without a start, no result for an abandonment, and the order of play is kept."""
    matches = history(seed, matches=40) if shape == "in turn" else overlapping(seed, 40)
    c = Cluster(partitions=PARTITIONS)
    burst(c, matches, matches[10][1], first)
    assert not c.dead_letters
    assert c.counts["late_joins"] == 0
    assert live(c) == replayed(matches)
