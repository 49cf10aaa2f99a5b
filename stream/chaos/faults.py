"""The fault schedule (pure, seeded) and the injector that pauses and resumes processes.

A run is a sequence of *waves* of matches (see traffic.py); every fault is planned at a wave:
it is injected right after that wave was published, while its matches are in flight. The
faults are spread over the run, one per slot of equal width, so every kind of fault meets a
stream that is warm and still has matches to rate afterwards. Early kills are the exception:
they take the first waves, one each, so that each lands in the first seconds of a worker's
life, before it has committed an offset.
"""

from __future__ import annotations

import contextlib
import math
import os
import random
import signal
from dataclasses import dataclass
from enum import StrEnum

__all__ = ["KILLS", "FaultKind", "Pauser", "PlannedFault", "plan_faults"]


class FaultKind(StrEnum):
    KILL = "kill"  # SIGKILL of one worker, then a restart
    # The same, in the first seconds after the worker (or the previous victim's replacement)
    # said "Worker ready": before its first offset commit.
    KILL_EARLY = "kill-early"
    BROKER_PAUSE = "broker-pause"  # SIGSTOP of the Kafka broker, SIGCONT after a while
    REDIS_PAUSE = "redis-pause"  # SIGSTOP of Redis (Valkey), SIGCONT after a while
    # SIGKILL of every worker; the fleet keeps publishing for a while, then all restart and
    # drain the backlog (which must be rated as it was played).
    OUTAGE = "outage"


KILLS = (FaultKind.KILL, FaultKind.KILL_EARLY)


@dataclass(frozen=True, slots=True)
class PlannedFault:
    """One fault: injected after wave ``wave`` was published (plus ``delay`` seconds).

    ``target`` is the worker slot for a kill (None for pauses); ``seconds`` how long a pause
    lasts (0 for a kill). An early kill's wave waits until its victim has been ready for
    ``age`` seconds (it goes out at once if the victim is older).
    """

    kind: FaultKind
    wave: int
    delay: float = 0.0
    target: int | None = None
    seconds: float = 0.0
    age: float = 0.0

    def describe(self) -> str:
        if self.kind is FaultKind.KILL_EARLY:
            return (
                f"{self.kind} w{self.target} at wave {self.wave} (+{self.delay:.2f} s, "
                f"ready {self.age:.2f} s before the wave)"
            )
        if self.kind is FaultKind.KILL:
            return f"{self.kind} w{self.target} at wave {self.wave} (+{self.delay:.2f} s)"
        if self.kind is FaultKind.OUTAGE:
            return f"{self.kind}: every worker down {self.seconds:g} s at wave {self.wave}"
        return f"{self.kind} {self.seconds:g} s at wave {self.wave}"


# Longest delay between a wave's publication and a kill: a wave is rated in 0.1 to 0.2 s on the
# local stack, so the kill lands anywhere from "before the batch" to "after its ratings were
# sent" (measured: with 0.5 s most kills found the wave already rated).
MAX_KILL_DELAY = 0.2
# An early kill comes up to 0.5 s after its wave, and its wave up to 2.5 s after the victim
# was ready: the crashes reported in issue 15 came that late (about 2 s after "Worker ready",
# before the first offset commit; Faust commits every 2.8 s).
MAX_EARLY_KILL_DELAY = 0.5
MAX_EARLY_KILL_AGE = 2.5


def plan_faults(
    seed: int,
    waves: int,
    *,
    kills: int,
    workers: int,
    broker_pause: float,
    redis_pause: float,
    kill_early: int = 0,
    outage: float = 0.0,
) -> list[PlannedFault]:
    """The faults of a run over ``waves`` waves, in wave order; the same inputs give the same
    plan. A pause of 0 seconds is left out.

    The ``kill_early`` early kills take waves 0, 1, ...: a wave is published once the previous
    one is rated (and the previous fault is over), and they all hit one seeded slot, so the
    first lands in the first seconds after the fleet was ready, and each later one in the first
    seconds after the previous victim's replacement was ready. Each one's wave waits until its
    victim has been ready for a seeded age (up to 2.5 s), and the kill follows the wave after a
    seeded delay (up to 0.5 s). These draws come after the other faults', so adding early kills
    keeps a seed's other draws; the other faults' warm-up then ends after the early kills.

    The waves between a warm-up (the first tenth, at least 2) and a tail (the last tenth, at
    least 2) are cut into one slot per fault; each fault gets a seeded wave in the middle half
    of its slot, so two faults are always at least about half a slot apart. The kinds are
    shuffled over the slots, except that the Redis pause never takes the last slot: the stream
    must go on while Redis is away. Kill targets and delays are seeded too.

    ValueError if there are too few waves for the faults (ask for more matches), or the counts
    are out of range.
    """
    if kills < 0 or kill_early < 0 or workers < 1:
        raise ValueError(
            f"need kills >= 0, kill_early >= 0 and workers >= 1, got {kills}, {kill_early} and "
            f"{workers}"
        )
    if broker_pause < 0 or redis_pause < 0 or outage < 0:
        raise ValueError("pause and outage lengths must be >= 0")
    rng = random.Random(seed)
    kinds = [FaultKind.KILL] * kills
    if broker_pause > 0:
        kinds.append(FaultKind.BROKER_PAUSE)
    if redis_pause > 0:
        kinds.append(FaultKind.REDIS_PAUSE)
    plan = _plan_spread(rng, kinds, waves, kill_early, workers, broker_pause, redis_pause)
    if outage > 0:
        # Drawn last, so adding an outage keeps a seed's other faults: it takes the waves
        # after the last of them (faults never overlap), before the tail.
        after = max((f.wave for f in plan), default=kill_early)
        margin = max(2, waves // 10)
        low, high = max(after + 1, margin), waves - margin - 1
        if low > high:
            raise ValueError(
                f"{waves} waves are too few for an outage after the other faults: use more matches"
            )
        wave = rng.randint(low, high)
        plan.append(PlannedFault(FaultKind.OUTAGE, wave, seconds=outage))
    if kill_early > waves - 1:
        raise ValueError(
            f"{waves} waves are too few for {kill_early} early kills (each needs a wave, and "
            "one must follow them): use more matches"
        )
    # One slot for them all: each early kill hits the previous one's replacement.
    victim = rng.randrange(workers)
    early = [
        PlannedFault(
            FaultKind.KILL_EARLY,
            wave,
            round(rng.uniform(0.0, MAX_EARLY_KILL_DELAY), 3),
            victim,
            age=round(rng.uniform(0.0, MAX_EARLY_KILL_AGE), 3),
        )
        for wave in range(kill_early)
    ]
    return early + plan


def _plan_spread(
    rng: random.Random,
    kinds: list[FaultKind],
    waves: int,
    after: int,
    workers: int,
    broker_pause: float,
    redis_pause: float,
) -> list[PlannedFault]:
    """The faults of ``kinds``, one per slot between a warm-up (which ends after the first
    ``after`` waves) and a tail (plan_faults)."""
    if not kinds:
        return []
    margin = max(2, waves // 10)
    first, end = max(margin, after + 1), waves - margin
    width = (end - first) / len(kinds)
    # Each slot needs a wave of its own at least, and room for a spread within it.
    if width < 2:
        raise ValueError(
            f"{waves} waves are too few for {len(kinds)} faults (each needs 2 waves besides "
            f"a warm-up of {first} and a tail of {margin}): use more matches"
        )
    rng.shuffle(kinds)
    if kinds[-1] is FaultKind.REDIS_PAUSE and len(kinds) > 1:
        swap = rng.randrange(len(kinds) - 1)
        kinds[-1], kinds[swap] = kinds[swap], kinds[-1]
    plan: list[PlannedFault] = []
    for slot, kind in enumerate(kinds):
        low = first + slot * width + width / 4
        high = first + slot * width + 3 * width / 4
        # Half up, not to even: two waves a whole wave apart never round to the same one.
        wave = min(max(math.floor(rng.uniform(low, high) + 0.5), first), end - 1)
        if kind is FaultKind.KILL:
            fault = PlannedFault(
                kind, wave, round(rng.uniform(0.0, MAX_KILL_DELAY), 3), rng.randrange(workers)
            )
        elif kind is FaultKind.BROKER_PAUSE:
            fault = PlannedFault(kind, wave, seconds=broker_pause)
        else:
            fault = PlannedFault(kind, wave, seconds=redis_pause)
        plan.append(fault)
    return plan


class Pauser:
    """SIGSTOP and SIGCONT of processes this harness started, remembering which are stopped,
    so that :meth:`resume_all` (called from ``finally`` blocks, also on Ctrl-C) never leaves a
    process frozen: a stopped process ignores SIGTERM until it is continued.

    Failure: ``pause`` raises ProcessLookupError if the process is gone; ``resume`` and
    ``resume_all`` ignore processes that are gone.
    """

    def __init__(self) -> None:
        self.stopped: dict[int, str] = {}

    def pause(self, pid: int, name: str) -> None:
        # Remembered first: if the signal lands and we are interrupted right after, the
        # finally block still sends SIGCONT.
        self.stopped[pid] = name
        try:
            os.kill(pid, signal.SIGSTOP)
        except ProcessLookupError:
            del self.stopped[pid]
            raise

    def resume(self, pid: int) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGCONT)
        self.stopped.pop(pid, None)

    def resume_all(self) -> None:
        for pid in list(self.stopped):
            self.resume(pid)
