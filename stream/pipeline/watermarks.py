"""The event-time protocol, both sides, in the order docs/event-time.md tells it.

1. **Input partitions**: a match partition notes how far it has read each input topic
   (:func:`observe`).
2. **Progress** (stage 1): at the end of a batch after a leader's tick, or of any batch at
   most every SKILLSTREAM_PROGRESS_SECONDS (:func:`report_due`), a match partition tells every
   match partition how far it has read, or that it has read everything (:func:`report`); each
   notes the others' reports (:func:`on_progress`) and moves its clock on ticks
   (:func:`on_tick`). From the reports each partition knows event time everywhere
   (stream/pipeline/eventtime.py: ``EventTime``, the lateness, ``Deadlines``).
3. **Watermarks** (stage 2): what a match partition's joins promise, sent to every player
   partition when it moves (:func:`mark`); a player partition holds a snapshot until every
   match partition's watermark is past the match's start (:func:`on_watermark`,
   ``PlayerPartition.allows``).
4. **Abandon watermarks**: once every watermark passed a start, every abandon request a start
   before it could cause has been sent; a player partition says so to every match partition
   (:func:`announce`), which releases the results held for it (:func:`on_abandon_watermark`).

Each function changes one partition's event-time state and returns what goes out (or which
matches or players to look at again); the processors (stream/pipeline/matches.py, players.py)
put the commands in the outbox, in the order described there, and make the decisions. No I/O.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable

from stream.pipeline.matchpartition import FINISHED, LEAP_SECONDS, STARTED, MatchPartition
from stream.pipeline.playerpartition import PlayerPartition
from stream.protocol import AbandonWatermark, Progress, Watermark

__all__ = [
    "announce",
    "mark",
    "observe",
    "on_abandon_watermark",
    "on_progress",
    "on_tick",
    "on_watermark",
    "report",
    "report_due",
]

# --- the match side ------------------------------------------------------------------------------


def observe(
    partition: MatchPartition, kind: str, at: float, wall: float, *, forwarded: bool
) -> None:
    """A match event at ``at`` read at ``wall`` (``kind``: STARTED or FINISHED). One read on
    this partition's own inputs counts for its progress reports wherever it belongs; one
    ``forwarded`` here from the partition that read it only moves the clock."""
    if not forwarded:
        if partition.read.get(kind, at) <= at:
            partition.read[kind] = at
        if partition.latest is None or at > partition.latest:
            partition.latest = at
    partition.time.clock.observe(at, wall)


def on_tick(partition: MatchPartition, round_wall: float, wall: float) -> None:
    """The leader's tick: the batch's wall time moves the clock; the tick's names the round
    that this partition's next report answers."""
    partition.time.clock.tick(wall)
    partition.ticked = round_wall
    partition.settling.append((wall, partition.time.now))


def on_progress(partition: MatchPartition, progress: Progress, wall: float) -> None:
    """Another match partition's report. (One of its own is from a version that sent them to
    itself: its own are applied where they are made, see :func:`report`.)"""
    if progress.source != partition.number:
        partition.time.report(
            progress.source, progress.started, progress.finished, progress.latest, wall
        )
        partition.mark_due = True


def on_abandon_watermark(
    partition: MatchPartition, source: int, at: float, partitions: int
) -> list[str]:
    """Player partition ``source`` has sent every abandon request for a start before ``at``:
    the matches whose results were held for that (callers re-check each entry)."""
    if at > partition.abandons.get(source, at - 1):
        partition.abandons[source] = at
    return partition.held.due(partition.abandons_out(partitions))


def report_due(partition: MatchPartition, wall: float, every: float | None) -> bool:
    """Whether the batch ending now reports the partition's progress: after a tick, and after
    any batch at most every ``every`` seconds (None: on ticks only)."""
    if partition.ticked is not None:
        return True
    return every is not None and wall - partition.reported >= every


def report(
    partition: MatchPartition, wall: float, *, started_done: bool, finished_done: bool
) -> Progress:
    """This partition's progress, applied here and returned to be sent to every other match
    partition (after every forward of the batch). ``started_done``/``finished_done``: the
    worker has processed everything the broker holds on the partition's match-started /
    match-finished input. The round is the tick's, or the batch's wall time."""
    partition.time.clock.tick(wall)
    # Caught up, a partition promises what it will read next is no older than the latest
    # event time it knows of now, up to the lateness: its clock, sent as its bound. (Sending
    # "caught up" alone let the receiver bound it by the receiver's own clock when it read
    # the report, which may have moved on since with events published after the report:
    # a report read back late, as a restarted partition reads its commands again, then
    # promised joins the reporter had yet to forward. Found by the crash simulator.)
    # Without a clock (nothing heard of yet) it promises nothing: everything waits for it, one
    # round at most, until it hears the others' latest times.
    clock = partition.time.clock.value or 0.0
    progress = Progress(
        partition.number,
        wall if partition.ticked is None else partition.ticked,
        clock if started_done else partition.read.get(STARTED, 0.0),
        clock if finished_done else partition.read.get(FINISHED, 0.0),
        partition.latest,
    )
    partition.ticked = None
    partition.reported = wall
    # Its own report is applied here, not read back from the log: after a crash the partition
    # reads its inputs again from the last commit, and a report of its previous life read back
    # first would claim what it has not re-read yet.
    partition.time.report(
        progress.source, progress.started, progress.finished, progress.latest, wall
    )
    partition.mark_due = True
    return progress


def mark(
    partition: MatchPartition, unjoined: Callable[[str], bool], wall: float
) -> Watermark | None:
    """What this partition's joins promise, to be sent to every player partition (at the end
    of a batch that read or made a report, after every join the batch sent); None when it has
    not moved.

    Joins go out for a start when it is read, and for a finish without a start, dated at its
    finish, once event time passes it: so the promise is the lower of both topics'
    watermarks, and no higher than a finish with a line-up still waiting here
    (``unjoined(match_id)``: that match's finish still waits for its start)."""
    partition.mark_due = False
    joined = partition.time.now
    if joined is not None:
        # Event time that leapt (a burst read one topic ahead of the other, or a backlog)
        # promises only what it has stood at a while (MatchPartition.settled): the other
        # topic's part of a burst may not have been fetched yet, and a promise of joins
        # that are not out yet also promises abandon requests that are not. Event time
        # moving with the wall clock is promised at once: no latency added in steady state.
        settled = partition.settled(wall)
        if settled is not None and joined - settled > LEAP_SECONDS:
            joined = settled
    waiting = partition.unjoined
    while waiting:
        at, match_id = waiting[0]
        if unjoined(match_id):
            joined = None if joined is None else min(joined, at)
            break
        heapq.heappop(waiting)
    if joined is None or (partition.sent is not None and joined <= partition.sent):
        return None
    partition.sent = joined
    return Watermark(partition.number, joined)


# --- the player side -----------------------------------------------------------------------------


def on_watermark(partition: PlayerPartition, source: int, at: float) -> list[str]:
    """Match partition ``source`` has sent every join of a match started before ``at``: the
    players whose oldest pending match that now allows (callers re-check their records)."""
    marks = partition.marks
    if at > marks.get(source, at - 1):
        marks[source] = at
    return partition.due()


def announce(partition: PlayerPartition, wall: float, every: float) -> AbandonWatermark | None:
    """Every join of a match started before the lowest watermark has been handled here, and
    with it every abandon request it caused (sent before this, on the same partitions): what
    to tell every match partition, once per step and at most every ``every`` seconds (None:
    nothing new, or too soon: a later watermark announces it)."""
    marks = partition.marks
    if len(marks) < partition.partitions:
        return None
    floor = min(marks.values())
    if partition.announced is not None and floor <= partition.announced:
        return None
    if wall - partition.announced_at < every:
        return None
    partition.announced_at = wall
    partition.announced = floor
    return AbandonWatermark(partition.number, floor)
