"""The event-time protocol, both sides, in the order docs/event-time.md tells it.

1. **Input partitions**: a match partition notes how far it has read each input topic
   (:func:`observe`), and the partitions it forwarded events to.
2. **Reports**: at the end of a batch that read a view, or of one that read match events at
   most every SKILLSTREAM_PROGRESS_SECONDS, or of one that changed whether it is pending
   (:func:`report_due`), a match partition reports to the combiner how far it has read
   (:func:`report`), once the broker has acknowledged the rest of the batch; a player partition
   reports how far the watermark has come (:func:`player_report`).
3. **The combiner** (stream/pipeline/combiner.py, on match-command partition 0) answers each
   match partition with a view of the others (:func:`on_view`: event time everywhere, how far
   the abandon requests are out) and the player partitions with the watermark
   (:func:`on_combined`): a player partition holds a snapshot until it is past the match's
   start (``PlayerPartition.allows``). Its worker ticks it only while it wants a round
   (:func:`tick_wanted`).

Each function changes one partition's event-time state and returns what goes out (or which
matches or players to look at again); the processors (stream/pipeline/matches.py, players.py)
put the commands in the outbox, in the order described there, and make the decisions. No I/O.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable

from stream.pipeline.combiner import LEAP_SECONDS
from stream.pipeline.eventtime import SETTLE_SECONDS, sample
from stream.pipeline.matchpartition import FINISHED, STARTED, MatchPartition
from stream.pipeline.playerpartition import PlayerPartition
from stream.pipeline.workarounds.private import ANSWER_SLACK
from stream.protocol import Combined, PlayerReport, Report, View

__all__ = [
    "forwarding",
    "joined",
    "observe",
    "on_combined",
    "on_view",
    "player_report",
    "report",
    "report_due",
    "tick_wanted",
]

# --- the match side ------------------------------------------------------------------------------


def observe(
    partition: MatchPartition, kind: str, at: float, wall: float, *, forwarded: bool
) -> None:
    """A match event at ``at`` read at ``wall`` (``kind``: STARTED or FINISHED). One read on
    this partition's own inputs counts for its reports wherever it belongs; one ``forwarded``
    here from the partition that read it only moves the clock."""
    if not forwarded:
        if partition.read.get(kind, at) <= at:
            partition.read[kind] = at
        if partition.latest is None or at > partition.latest:
            partition.latest = at
    partition.time.clock.observe(at, wall)
    partition.moved = True


def forwarding(partition: MatchPartition, home: int, at: float) -> None:
    """An event at ``at`` forwarded to partition ``home``: the next report names it."""
    known = partition.forwarded.get(home)
    if known is None or at < known:
        partition.forwarded[home] = at


def on_view(partition: MatchPartition, view: View, wall: float) -> list[str]:
    """The combiner's view of the other partitions; one sent on a tick is the partition's
    tick too (the clock moves on, event time is sampled for settling, a report is due).
    Returns the matches whose results were held for the abandon requests it now says are out
    (callers re-check)."""
    partition.seen = (view.epoch, view.round)
    partition.time.view(view.started, view.finished, view.latest, wall)
    if view.tick:
        partition.viewed = True
        partition.time.clock.tick(wall)
        sample(partition.settling, wall, partition.time.now)
        sample(partition.pace, wall, partition.time.clock.value)
    if view.abandons is not None and (
        partition.abandons is None or view.abandons > partition.abandons
    ):
        partition.abandons = view.abandons
    return partition.held.due(partition.abandons)


def tick_wanted(home: MatchPartition | None) -> bool:
    """Whether the worker reading the combiner's partition (match partition 0, ``home``: its
    state here, None until its first batch) sends it a tick: until that first batch builds the
    combiner (which greets every partition on it), then while the combiner wants one. With
    nothing pending anywhere no tick goes: a quiet system has nothing to time out, and the
    report of the first partition to be pending again wakes the combiner."""
    combiner = None if home is None else home.combiner
    return combiner is None or combiner.wants_tick


def report_due(partition: MatchPartition, wall: float, every: float | None) -> bool:
    """Whether the batch ending now reports: it read a view, it is the first since the
    assignment, whether it is pending changed, or it read a match event since the last report,
    at most every ``every`` seconds (None: only those). A batch of commands alone (the
    combiner's tick on its own partition, answers to joins) does not move its bounds beyond
    the clock's wall-time drift, which nobody waits for while nothing is pending."""
    if partition.viewed or partition.reported_pending != partition.pending:
        return True
    return every is not None and partition.moved and wall - partition.reported >= every


def report(
    partition: MatchPartition,
    unjoined: Callable[[str], bool],
    wall: float,
    *,
    started_caught_up: float | None,
    finished_caught_up: float | None,
) -> Report | None:
    """This partition's report, applied here and returned to be sent to the combiner once the
    broker has the rest of the batch (None: the same as the last one sent, nothing to say).
    ``started_caught_up``/``finished_caught_up``: the wall time of the broker's last answer
    for the partition's match-started / match-finished input, every record of which the
    worker has processed (None: it has not). ``unjoined(match_id)``: that match's finish still
    waits here for its start."""
    partition.time.clock.tick(wall)
    answers = {STARTED: started_caught_up, FINISHED: finished_caught_up}
    started = _bound(partition, STARTED, answers)
    finished = _bound(partition, FINISHED, answers)
    earliest = _earliest_unjoined(partition, unjoined)
    epoch, round_ = partition.seen
    pending = partition.pending
    forwarded = dict(partition.forwarded)
    sent = Report(
        partition.number,
        partition.life,
        epoch,
        round_,
        started,
        finished,
        partition.latest,
        earliest,
        forwarded,
        pending,
    )
    partition.viewed = False
    partition.moved = False
    partition.reported = wall
    partition.reported_pending = pending
    samples = partition.settling
    if not samples or wall - samples[-1][0] > SETTLE_SECONDS:
        # No tick for a while (none go out while nothing is pending anywhere, and they come
        # late under load): event time as it stood before this report is a sample, so a leap
        # the report makes (a burst after a quiet spell) stands SETTLE_SECONDS before it counts.
        sample(samples, wall, partition.time.now)
        sample(partition.pace, wall, partition.time.clock.before(wall))
    # Its own bounds are applied here, not read back: after a crash the partition reads its
    # inputs again from the last commit, and a report of its previous life would claim what it
    # has not re-read yet (the combiner's views leave each partition's own report out).
    partition.time.report(started, finished, partition.latest, wall)
    if sent == partition.last_report and not forwarded:
        return None
    # Forwards are named once, in the report that goes out (one that names some always does).
    partition.forwarded.clear()
    partition.last_report = sent
    return sent


def _bound(partition: MatchPartition, kind: str, answers: dict[str, float | None]) -> float:
    """How far input ``kind`` is read: the latest event time processed on it, and once caught
    up (``answers[kind]``: when the broker last answered for it), the latest event time known
    of from records that had reached the broker by then.

    Caught up, a partition promises that what it reads next is no older than that, up to the
    lateness: the fleet publishes in event-time order up to the lateness. Those records are
    the clock as it stood at the answer, and this partition's own records of either input
    fetched by then (all it processed of an input whose own last answer was the same fetch
    response or was made ANSWER_SLACK before it, even if processed since: two answers' times
    closer than that may be in either order, each being an estimate). The time of an answer is
    when the broker made it, at the latest (the end-offset port's contract).

    Not the clock now: a view or an event read since the answer can carry event time from
    records that reached the broker after it, while the input may hold older ones this worker
    has not fetched yet (an answer left stale by a paused partition or a slow fetch; the crash
    simulator draws them: docs/event-time.md). Without a clock then (nothing heard of yet, or
    longer ago than the clock keeps) it promises only what it read: everything waits for it,
    until a newer answer."""
    read = partition.read.get(kind, 0.0)
    answered = answers[kind]
    if answered is None:
        return read
    then = partition.time.clock.at(answered)
    known = read if then is None else max(read, then)
    for other, at in answers.items():
        # The same answer (one fetch response: one time for all its partitions), or one made
        # well before: the other input's records were at the broker by then.
        if other != kind and at is not None and (at == answered or at <= answered - ANSWER_SLACK):
            known = max(known, partition.read.get(other, 0.0))
    return known


def joined(partition: MatchPartition, unjoined: Callable[[str], bool], wall: float) -> float | None:
    """Every start homed here before this has been read and its joins sent (None: not known
    yet): event time everywhere (held where it leapt, as the combiner holds its watermark),
    and no later than a finish still waiting here for its start. The learning windows close
    on it (stream/pipeline/learnedpopulation.py)."""
    now = partition.time.now
    stood = partition.settled(wall)
    if now is not None and stood is not None:
        # Not raised while event time has not stood anywhere yet.
        if now - stood > LEAP_SECONDS:
            now = stood
        earliest = _earliest_unjoined(partition, unjoined)
        if earliest is not None:
            now = min(now, earliest)
        if partition.joined is None or now > partition.joined:
            partition.joined = now
    return partition.joined


def _earliest_unjoined(partition: MatchPartition, unjoined: Callable[[str], bool]) -> float | None:
    """The earliest finish still waiting here for its start (stale heap items dropped)."""
    waiting = partition.unjoined
    while waiting:
        at, match_id = waiting[0]
        if unjoined(match_id):
            return at
        heapq.heappop(waiting)
    return None


# --- the player side -----------------------------------------------------------------------------


def on_combined(partition: PlayerPartition, command: Combined) -> list[str]:
    """The combiner's watermark: every join of a match started before ``at`` has been sent
    (None: the combiner asks for a report, which repeats its round). The players whose oldest
    pending match that now allows (callers re-check their records)."""
    at = command.at
    partition.seen = (command.epoch, command.round)
    if at is None:
        partition.asked = True
    elif partition.mark is None or at > partition.mark:
        partition.mark = at
    return partition.due()


def player_report(partition: PlayerPartition, wall: float, every: float) -> PlayerReport | None:
    """What to tell the combiner at the end of a batch, once the broker has the rest of it:
    every join of a match started before the watermark has been handled here, and with it
    every abandon request it caused. Sent when asked, when whether it is pending changed, and
    when the watermark moved, at most every ``every`` seconds (None: nothing to say yet)."""
    pending = bool(partition.waiting or partition.adjusting)
    moved = partition.mark is not None and (
        partition.reported is None or partition.mark > partition.reported
    )
    due = partition.asked or pending != partition.reported_pending
    if not due and (not moved or wall - partition.reported_at < every):
        return None
    partition.asked = False
    partition.reported = partition.mark
    partition.reported_at = wall
    partition.reported_pending = pending
    return PlayerReport(partition.number, partition.mark, pending, partition.life, *partition.seen)
