"""stream/pipeline/combiner.py, step by step: what it answers each partition, when it is silent,
and what holds its watermark back. The whole protocol, with its decisions, runs in
test_event_time.py and test_rollback.py on the in-memory harness."""

from __future__ import annotations

from stream.pipeline.combiner import LEAP_SECONDS, Combiner, Sends
from stream.pipeline.eventtime import SETTLE_TICKS, PartitionClock
from stream.protocol import Combined, PlayerReport, Report, View

T0 = 1_780_000_000.0
PARTITIONS = 3
EPOCH = 7


def combiner(lateness: float = 0.0) -> Combiner:
    return Combiner(PARTITIONS, lateness, EPOCH, PartitionClock(None, 0.0))


def report(
    source: int,
    at: float,
    *,
    pending: bool = False,
    unjoined: float | None = None,
    forwarded: dict[int, float] | None = None,
    seen: tuple[int, int] = (0, 0),
    finished: float | None = None,
    life: int = 1,
) -> Report:
    done = at if finished is None else finished
    return Report(source, life, *seen, at, done, at, unjoined, dict(forwarded or {}), pending)


def heard_from_everyone(c: Combiner, at: float, wall: float = 1.0, **kwargs: object) -> None:
    """Every partition reports ``at``, having read the combiner's latest round."""
    kwargs.setdefault("seen", (EPOCH, c.round))
    for source in range(PARTITIONS):
        c.on_report(report(source, at, **kwargs), wall)  # type: ignore[arg-type]
        c.on_player_report(PlayerReport(source, at - 1, False))


def settled(c: Combiner, at: float, wall: float = 1.0, **kwargs: object) -> float:
    """``c`` greeted, every partition's report of ``at`` read, and event time stood there a
    few ticks: the wall time then."""
    c.on_tick(wall)
    heard_from_everyone(c, at, wall, **kwargs)
    for _ in range(SETTLE_TICKS):
        wall += 0.01
        c.on_tick(wall)
    return wall


def views(sends: Sends) -> dict[int, View]:
    return dict(sends.views)


def test_its_first_round_greets_every_partition_and_asks_for_reports() -> None:
    c = combiner()
    first = c.on_tick(1.0)
    assert sorted(views(first)) == [0, 1, 2]
    assert all(v.tick and v.started is None and v.epoch == EPOCH for v in views(first).values())
    assert first.marks == [(p, Combined(None, EPOCH, 1)) for p in range(PARTITIONS)]
    # Not heard from anyone yet: it keeps polling, but greets once.
    again = c.on_tick(1.1)
    assert sorted(views(again)) == [0, 1, 2] and again.marks == []


def test_each_match_partition_hears_the_lowest_bounds_of_the_others_only() -> None:
    c = combiner()
    c.on_tick(1.0)
    c.on_report(report(0, T0 + 30), 1.0)
    c.on_report(report(1, T0 + 10, finished=T0 + 50), 1.0)
    c.on_report(report(2, T0 + 20), 1.0)
    sent = views(c.on_tick(1.1))
    assert (sent[0].started, sent[0].finished) == (T0 + 10, T0 + 20)
    assert (sent[1].started, sent[1].finished) == (T0 + 20, T0 + 20)
    assert (sent[2].started, sent[2].finished) == (T0 + 10, T0 + 30)
    # The latest event time anywhere, moved on with the wall since it was read.
    assert all(v.latest == T0 + 30 + 0.1 for v in sent.values())
    # A lower report later (a partition restored behind) does not lower what it promised.
    c.on_report(report(1, T0 + 5), 1.2)
    assert views(c.on_tick(1.3))[0].started == T0 + 10


def test_a_partition_not_heard_from_leaves_the_others_without_a_view() -> None:
    c = combiner()
    c.on_report(report(0, T0 + 30), 1.0)
    c.on_report(report(1, T0 + 10), 1.0)
    sent = views(c.on_tick(1.1))
    assert sent[2].started == T0 + 10  # the others of 2 are 0 and 1: both heard from
    assert sent[0].started is None and sent[1].started is None
    assert c.now() is None and c.mark(1.1) is None


def test_silent_when_nothing_is_pending_awake_when_something_is() -> None:
    c = combiner()
    assert c.wants_tick  # it has not greeted yet
    c.on_tick(1.0)
    heard_from_everyone(c, T0 + 10)
    assert not c.active and c.wants_tick  # the reports changed the views: owed
    assert c.end_of_batch(1.1, 0.05)
    assert not c.wants_tick  # nothing pending, nothing owed: the worker sends no tick
    c.on_tick(1.2)  # the watermark, once event time has stood a moment (were a tick sent)
    assert not c.on_tick(1.3) and not c.on_tick(5.0)  # idle: nothing at all
    c.on_report(report(1, T0 + 20, pending=True), 6.0)
    assert c.active and c.wants_tick
    polled = c.on_tick(6.1)
    assert sorted(views(polled)) == [0, 1, 2] and all(v.tick for v in views(polled).values())
    c.on_report(report(1, T0 + 25), 6.2)
    c.on_tick(6.3)
    assert not c.active and not c.on_tick(6.4)
    # A player partition holding a snapshot keeps it awake too.
    c.on_player_report(PlayerReport(2, T0 + 9, True))
    assert c.active


def test_between_ticks_it_sends_only_what_changed_at_most_every_interval() -> None:
    c = combiner()
    c.on_tick(1.0)
    heard_from_everyone(c, T0 + 10)
    c.end_of_batch(1.05, 0.05)
    c.on_report(report(0, T0 + 40), 1.06)
    c.on_report(report(1, T0 + 40), 1.06)
    assert not c.end_of_batch(1.07, 0.05)  # too soon
    changed = c.end_of_batch(1.2, 0.05)
    # Only partition 2's others moved (0 and 1 still have 2 among theirs): only it hears.
    assert sorted(views(changed)) == [2]
    assert views(changed)[2].started == T0 + 40 and not views(changed)[2].tick
    assert changed.marks == []  # 2 still bounds event time everywhere
    assert not c.end_of_batch(1.3, 0.05)  # nothing new


def test_the_watermark_waits_for_every_partition_to_report_to_this_life() -> None:
    """A combiner restarted forgets the forwards its predecessor knew of: until every match
    partition has read its greeting (behind those forwards) and reported, no watermark."""
    c = combiner()
    wall = settled(c, T0 + 10, seen=(EPOCH - 1, 40))  # reports to an earlier life
    assert c.now() == T0 + 10 and c.mark(wall) is None
    c.on_report(report(0, T0 + 10, seen=(EPOCH, 1)), wall)
    c.on_report(report(1, T0 + 10, seen=(EPOCH, 1)), wall)
    assert c.mark(wall) is None and c.active
    c.on_report(report(2, T0 + 10, seen=(EPOCH, 1)), wall)
    assert c.mark(wall) == T0 + 10


def test_the_watermark_moves_with_event_time_everywhere_and_only_up() -> None:
    c = combiner(lateness=0.5)
    wall = settled(c, T0 + 10, pending=True)
    assert c.sent_mark == T0 + 9.5
    assert c.on_tick(wall + 0.01).marks == []  # has not moved: not sent again
    heard_from_everyone(c, T0 + 11)
    sent = c.end_of_batch(wall + 0.1, 0.05).marks
    assert sent == [(p, Combined(T0 + 10.5, EPOCH, c.round)) for p in range(PARTITIONS)]


def test_the_watermark_stays_below_a_finish_waiting_for_its_start() -> None:
    """The latest report's waiting finish pins a partition's part, even below bounds it
    reported before (a forwarded finish read after them)."""
    c = combiner()
    wall = settled(c, T0 + 100)
    for source in range(PARTITIONS):
        unjoined = T0 + 103 if source == 1 else None
        c.on_report(report(source, T0 + 105, unjoined=unjoined, seen=(EPOCH, 1)), wall)
    assert c.mark(wall) == T0 + 103
    c.on_report(report(1, T0 + 108, seen=(EPOCH, 1)), wall)  # its start came: joins out
    assert c.mark(wall) == T0 + 105


def test_a_partition_restored_behind_its_waiting_finish_keeps_the_watermark_below_it() -> None:
    """Partition 1 reported a finish waiting at T0 + 40, then was restored behind it: its new
    life has read nothing yet and waits for nothing. Its part of the watermark stays where its
    last life left it until the new one has read a view sent after its first report (behind
    everything the last life had read), then follows what it reports."""
    c = combiner()
    wall = settled(c, T0 + 35)
    for source in (0, 2):
        c.on_report(report(source, T0 + 44, seen=(EPOCH, 1)), wall)
    c.on_report(report(1, T0 + 44, unjoined=T0 + 40, seen=(EPOCH, 1)), wall)
    c.on_report(report(1, 0.0, seen=(EPOCH, 1), life=2), wall)  # restored
    assert c.others(0) == (T0 + 44, T0 + 44)  # 1's bounds: the highest it reported
    assert c.mark(wall) == 0.0  # the new life's own bounds: it has read nothing again yet
    # Read on, but not the view sent since (nor, maybe, the finish on its own input).
    c.on_report(report(1, T0 + 41, seen=(EPOCH, 1), life=2), wall)
    assert c.mark(wall) == T0 + 40
    # A late report of the last life (a worker cut off from the group) lifts nothing.
    c.on_report(report(1, T0 + 44, seen=(EPOCH, 99), life=1), wall)
    assert c.mark(wall) == T0 + 40
    later = views(c.on_tick(wall + 0.01))[1]
    c.on_report(report(1, T0 + 44, unjoined=T0 + 40, seen=(EPOCH, later.round), life=2), wall)
    assert c.mark(wall) == T0 + 40  # caught up: the finish read again pins it itself
    c.on_report(report(1, T0 + 44, seen=(EPOCH, later.round), life=2), wall)  # joins sent
    assert c.mark(wall) == T0 + 44


def test_a_late_report_of_a_cut_off_life_does_not_silence_the_partition_s_reader() -> None:
    """A combiner that starts hears partition 1's new life (2: pending, a match waiting for
    event time) first, then a late report of its last life (1: a worker cut off from its group,
    which this combiner never heard of), which takes it for the newer. Life 2 goes on reading
    the views (the combiner stays awake: 1's part is frozen) and, once it reports one sent
    after it was taken over, speaks for the partition again: its pending is heard, and its
    part of the watermark follows its own bounds once more."""
    c = combiner()
    c.on_tick(1.0)
    for source in (0, 2):
        c.on_report(report(source, T0 + 50, seen=(EPOCH, 1)), 1.0)
    for source in range(PARTITIONS):
        c.on_player_report(PlayerReport(source, T0, False))
    c.on_report(report(1, T0 + 50, pending=True, seen=(EPOCH, 1), life=2), 1.0)
    c.on_report(report(1, T0 + 45, seen=(3, 40), life=1), 1.0)  # the old life, late
    assert not c.reports[1].pending and c.active  # frozen: awake
    for round_ in range(2, 5):  # life 2 reads each round's view and answers it
        sent = views(c.on_tick(1.0 + round_ / 10))
        assert sent[1].round == c.round
        c.on_report(
            report(1, T0 + 50 + round_, pending=True, seen=(EPOCH, c.round), life=2),
            1.0 + round_ / 10,
        )
    assert c.reports[1].life == 2 and c.reports[1].pending
    assert c.frozen == {} and c.active
    # Settled: life 2 says so, and the combiner falls silent.
    c.on_report(report(1, T0 + 55, seen=(EPOCH, c.round), life=2), 1.5)
    c.end_of_batch(1.6, 0.05)
    assert not c.active and not c.wants_tick


def test_a_late_player_report_of_a_cut_off_life_does_not_hide_its_reader_s_waiting() -> None:
    """Player partition 1's reader (life 2) has a player waiting for the watermark; a late
    report of its last life (1, a worker cut off from its group) says nothing waits. The
    combiner takes the partition as pending and asks it; only a report that has read the ask
    speaks for it again, and then whatever it says."""
    c = combiner()
    c.on_tick(1.0)
    for source in range(PARTITIONS):
        c.on_report(report(source, T0 + 50, seen=(EPOCH, 1)), 1.0)
    for source in (0, 2):
        c.on_player_report(PlayerReport(source, T0, False, 1, EPOCH, 1))
    c.on_player_report(PlayerReport(1, T0, True, 2, EPOCH, 1))
    c.on_player_report(PlayerReport(1, T0, False, 1, 3, 40))  # the old life, late
    assert c.waiting[1] and c.active
    asks = [(t, m) for t, m in c.on_tick(1.1).marks if m.at is None]
    assert asks == [(1, Combined(None, EPOCH, c.round))]
    c.on_player_report(PlayerReport(1, T0, False, 1, 3, 40))  # again, before the ask: nothing
    assert c.waiting[1]
    for _ in range(2):  # the reader answers each ask (a second one: it was not the last life)
        c.on_player_report(PlayerReport(1, T0, True, 2, EPOCH, c.round))
        assert c.waiting[1]
        c.on_tick(1.2)
    c.on_player_report(PlayerReport(1, T0, True, 2, EPOCH, c.round))
    assert c.asks == set() and c.waiting[1]
    c.on_player_report(PlayerReport(1, T0 + 1, False, 2, EPOCH, c.round))  # its player served
    c.end_of_batch(2.0, 0.05)
    assert not c.active and not c.wants_tick


def test_a_forward_holds_the_watermark_until_its_home_has_read_a_later_view() -> None:
    """Partition 2 forwarded an event at T0 + 5 to partition 1 before its report: the joins
    for it go out when 1 reads it, which it has once it reports a view sent after 2's report
    (the view is behind the forward on 1's partition)."""
    c = combiner()
    wall = settled(c, T0 + 10)
    c.on_report(report(2, T0 + 10, forwarded={1: T0 + 5}, seen=(EPOCH, c.round)), wall)
    assert c.mark(wall) == T0 + 5
    # 1 reports, having seen only a round sent before 2's report: not yet.
    c.on_report(report(1, T0 + 10, seen=(EPOCH, c.round)), wall)
    assert c.mark(wall) == T0 + 5
    sent = views(c.on_tick(wall + 0.01))
    later = (sent[1].epoch, sent[1].round)
    # A report naming that round, but of another combiner's life, says nothing.
    c.on_report(report(1, T0 + 10, seen=(EPOCH + 1, later[1])), wall)
    assert c.mark(wall) == T0 + 5
    c.on_report(report(1, T0 + 10, seen=later), wall)
    assert c.mark(wall) == T0 + 10
    assert c.forwards == []


def test_a_leap_of_event_time_reaches_the_watermark_once_it_has_stood() -> None:
    c = combiner()
    wall = settled(c, T0)
    heard_from_everyone(c, T0 + 600, wall)
    assert c.now() == T0 + 600 and c.mark(wall) == T0  # leapt ten minutes: held
    for _ in range(SETTLE_TICKS):
        wall += 0.01
        c.on_tick(wall)
    assert c.mark(wall) == T0 + 600
    heard_from_everyone(c, T0 + 600 + LEAP_SECONDS / 2, wall)
    assert c.mark(wall) == T0 + 600 + LEAP_SECONDS / 2  # a small step: at once


def test_the_abandon_floor_is_the_lowest_of_every_player_partition() -> None:
    c = combiner()
    c.on_player_report(PlayerReport(0, T0 + 50, False))
    c.on_player_report(PlayerReport(1, T0 + 40, False))
    assert c.abandons() is None  # 2 has not reported
    c.on_player_report(PlayerReport(2, None, False))
    assert c.abandons() is None  # 2 has no watermark yet
    c.on_player_report(PlayerReport(2, T0 + 60, False))
    assert c.abandons() == T0 + 40
    c.on_player_report(PlayerReport(1, T0 + 30, False))  # never lower
    assert c.abandons() == T0 + 40
