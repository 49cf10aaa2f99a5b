"""stream/pipeline/watermarks.py, one step at a time on one partition's state: what each step
changes and what it says to send. The whole protocol, with its decisions, runs in
test_event_time.py on the in-memory harness."""

from __future__ import annotations

import dataclasses

from stream.pipeline import watermarks
from stream.pipeline.eventtime import EventTime
from stream.pipeline.matchpartition import (
    FINISHED,
    SETTLE_SECONDS,
    SETTLE_TICKS,
    STARTED,
    MatchContext,
    MatchPartition,
)
from stream.pipeline.outbox import Outbox
from stream.pipeline.playerpartition import PlayerPartition
from stream.protocol import AbandonWatermark, Progress, Watermark

T0 = 1_780_000_000.0
PARTITIONS = 3


def match_partition(number: int = 0, lateness: float = 0.0) -> MatchPartition:
    return MatchPartition(number, EventTime(PARTITIONS, lateness, None, 0.0))


def test_a_partition_reports_what_it_read_or_that_it_read_everything() -> None:
    p = match_partition()
    watermarks.observe(p, STARTED, T0 + 5, 1.0, forwarded=False)
    watermarks.observe(p, FINISHED, T0 + 3, 1.0, forwarded=False)
    watermarks.observe(p, STARTED, T0 + 9, 1.0, forwarded=True)  # moves the clock only
    progress = watermarks.report(p, 2.0, started_done=False, finished_done=True)
    # Behind on its starts: what it read there. Read to the end of its finishes: its clock,
    # the latest read moved on by the wall second since (nothing it reads next is older).
    assert progress == Progress(0, 2.0, T0 + 5, T0 + 10, T0 + 5)
    assert p.time.clock.value == T0 + 10
    # Its own report is applied at once; the others' are still missing.
    assert p.time.reports == {0: (T0 + 5, T0 + 10)} and p.mark_due
    assert p.reported == 2.0


def test_a_caught_up_report_read_late_bounds_event_time_where_it_was_made() -> None:
    """A report read long after it was made (a partition reading its commands again after a
    restore, while its own inputs are read ahead) bounds event time at the reporter's clock
    then, not at the reader's now: what the reporter read next may be older than that."""
    reporter, reader = match_partition(1), match_partition(0)
    watermarks.observe(reporter, STARTED, T0 + 10, 1.0, forwarded=False)
    old = watermarks.report(reporter, 1.0, started_done=True, finished_done=True)
    # Meanwhile the reader has read events an hour later on its own inputs.
    watermarks.observe(reader, STARTED, T0 + 3600, 2.0, forwarded=False)
    watermarks.report(reader, 2.0, started_done=True, finished_done=True)
    for source in (1, 2):
        watermarks.on_progress(reader, dataclasses.replace(old, source=source), 2.0)
    assert reader.time.now == T0 + 10


def test_a_report_is_due_after_a_tick_or_once_per_interval() -> None:
    p = match_partition()
    assert watermarks.report_due(p, 10.0, 0.05)  # never reported
    watermarks.report(p, 10.0, started_done=True, finished_done=True)
    assert not watermarks.report_due(p, 10.01, 0.05)
    assert watermarks.report_due(p, 10.06, 0.05)
    assert not watermarks.report_due(p, 10.06, None)  # on ticks only
    watermarks.on_tick(p, 9.5, 10.06)
    assert watermarks.report_due(p, 10.06, None)
    # The report answers the tick's round.
    assert watermarks.report(p, 10.07, started_done=True, finished_done=True).round == 9.5


def test_event_time_waits_for_every_partition_and_for_the_one_behind() -> None:
    p = match_partition()
    watermarks.observe(p, STARTED, T0 + 60, 1.0, forwarded=False)
    watermarks.report(p, 1.0, started_done=True, finished_done=True)
    watermarks.on_progress(p, Progress(1, 1.0, None, None, T0 + 60), 1.0)
    assert p.time.now is None  # partition 2 has not reported
    watermarks.on_progress(p, Progress(2, 1.0, T0 + 10, None, T0 + 10), 1.0)
    assert p.time.now == T0 + 10  # partition 2 is behind on its starts
    watermarks.on_progress(p, Progress(0, 1.0, 0.0, 0.0, None), 1.0)  # its own: ignored
    assert p.time.reports[0] == (T0 + 60, T0 + 60)


def test_the_watermark_to_the_players_stays_below_a_finish_waiting_for_its_start() -> None:
    p = match_partition()
    watermarks.observe(p, STARTED, T0 + 100, 1.0, forwarded=False)
    for source in range(PARTITIONS):
        watermarks.on_progress(p, Progress(source, 1.0, None, None, T0 + 100), 1.0)
    p.time.reports[0] = (None, None)
    for _ in range(SETTLE_TICKS):  # event time has stood at T0 + 100 for a while
        watermarks.on_tick(p, 1.0, 1.0)
    p.unjoined = [(T0 + 40, "waiting"), (T0 + 70, "later")]
    waiting = {"waiting"}
    assert watermarks.mark(p, lambda m: m in waiting, 1.0) == Watermark(0, T0 + 40)
    assert watermarks.mark(p, lambda m: m in waiting, 1.0) is None  # has not moved
    waiting.clear()  # its start came: the next waiting finish bounds it no more either
    assert watermarks.mark(p, lambda m: m in waiting, 1.0) == Watermark(0, T0 + 100)
    assert p.unjoined == [] and not p.mark_due


def test_held_results_are_released_once_every_player_partition_announced() -> None:
    p = match_partition()
    p.held.add(T0 + 50, "m1")
    assert watermarks.on_abandon_watermark(p, 0, T0 + 60, PARTITIONS) == []
    assert watermarks.on_abandon_watermark(p, 1, T0 + 60, PARTITIONS) == []
    assert watermarks.on_abandon_watermark(p, 2, T0 + 40, PARTITIONS) == []  # 2 is behind
    assert watermarks.on_abandon_watermark(p, 2, T0 + 30, PARTITIONS) == []  # never backwards
    assert p.abandons[2] == T0 + 40
    assert watermarks.on_abandon_watermark(p, 2, T0 + 55, PARTITIONS) == ["m1"]


def test_a_player_partition_announces_the_lowest_watermark_once_per_step() -> None:
    p = PlayerPartition(1, PARTITIONS)
    p.wait(T0 + 20, "alice", 0.0)
    assert watermarks.on_watermark(p, 0, T0 + 30) == []
    assert watermarks.announce(p, 0.0, 1.0) is None  # not every match partition yet
    assert watermarks.on_watermark(p, 1, T0 + 30) == []
    assert watermarks.on_watermark(p, 2, T0 + 25) == ["alice"]  # every mark past her start
    assert watermarks.announce(p, 5.0, 1.0) == AbandonWatermark(1, T0 + 25)
    assert watermarks.announce(p, 5.0, 1.0) is None  # nothing new
    watermarks.on_watermark(p, 2, T0 + 35)
    assert watermarks.announce(p, 5.5, 1.0) is None  # too soon: a later watermark says it
    assert watermarks.announce(p, 6.0, 1.0) == AbandonWatermark(1, T0 + 30)


def test_decisions_wait_until_event_time_has_stood_past_them_for_a_few_ticks() -> None:
    """What a burst read one topic ahead of the other needs (docs/event-time.md): event time
    that leaps is decided on, and promised to the player partitions, only once it has stood
    there SETTLE_TICKS ticks or SETTLE_SECONDS, whichever comes first; event time moving with
    the wall clock is promised at once."""
    p = match_partition()
    wall = 1.0

    def now() -> float | None:
        return MatchContext.of(p, {}, Outbox(), wall).now

    def tick(seconds: float = 0.1) -> None:
        nonlocal wall
        wall += seconds
        watermarks.on_tick(p, wall, wall)

    def everyone_read(at: float) -> None:
        watermarks.observe(p, STARTED, at, wall, forwarded=False)
        for source in range(PARTITIONS):
            watermarks.on_progress(p, Progress(source, wall, None, None, at), wall)
        p.time.reports[0] = (None, None)

    everyone_read(T0)
    for _ in range(SETTLE_TICKS):
        assert now() is None  # not yet stood anywhere for long enough
        tick(0.01)
    assert now() is not None
    tick()
    watermark = watermarks.mark(p, lambda m: False, wall)
    assert watermark is not None and watermark.at == p.time.now  # moving with the wall: at once
    for slow in (False, True):
        # A leap of ten minutes (a burst's first topic): neither decided on nor promised yet.
        leap = p.time.now
        assert leap is not None
        everyone_read(leap + 600)
        assert now() is not None and now() < leap + 1  # type: ignore[operator]
        assert watermarks.mark(p, lambda m: False, wall) is None
        if slow:  # ticks late under load: half a second of wall time is as good
            tick(SETTLE_SECONDS + 0.01)
        else:
            for _ in range(SETTLE_TICKS - 1):
                tick(0.01)
                assert now() is not None and now() < leap + 1  # type: ignore[operator]
                assert watermarks.mark(p, lambda m: False, wall) is None
            tick(0.01)
        # It has stood there long enough.
        assert now() is not None and now() >= leap + 600  # type: ignore[operator]
        watermark = watermarks.mark(p, lambda m: False, wall)
        assert watermark is not None and watermark.at >= leap + 600
