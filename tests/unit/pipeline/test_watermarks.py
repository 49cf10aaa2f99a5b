"""stream/pipeline/watermarks.py, one step at a time on one partition's state: what each step
changes and what it says to send. The combiner is test_combiner.py; the whole protocol, with
its decisions, runs in test_event_time.py on the in-memory harness."""

from __future__ import annotations

from stream.pipeline import watermarks
from stream.pipeline.combiner import Combiner
from stream.pipeline.eventtime import (
    CLOCK_HISTORY,
    SETTLE_SECONDS,
    SETTLE_TICKS,
    EventTime,
    PartitionClock,
)
from stream.pipeline.matchpartition import FINISHED, STARTED, MatchContext, MatchPartition
from stream.pipeline.outbox import Outbox
from stream.pipeline.playerpartition import PlayerPartition
from stream.pipeline.workarounds.private import ANSWER_SLACK
from stream.protocol import Combined, PlayerReport, Report, View

T0 = 1_780_000_000.0
PARTITIONS = 3


def match_partition(number: int = 0, lateness: float = 0.0) -> MatchPartition:
    return MatchPartition(number, EventTime(PARTITIONS, lateness, None, 0.0))


def nothing_waits(match_id: str) -> bool:
    return False


def view(
    at: float | None, round_: int = 1, *, tick: bool = True, abandons: float | None = None
) -> View:
    return View(9, round_, at, at, at, abandons, tick)


def test_a_partition_reports_what_it_read_or_that_it_read_everything() -> None:
    p = match_partition()
    watermarks.observe(p, STARTED, T0 + 5, 1.0, forwarded=False)
    watermarks.observe(p, FINISHED, T0 + 3, 1.0, forwarded=False)
    watermarks.observe(p, STARTED, T0 + 9, 1.0, forwarded=True)  # moves the clock only
    watermarks.forwarding(p, 2, T0 + 4)
    watermarks.forwarding(p, 2, T0 + 2)
    sent = watermarks.report(p, nothing_waits, 2.0, started_caught_up=None, finished_caught_up=2.0)
    # Behind on its starts: what it read there. Read to the end of its finishes: its clock,
    # the latest read moved on by the wall second since (nothing it reads next is older).
    assert sent == Report(0, 0, 0, 0, T0 + 5, T0 + 10, T0 + 5, None, {2: T0 + 2}, False)
    assert p.time.clock.value == T0 + 10
    # Its own bounds are applied at once; the others' are still missing.
    assert p.time.own == (T0 + 5, T0 + 10) and p.time.now is None
    assert p.reported == 2.0 and p.forwarded == {}
    # Again, with nothing forwarded since: sent; the same once more says nothing new.
    assert watermarks.report(p, nothing_waits, 2.0, started_caught_up=None, finished_caught_up=2.0)
    assert (
        watermarks.report(p, nothing_waits, 2.0, started_caught_up=None, finished_caught_up=2.0)
        is None
    )


def test_a_report_names_the_earliest_finish_still_waiting_for_its_start() -> None:
    p = match_partition()
    p.unjoined = [(T0 + 40, "waiting"), (T0 + 70, "later")]
    waiting = {"waiting", "later"}
    sent = watermarks.report(
        p, waiting.__contains__, 1.0, started_caught_up=1.0, finished_caught_up=1.0
    )
    assert sent is not None and sent.unjoined == T0 + 40
    waiting.discard("waiting")  # its start came
    sent = watermarks.report(
        p, waiting.__contains__, 1.1, started_caught_up=1.1, finished_caught_up=1.1
    )
    assert sent is not None and sent.unjoined == T0 + 70 and p.unjoined == [(T0 + 70, "later")]


def test_a_report_is_due_after_a_tick_s_view_a_change_of_pending_or_once_per_interval() -> None:
    p = match_partition()
    assert watermarks.report_due(p, 10.0, None)  # never reported
    watermarks.report(p, nothing_waits, 10.0, started_caught_up=10.0, finished_caught_up=10.0)
    assert not watermarks.report_due(p, 10.06, 0.05)  # nothing read since: nothing new to say
    watermarks.observe(p, STARTED, T0, 10.005, forwarded=False)
    assert not watermarks.report_due(p, 10.01, 0.05)
    assert watermarks.report_due(p, 10.06, 0.05)
    assert not watermarks.report_due(p, 10.06, None)  # no interval
    watermarks.on_view(p, view(T0, tick=False), 10.06)
    assert not watermarks.report_due(p, 10.06, None)  # a view between ticks: no
    watermarks.on_view(p, view(T0, 2), 10.06)
    assert watermarks.report_due(p, 10.06, None)
    sent = watermarks.report(
        p, nothing_waits, 10.07, started_caught_up=10.07, finished_caught_up=10.07
    )
    assert sent is not None and (sent.epoch, sent.round) == (9, 2)  # the view it answers
    p.open.add("m1")  # a match not settled: pending now
    assert watermarks.report_due(p, 10.07, None)
    sent = watermarks.report(
        p, nothing_waits, 10.08, started_caught_up=10.08, finished_caught_up=10.08
    )
    assert sent is not None and sent.pending


def test_the_combiner_s_partition_is_ticked_until_it_is_built_then_while_it_wants() -> None:
    assert watermarks.tick_wanted(None)  # no batch yet: the first tick builds and greets
    home = match_partition()
    home.combiner = Combiner(2, 0.0, 9, PartitionClock(None, 0.0))
    assert watermarks.tick_wanted(home)  # not greeted
    home.combiner.on_tick(1.0)
    for source in range(2):
        home.combiner.on_report(Report(source, 1, 9, 1, T0, T0, T0, None, {}, False), 1.0)
        home.combiner.on_player_report(PlayerReport(source, T0, False))
    assert watermarks.tick_wanted(home)  # what the reports changed is owed
    home.combiner.end_of_batch(1.1, 0.05)
    assert not watermarks.tick_wanted(home)
    home.combiner.on_player_report(PlayerReport(1, T0, True))  # a snapshot held: awake
    assert watermarks.tick_wanted(home)


def test_event_time_waits_for_the_view_and_for_the_partition_behind() -> None:
    p = match_partition()
    watermarks.observe(p, STARTED, T0 + 60, 1.0, forwarded=False)
    watermarks.report(p, nothing_waits, 1.0, started_caught_up=1.0, finished_caught_up=1.0)
    assert p.time.now is None  # no view of the others yet
    watermarks.on_view(p, View(9, 1, T0 + 10, T0 + 80, T0 + 80, None, True), 1.0)
    assert p.time.now == T0 + 10  # another partition is behind on its starts
    # A lower view later (a combiner restored behind) does not lower it.
    watermarks.on_view(p, view(T0 + 5, 2), 1.0)
    assert p.time.now == T0 + 10
    # One partition alone has no others: its own bounds are event time.
    alone = MatchPartition(0, EventTime(1, 0.0, None, 0.0))
    watermarks.observe(alone, STARTED, T0 + 60, 1.0, forwarded=False)
    watermarks.report(alone, nothing_waits, 1.0, started_caught_up=1.0, finished_caught_up=1.0)
    assert alone.time.now == T0 + 60


def test_held_results_are_released_once_the_view_says_the_abandon_requests_are_out() -> None:
    p = match_partition()
    p.held.add(T0 + 50, "m1")
    assert watermarks.on_view(p, view(T0 + 60), 1.0) == []  # no floor yet
    assert watermarks.on_view(p, view(T0 + 60, 2, abandons=T0 + 40), 1.0) == []
    assert watermarks.on_view(p, view(T0 + 60, 3, abandons=T0 + 30), 1.0) == []
    assert p.abandons == T0 + 40  # never backwards
    assert watermarks.on_view(p, view(T0 + 60, 4, abandons=T0 + 55), 1.0) == ["m1"]


def test_a_player_partition_follows_the_combiner_s_watermark_and_reports_it() -> None:
    p = PlayerPartition(1, PARTITIONS)
    p.wait(T0 + 20, "alice", 0.0)
    # The first batch after an assignment reports (pending: alice waits).
    assert watermarks.player_report(p, 0.0, 1.0) == PlayerReport(1, None, True)
    assert watermarks.on_combined(p, Combined(None)) == []  # the combiner's greeting
    assert watermarks.player_report(p, 0.1, 1.0) == PlayerReport(1, None, True)  # asked
    assert watermarks.on_combined(p, Combined(T0 + 25)) == ["alice"]  # past her start
    # Not pending any more: said at once, with the watermark handled.
    assert watermarks.player_report(p, 0.2, 1.0) == PlayerReport(1, T0 + 25, False)
    watermarks.on_combined(p, Combined(T0 + 30))
    assert watermarks.player_report(p, 0.5, 1.0) is None  # only moved, and too soon
    watermarks.on_combined(p, Combined(T0 + 28))  # never backwards
    assert watermarks.player_report(p, 1.2, 1.0) == PlayerReport(1, T0 + 30, False)
    assert watermarks.player_report(p, 5.0, 1.0) is None  # nothing new


def test_decisions_wait_until_event_time_has_stood_past_them_for_a_few_ticks() -> None:
    """What a burst read one topic ahead of the other needs (docs/event-time.md): event time
    that leaps is decided on only once it has stood there SETTLE_TICKS ticks or
    SETTLE_SECONDS, whichever comes first; a tick is a view sent on the leader's tick."""
    p = match_partition()
    wall = 1.0
    round_ = 0

    def now() -> float | None:
        return MatchContext.of(p, {}, Outbox(), wall).now

    def tick(seconds: float = 0.1) -> None:
        nonlocal wall, round_
        wall += seconds
        round_ += 1
        watermarks.on_view(p, view(None, round_), wall)

    def everyone_read(at: float) -> None:
        watermarks.observe(p, STARTED, at, wall, forwarded=False)
        watermarks.on_view(p, view(at, round_, tick=False), wall)
        watermarks.report(p, nothing_waits, wall, started_caught_up=wall, finished_caught_up=wall)

    everyone_read(T0)
    for _ in range(SETTLE_TICKS):
        assert now() is None  # not yet stood anywhere for long enough
        tick(0.01)
    assert now() is not None
    for slow in (False, True):
        # A leap of ten minutes (a burst's first topic): not decided on yet.
        leap = p.time.now
        assert leap is not None
        everyone_read(leap + 600)
        assert now() is not None and now() < leap + 1  # type: ignore[operator]
        if slow:  # ticks late under load: half a second of wall time since one after the leap
            tick(SETTLE_SECONDS + 0.01)
            assert now() is not None and now() < leap + 1  # type: ignore[operator]
            tick(SETTLE_SECONDS + 0.01)
        else:
            for _ in range(SETTLE_TICKS - 1):
                tick(0.01)
                assert now() is not None and now() < leap + 1  # type: ignore[operator]
            tick(0.01)
        assert now() is not None and now() >= leap + 600  # type: ignore[operator]


def test_event_time_that_moves_with_the_wall_clock_counts_at_once_and_a_leap_waits() -> None:
    """A fleet publishing as it plays moves event time no faster than the wall clock: decided
    on at once, no settle (the finish-only style's half second). Moving faster by more than
    the lateness is a leap, held as a burst is."""
    lateness = 0.1
    p = match_partition(lateness=lateness)
    wall = 1.0

    def step(seconds: float, moved: float) -> None:
        nonlocal wall
        at = (p.time.clock.value or T0) + moved
        wall += seconds
        watermarks.observe(p, STARTED, at, wall, forwarded=False)
        watermarks.on_view(p, view(at, tick=True), wall)
        watermarks.report(p, nothing_waits, wall, started_caught_up=wall, finished_caught_up=wall)

    for _ in range(SETTLE_TICKS + 1):  # the first view comes before the first report
        step(0.1, 0.1)
    assert p.settled(wall) == p.time.now  # stood long enough, and moved with the wall
    step(0.1, 0.1 + lateness / 2)  # faster than the wall, within the lateness: counts
    assert p.settled(wall) == p.time.now
    before = p.time.now
    assert before is not None
    step(0.1, 0.1 + lateness * 1.5)  # faster by more: a leap, not counted yet
    now = p.time.now
    assert now is not None and now > before
    held = p.settled(wall)
    assert held is not None and held <= before
    for _ in range(SETTLE_TICKS):  # stood (moving with the wall again): counts
        step(0.1, 0.1)
    assert p.settled(wall) == p.time.now


def test_a_caught_up_partition_s_bound_is_its_clock_when_the_broker_last_answered() -> None:
    """The records a caught-up partition has not read reached the broker after its last
    fetch answer: its bound is what its clock said then, not what a view read since says
    (found by the crash simulator with answers left stale: a finish-only match rated before
    its player's earlier match, docs/event-time.md)."""
    p = match_partition()
    watermarks.observe(p, STARTED, T0 + 10, 1.0, forwarded=False)
    watermarks.observe(p, FINISHED, T0 + 10, 1.0, forwarded=False)
    watermarks.on_view(p, view(T0 + 30, tick=False), 2.0)  # others read far later records
    slack = ANSWER_SLACK
    sent = watermarks.report(p, nothing_waits, 2.5, started_caught_up=1.5, finished_caught_up=2.0)
    assert sent is not None
    # Started: answered at 1.5, when its clock said T0 + 10; finished: at 2.0, T0 + 30.
    assert (sent.started, sent.finished) == (T0 + 10, T0 + 30)
    # Made before the view was read: what the clock said then.
    sent = watermarks.report(p, nothing_waits, 2.5, started_caught_up=1.5, finished_caught_up=1.99)
    assert sent is not None and (sent.started, sent.finished) == (T0 + 10, T0 + 10)
    # An answer older than the clock's memory, or than the clock: what it read.
    q = match_partition()
    watermarks.observe(q, STARTED, T0 + 7, 3.0, forwarded=False)
    sent = watermarks.report(q, nothing_waits, 3.0, started_caught_up=2.9, finished_caught_up=None)
    assert sent is not None and (sent.started, sent.finished) == (T0 + 7, 0.0)
    # Its own records of either input, fetched by an answer made the slack before this one or
    # by the same answer, count even if processed since (in the batch that reports): they had
    # reached the broker.
    watermarks.observe(p, FINISHED, T0 + 50, 3.0, forwarded=False)
    watermarks.observe(p, STARTED, T0 + 40, 3.0, forwarded=False)
    sent = watermarks.report(
        p, nothing_waits, 3.0, started_caught_up=2.5 + 2 * slack, finished_caught_up=2.5
    )
    assert sent is not None and (sent.started, sent.finished) == (T0 + 50, T0 + 50)
    watermarks.report(p, nothing_waits, 3.0, started_caught_up=2.7, finished_caught_up=2.7)
    assert p.time.own == (T0 + 50, T0 + 50)  # the same answer (the same report: not sent)
    # The other input's answer later, or within the slack before (the times are estimates):
    # its records may not have reached the broker when this one's answer was made.
    for other in (2.8, 2.7 - slack / 2):
        watermarks.report(p, nothing_waits, 3.1, started_caught_up=2.7, finished_caught_up=other)
        assert p.time.own is not None and p.time.own[0] == T0 + 40


def test_a_clock_says_what_it_said_at_an_earlier_wall_time() -> None:
    clock = PartitionClock(None, 0.0)
    assert clock.at(5.0) is None
    clock.observe(T0, 1.0)
    clock.observe(T0 + 2, 1.0)  # one batch: one step
    clock.observe(T0 + 1, 2.0)  # older: no step
    clock.tick(3.0)  # a second of wall time since the last event read
    assert (clock.at(0.5), clock.at(1.0), clock.at(2.5), clock.at(3.0)) == (
        None,
        T0 + 2,
        T0 + 2,
        T0 + 3,
    )
    for n in range(CLOCK_HISTORY):
        clock.observe(T0 + 10 + n, 10.0 + n)
    assert clock.at(3.0) is None  # forgotten: older than what it keeps
    assert clock.at(10.0 + CLOCK_HISTORY) == T0 + 9 + CLOCK_HISTORY


def test_after_a_quiet_spell_a_report_s_leap_stands_before_it_counts() -> None:
    """No ticks while nothing is pending anywhere: the first report after a quiet spell
    samples event time as it stood before it, so a burst it reports waits SETTLE_SECONDS."""
    p = match_partition()
    wall = 1.0
    watermarks.on_view(p, view(T0), wall)
    watermarks.report(p, nothing_waits, wall, started_caught_up=wall, finished_caught_up=wall)
    for _ in range(SETTLE_TICKS):
        wall += 0.1
        watermarks.on_view(p, view(T0, tick=True), wall)
    assert p.settled(wall) is not None
    wall += 60.0  # quiet: no views
    watermarks.on_view(p, view(T0 + 3600, tick=False), wall)  # the others have moved on
    watermarks.observe(p, STARTED, T0 + 3600, wall, forwarded=False)
    watermarks.report(p, nothing_waits, wall, started_caught_up=wall, finished_caught_up=wall)
    assert p.time.now is not None and p.time.now >= T0 + 3600
    assert p.settled(wall) is not None and p.settled(wall) < T0 + 100  # type: ignore[operator]
    # Something is pending now: the ticks come again, and once one taken after the leap is
    # half a second old, the leap counts.
    for _ in range(SETTLE_TICKS - 1):
        wall += 0.1
        watermarks.on_view(p, view(T0 + 3600, tick=True), wall)
        assert p.settled(wall) < T0 + 100  # type: ignore[operator]
    wall += 0.1
    watermarks.on_view(p, view(T0 + 3600, tick=True), wall)
    assert p.settled(wall) == p.time.now


def test_what_a_partition_promises_of_its_joins_stays_below_a_waiting_finish() -> None:
    p = match_partition()
    watermarks.observe(p, STARTED, T0 + 100, 1.0, forwarded=False)
    watermarks.report(p, nothing_waits, 1.0, started_caught_up=1.0, finished_caught_up=1.0)
    for n in range(SETTLE_TICKS):
        watermarks.on_view(p, view(T0 + 100, n + 2), 1.01 + n * 0.01)
    p.unjoined = [(T0 + 40, "waiting")]
    waiting = {"waiting"}
    assert watermarks.joined(p, waiting.__contains__, 1.1) == T0 + 40
    waiting.clear()
    assert watermarks.joined(p, waiting.__contains__, 1.1) == T0 + 100
