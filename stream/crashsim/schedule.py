"""A schedule: everything one simulated run does, drawn from one seed.

The same seed always draws the same schedule and the simulation runs it the same way, so a
failing seed is a reproducible run (``skillstream crashsim --seed N``).

What is drawn: partitions (1 to 4), workers in the group (1 or 2), the consumer's batch size,
how often commits come, the workload (stream/crashsim/workload.py), and the faults: kills, each
of one worker at one point of its life (between two batches, or at a crash point of the commit
order: ``processed``, ``delivering``, ``written``, ``flushing``, ``flushed``, ``committed``,
``revoked``), how long its partitions stay without an owner, and whether its successor restores
each table partition from an earlier flush than the last (a changelog shorter than written);
rebalances that move partitions between live workers; records lost on their way to the runner;
the consumer sent back to its commits; fetch answers that stay the consumer's last while
records arrive behind them (a partition paused, a fetch slow to come back: the end it says is
old, and so is the time it was given); waves whose two topics reach the broker 0.01 or 0.3 s
of simulated wall time apart (a burst of buffered events read one topic ahead of the other);
the events of two or three consecutive waves published shuffled together (late starts).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace

from stream.config.settings import CRASH_POINTS

__all__ = ["Kill", "Schedule", "draw_schedule"]

# Crash points of the commit order (stream/pipeline/crashpoints.py) and "between" two batches.
POINTS = ("between", *CRASH_POINTS)


@dataclass(frozen=True, slots=True)
class Kill:
    """Kill worker ``worker`` once the run has taken ``step`` steps: at once (``between``) or
    at the ``nth`` crash point ``point`` it reaches from then on. Its partitions have no owner
    for ``down`` steps; ``short``: each of their table partitions is restored from an earlier
    flush than its last with this chance."""

    step: int
    worker: int
    point: str
    nth: int
    down: int
    short: float


@dataclass(frozen=True, slots=True)
class Schedule:
    seed: int
    partitions: int
    workers: int
    batch: int
    commit_chance: float
    players: int
    waves: int
    duplicates: float
    misrouted: float
    lose: float
    reseek: float
    publish_every: int
    kills: tuple[Kill, ...] = field(default_factory=tuple)
    rebalances: tuple[int, ...] = field(default_factory=tuple)
    # The chance, at each tick, that an input partition's last fetch answer stays its last for
    # up to STALE_SECONDS of wall time while records arrive behind it.
    stale: float = 0.0
    # Each wave's match-finished events published this many seconds of simulated wall time
    # after its match-started events, or the other way round (0: a wave's events all at once):
    # a burst read one topic ahead of the other, which the settle of event time that leaps is
    # for (it covers less than SETTLE_SECONDS, 0.5 s, of it: docs/event-time.md).
    topic_lag: float = 0.0
    # The events of this many consecutive waves shuffled together and published in the waves'
    # slots (0: each wave its own): starts published after their players' next matches
    # started, finishes before their starts, a player's matches waiting in any order. Late
    # starts are applied out of the order of play (docs/event-time.md), so such a run is
    # checked for exactly-once and liveness, not against the replay.
    mix: int = 0

    def describe(self) -> str:
        kills = ", ".join(
            f"w{k.worker}@{k.step}:{k.point}"
            + (f"#{k.nth}" if k.point != "between" else "")
            + (f" short {k.short:.1f}" if k.short else "")
            for k in self.kills
        )
        return (
            f"seed {self.seed}: {self.partitions} partitions, {self.workers} workers, batch "
            f"{self.batch}, {self.players} players x {self.waves} waves, kills [{kills}], "
            f"{len(self.rebalances)} rebalances"
            + (f", stale answers {self.stale:g}" if self.stale else "")
            + (f", topics {self.topic_lag:g} s apart" if self.topic_lag else "")
            + (f", waves mixed {self.mix} by {self.mix}" if self.mix else "")
        )


def draw_schedule(seed: int, *, kills: int | None = None, short: float | None = None) -> Schedule:
    """The schedule of ``seed``; ``kills`` and ``short`` fix the number of kills and every
    kill's chance of a short restore instead of drawing them."""
    rng = random.Random(seed)
    partitions = rng.choice((1, 2, 2, 3, 4))
    workers = rng.choice((1, 1, 2)) if partitions > 1 else 1
    waves = rng.randint(3, 9)
    publish_every = rng.choice((5, 20, 60))
    span = waves * publish_every + 200
    n_kills = rng.choice((0, 1, 2, 2, 3, 4)) if kills is None else kills
    drawn = []
    for _ in range(n_kills):
        point = rng.choice(POINTS)
        chance = rng.choice((0.0, 0.0, 0.3, 1.0)) if short is None else short
        drawn.append(
            Kill(
                step=rng.randint(0, span),
                worker=rng.randrange(workers),
                point=point,
                nth=rng.randint(1, 3),
                down=rng.choice((0, 0, 5, 40)),
                short=chance,
            )
        )
    drawn.sort(key=lambda k: k.step)
    rebalances = tuple(
        sorted(rng.randint(0, span) for _ in range(rng.choice((0, 0, 1, 2)) if workers > 1 else 0))
    )
    drawn_first = Schedule(
        seed=seed,
        partitions=partitions,
        workers=workers,
        batch=rng.choice((1, 2, 7, 50)),
        commit_chance=rng.choice((0.02, 0.1, 0.5)),
        players=rng.randint(4, 16),
        waves=waves,
        duplicates=rng.choice((0.0, 0.0, 0.3)),
        misrouted=rng.choice((0.0, 0.2)),
        lose=rng.choice((0.0, 0.0, 0.02)),
        reseek=rng.choice((0.0, 0.01)),
        publish_every=publish_every,
        kills=tuple(drawn),
        rebalances=rebalances,
    )
    # Drawn last, so every other draw of a seed is what it was before these faults. Not both
    # in one schedule: a burst whose other topic the consumer cannot fetch for longer than the
    # settle (0.5 s) is beyond what the settle covers (docs/event-time.md).
    stale = rng.choice((0.0, 0.0, 0.03, 0.1))
    lag = rng.choice((0.0, 0.0, 0.01, 0.3))
    mix = rng.choice((0, 0, 0, 0, 0, 0, 2, 3))
    return replace(drawn_first, stale=stale, topic_lag=0.0 if stale else lag, mix=mix)
