"""The combiner: where every partition's event-time report meets, and from where each partition
hears what the others promise (docs/event-time.md, "Control traffic as the partitions grow").

It lives with match-command partition 0: whoever owns that partition combines. Each match
partition reports to it (:class:`stream.protocol.Report`) and each player partition
(:class:`stream.protocol.PlayerReport`), once the broker has acknowledged the rest of the
reporter's batch; it answers each match partition with a :class:`stream.protocol.View` (the
lowest bounds among the *other* match partitions, the latest event time anywhere, how far every
player partition's abandon requests are out) and every player partition with a
:class:`stream.protocol.Combined` watermark (every join of a match started before it is out).
A round costs about 4P commands for P partitions, where each partition telling each other
cost 3P².

Why the order holds: a report goes out after what it covers is in the broker, and whatever the
combiner sends after reading it is appended later, on every partition, so Kafka's order
per partition proves that nothing it promises can be overtaken. One thing a report cannot
cover is a forwarded event: the joins for it are sent by its home partition when it processes
the forward. So a report names the partitions it forwarded to (with the earliest event time
forwarded), and the watermark stays below that time until the home partition reports having
read a view sent after the forwarder's report: the view is behind the forward on its partition.

Silent when idle: rounds go out on the ticks only while something is pending somewhere (a
report says so), or while the combiner has not heard from every partition since it started,
and its worker sends ticks only then (:attr:`Combiner.wants_tick`); between ticks, at most
every ``every`` seconds, it sends only the views that changed and the watermark when it moved.
A combiner that starts (a rebalance, a crash) greets every partition once, and each answers
with a report; what the partitions kept (their views, the player partitions' watermarks) stays
valid, since every bound is a promise about the moment it was made.

Pure: the match side (stream/pipeline/matches.py) feeds it and sends what it returns. Replay:
reports read again (a combiner restored behind its offsets) are promises still; receivers keep
the highest they are sent.
"""

from __future__ import annotations

import random
from collections import deque
from dataclasses import dataclass, field

from stream.pipeline.eventtime import SETTLE_TICKS, PartitionClock, sample, settled
from stream.protocol import Combined, PlayerReport, Report, View

__all__ = ["LEAP_SECONDS", "Combiner", "Sends", "new_epoch"]

# How far the watermark may move while settling and still be sent at once: a watermark that
# leaps further (a burst read one topic ahead of the other, a backlog) waits as decisions do.
LEAP_SECONDS = 10.0

# The ended lives kept per partition (a worker cut off from its group reports for seconds).
RETIRED_KEPT = 64
# Random: names are only compared, and two workers' clocks may agree to the millisecond.
_NAMES = random.SystemRandom()


def new_epoch(wall: float) -> int:
    """A name for a life (a combiner's, a match partition's on its worker), different from
    every other's: a report that names a round of another life confirms nothing. ``wall``
    leads it, for people reading the commands."""
    return int(wall) * 1_000_000_000 + _NAMES.randrange(1_000_000_000)


@dataclass(frozen=True, slots=True)
class Sends:
    """What a combiner sends now: views per match partition, watermarks per player partition."""

    views: list[tuple[int, View]] = field(default_factory=list)
    marks: list[tuple[int, Combined]] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.views or self.marks)


@dataclass(slots=True)
class Combiner:
    """One combiner's state: in memory only (after a restart it greets every partition)."""

    partitions: int
    lateness: float
    epoch: int
    clock: PartitionClock
    round: int = 0
    greeted: bool = False
    # Per match partition: the highest started and finished bounds it reported (for the
    # views and, less the lateness, the watermark), its latest report (its earliest finish
    # waiting for a start, which pins the watermark; whether it is pending), the life it
    # reported from, and those that have reported to this combiner's life (after its
    # greeting, so after every forward sent before this life began).
    bounds: dict[int, tuple[float, float]] = field(default_factory=dict)
    reports: dict[int, Report] = field(default_factory=dict)
    lives: dict[int, int] = field(default_factory=dict)
    current: set[int] = field(default_factory=set)
    # A match partition restored (a new life) may not have read again what its last life had
    # (a forwarded finish waiting for its start, whose forward that life said it had read):
    # its part of the watermark stays where it was until it reports having read a view sent
    # after its new life's first report, which is behind all of that. (round, value).
    # (round, value, the new life). ``own``: the highest bounds of the partition's current
    # life, on which its part of the watermark rests (its views rest on ``bounds``, every
    # life's: each a promise about its inputs).
    frozen: dict[int, tuple[int, float, int]] = field(default_factory=dict)
    own: dict[int, tuple[float, float]] = field(default_factory=dict)
    # Per match partition, its lives that are over: the round of this combiner's life at which
    # each was taken over.
    retired: dict[int, dict[int, int]] = field(default_factory=dict)
    # Per player partition: the highest floor it reported (None: none yet), and whether it is
    # pending.
    floors: dict[int, float | None] = field(default_factory=dict)
    waiting: dict[int, bool] = field(default_factory=dict)
    # Per player partition, the life its reports came from; where two lives reported, the
    # round of the ask sent then (a report that has not read it says nothing of pending), and
    # the partitions to ask at the next round.
    player_lives: dict[int, int] = field(default_factory=dict)
    player_asked: dict[int, int] = field(default_factory=dict)
    asks: set[int] = field(default_factory=set)
    # Forwards not known to be read by their home: (home, earliest event time, the round of
    # this life the home must have seen).
    forwards: list[tuple[int, float, int]] = field(default_factory=list)
    # What each match partition was last sent (its bounds and the abandon floor: the latest
    # event time rides along, never a reason to send), and the last watermark sent.
    sent_views: dict[int, tuple[float | None, ...]] = field(default_factory=dict)
    sent_mark: float | None = None
    sent_at: float = float("-inf")
    changed: bool = False
    # (wall time, event time) at the last ticks: the watermark's settling (eventtime.settled).
    settling: deque[tuple[float, float | None]] = field(
        default_factory=lambda: deque(maxlen=SETTLE_TICKS)
    )

    # --- what it hears ------------------------------------------------------------------------

    def on_report(self, report: Report, wall: float) -> None:
        """A match partition's report."""
        source = report.source
        started, finished = self.bounds.get(source, (report.started, report.finished))
        self.bounds[source] = (max(started, report.started), max(finished, report.finished))
        if report.latest is not None:
            self.clock.observe(report.latest, wall)
        for home, at in report.forwarded.items():
            self.forwards.append((home, at, self.round + 1))
        self.changed = True
        retired = self.retired.setdefault(source, {})
        over = retired.get(report.life)
        if over is not None:
            if report.epoch != self.epoch or not over < report.round <= self.round:
                # A life that was over already (a worker cut off from its group still
                # fetching): its bounds still hold for the views; it speaks for nothing else.
                return
            # It has read a view sent after another life took it over: it is the one reading
            # the partition. The other was a worker cut off from its group whose report came
            # late (after this life's first one, to a combiner that had not heard of it).
            del retired[report.life]
        life = self.lives.get(source)
        if life is not None and life != report.life and source in self.reports:
            if len(retired) >= RETIRED_KEPT:
                retired.clear()  # lives that old have long stopped reporting
            retired[life] = self.round
            # A new life: its part stays where the last one left it (a promise then) until it
            # has read a view sent from now on (behind every forward the last life had read),
            # and follows only this life's own bounds (it reads its inputs again from its
            # commit: a finish waiting there is pinned again once it is read).
            self.frozen[source] = (self.round + 1, self.promise(source), report.life)
            self.own.pop(source, None)
        self.lives[source] = report.life
        started, finished = self.own.get(source, (report.started, report.finished))
        self.own[source] = (max(started, report.started), max(finished, report.finished))
        frozen = self.frozen.get(source)
        if (
            frozen is not None
            and report.life == frozen[2]
            and report.epoch == self.epoch
            and report.round >= frozen[0]
        ):
            del self.frozen[source]
        self.reports[source] = report
        if report.epoch == self.epoch:
            self.current.add(source)
            self.forwards = [
                f for f in self.forwards if not (f[0] == source and f[2] <= report.round)
            ]

    def on_player_report(self, report: PlayerReport) -> None:
        """A player partition's report. Its floor is a promise whichever life made it; whether
        it is pending is its reader's to say. When two lives report (a restore; or a worker
        cut off from its group whose report comes after its successor's), the partition is
        taken as pending and asked, and only a report that has read the ask speaks again."""
        source = report.source
        floor = self.floors.get(source)
        if floor is None or (report.floor is not None and report.floor > floor):
            floor = report.floor
        self.floors[source] = floor
        self.changed = True
        asked = self.player_asked.get(source)
        if asked is not None and (report.epoch != self.epoch or report.round < asked):
            return  # made before it read the ask: maybe another life's
        life = self.player_lives.get(source)
        self.player_lives[source] = report.life
        if life is not None and life != report.life:
            self.player_asked[source] = self.round + 1  # the round of the next send
            self.asks.add(source)
            self.waiting[source] = True
            return
        self.waiting[source] = report.pending

    # --- what it knows ------------------------------------------------------------------------

    @property
    def active(self) -> bool:
        """Whether rounds go out on ticks: something is pending somewhere, or it has not heard
        from every partition, or a forward is not known to be read."""
        every = range(self.partitions)
        return (
            not self.greeted
            or len(self.current) < self.partitions
            or len(self.floors) < self.partitions
            or any(r.pending for r in self.reports.values())
            or any(self.waiting.get(p, False) for p in every)
            or bool(self.forwards)
            or bool(self.frozen)
            or bool(self.asks)
        )

    @property
    def wants_tick(self) -> bool:
        """Whether a tick has anything to do here: a round while active, or what changed
        and is still owed. Otherwise the worker sends none (nothing to time out)."""
        return self.active or self.changed

    def now(self) -> float | None:
        """Event time everywhere: the lowest bound of every match partition, never above the
        clock, minus the lateness (None: not every partition has reported)."""
        bound = self.clock.value
        if bound is None or len(self.bounds) < self.partitions:
            return None
        for started, finished in self.bounds.values():
            bound = min(bound, started, finished)
        return bound - self.lateness

    def others(self, target: int) -> tuple[float | None, float | None]:
        """The lowest started and finished bounds among the match partitions but ``target``
        (None: one has not reported)."""
        lows: list[float | None] = []
        for index in (0, 1):
            low: float | None = None
            for source, bound in self.bounds.items():
                if source != target and (low is None or bound[index] < low):
                    low = bound[index]
            complete = len(self.bounds) - (target in self.bounds) >= self.partitions - 1
            lows.append(low if complete else None)
        return lows[0], lows[1]

    def abandons(self) -> float | None:
        """Every player partition has sent every abandon request for a start before this."""
        floors = self.floors
        if len(floors) < self.partitions:
            return None
        low: float | None = None
        for floor in floors.values():
            if floor is None:
                return None
            low = floor if low is None else min(low, floor)
        return low

    def promise(self, source: int) -> float:
        """What match partition ``source``'s joins are out for: its bounds less the lateness,
        no later than its earliest finish waiting for a start (its latest report's: a
        forwarded finish read after it reported higher bounds pins it lower), no higher than
        where it stood when a new life of it began, until that life has caught up."""
        started, finished = self.own[source]
        promise = min(started, finished) - self.lateness
        unjoined = self.reports[source].unjoined
        if unjoined is not None:
            promise = min(promise, unjoined)
        frozen = self.frozen.get(source)
        return promise if frozen is None else min(promise, frozen[1])

    def mark(self, wall: float) -> float | None:
        """The watermark for the player partitions (None: not known yet): the lowest promise
        of every match partition's joins, never above the clock, held where event time leapt
        (as decisions are: not raised while it has not stood anywhere yet), below every
        forward not known to be read by its home. Not before every match partition has
        reported to this life: a forward sent before it began is known to be read only then
        (its home read the greeting, which is behind it)."""
        now = self.now()
        if now is None or len(self.current) < self.partitions:
            return None
        stood = settled(self.settling, now, wall)
        if stood is None:
            return None
        if len(self.own) < self.partitions:
            return None
        mark = min(self.promise(source) for source in self.own)
        if self.clock.value is not None:
            mark = min(mark, self.clock.value - self.lateness)
        if now - stood > LEAP_SECONDS:
            mark = min(mark, stood)
        for _, at, _ in self.forwards:
            mark = min(mark, at)
        return mark

    # --- what it sends ------------------------------------------------------------------------

    def on_tick(self, wall: float) -> Sends:
        """The tick: a round to every partition while active, else what is still owed."""
        self.clock.tick(wall)
        sample(self.settling, wall, self.now())
        if self.active:
            return self._send(wall, poll=True)
        # Idle: only what changed since the last round and is still owed.
        return self._send(wall, poll=False) if self.changed else Sends()

    def end_of_batch(self, wall: float, every: float) -> Sends:
        """After a batch that brought reports: what changed, at most every ``every`` seconds."""
        if not self.changed or wall - self.sent_at < every:
            return Sends()
        return self._send(wall, poll=False)

    def _send(self, wall: float, *, poll: bool) -> Sends:
        """A round: the views to every match partition (``poll``) or to those whose view
        changed, and the watermark when it moved (or the greeting: None, asking for reports)."""
        self.round += 1
        self.changed = False
        self.sent_at = wall
        sends = Sends()
        greeting = not self.greeted
        self.greeted = True
        poll = poll or greeting
        latest = self.clock.value
        abandons = self.abandons()
        for target in range(self.partitions):
            started, finished = self.others(target)
            values = (started, finished, abandons)
            if poll or values != self.sent_views.get(target):
                self.sent_views[target] = values
                view = View(self.epoch, self.round, started, finished, latest, abandons, poll)
                sends.views.append((target, view))
        every = range(self.partitions)
        # The greeting asks every player partition for a report; an ask, one of two lives.
        asked = every if greeting else sorted(self.asks)
        self.asks.clear()
        sends.marks.extend((target, Combined(None, self.epoch, self.round)) for target in asked)
        mark = self.mark(wall)
        if mark is not None and (self.sent_mark is None or mark > self.sent_mark):
            self.sent_mark = mark
            sends.marks.extend((t, Combined(mark, self.epoch, self.round)) for t in every)
        return sends
