"""The liveness monitor: a match or a player that waits longer than it ever should is said once,
counted and shown to the alert rules.

What "longer than it ever should" means (docs/guarantees.md, "Liveness"): event time decides
when a match's fate is known (its result read, or its abandonment or timeout due); from then on
settling it takes a few hops and a round of watermarks, seconds. So the processors note, in
memory, every match whose fate is decided but that is not settled yet, since when and what it
still waits for (``MatchPartition.waits``), and every player whose next snapshot or abandon
request waits for the watermarks (``PlayerPartition.waits``); a match partition whose event
time is not known yet (a partition that has not reported) is a wait too. One that has waited
longer than the bound is *stuck*:

- logged once, at WARNING, with the match or player, its partition and what it waits for;
- counted (``skillstream_stuck_waits_found_total{kind}``) and shown as
  ``skillstream_stuck_waits{kind}``, which the alert ``SkillstreamStuck`` watches
  (deploy/prometheus/rules.yml).

A worker that is far behind (a backlog) holds matches longer for a good reason: their
snapshots are queued behind the backlog. The alert therefore asks for a caught-up worker too.

Reads only the processors' in-memory state; runs on a timer (no table writes).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from stream.pipeline.matchpartition import MatchPartition
from stream.pipeline.metrics import WorkerMetrics
from stream.pipeline.playerpartition import PlayerPartition

__all__ = ["KINDS", "LivenessMonitor", "Stuck", "find_stuck"]

log = logging.getLogger("skillstream.worker")

KINDS = ("match", "player", "event_time")


@dataclass(frozen=True, slots=True)
class Stuck:
    kind: str  # one of KINDS
    key: str  # the match id, the player id, or the partition number
    partition: int
    seconds: float
    waits_for: str

    def describe(self) -> str:
        if self.kind == "event_time":
            who = f"match partition {self.partition}"
        else:
            who = f"{self.kind} {self.key} (partition {self.partition})"
        return f"{who} has waited {self.seconds:.0f} s for {self.waits_for}"


def find_stuck(
    matches: Mapping[int, MatchPartition],
    players: Mapping[int, PlayerPartition],
    wall: float,
    bound: float,
) -> list[Stuck]:
    """Every wait longer than ``bound`` seconds at wall time ``wall``."""
    found: list[Stuck] = []
    for number, partition in sorted(matches.items()):
        if (
            partition.time.now is None
            and partition.pending
            and wall - partition.owned_since > bound
        ):
            found.append(
                Stuck(
                    "event_time",
                    str(number),
                    number,
                    wall - partition.owned_since,
                    _event_time_wait(partition, matches.get(0)),
                )
            )
        for match_id, (since, waits_for) in partition.waits.items():
            if wall - since > bound:
                found.append(Stuck("match", match_id, number, wall - since, waits_for))
    for number, player_partition in sorted(players.items()):
        for player_id, (since, start) in player_partition.waits.items():
            if wall - since > bound:
                found.append(
                    Stuck(
                        "player",
                        player_id,
                        number,
                        wall - since,
                        f"the event-time combiner's watermark to pass {start:.3f} (event time)",
                    )
                )
    return found


def _event_time_wait(partition: MatchPartition, home: MatchPartition | None) -> str:
    """What a match partition without event time waits for: its own first report, or the
    combiner's view; where this worker runs the combiner, the partitions it has not heard
    from."""
    if partition.time.own is None:
        return "its own first report"
    combiner = None if home is None else home.combiner
    if combiner is None:
        return "a view of the other partitions from the event-time combiner (match partition 0)"
    every = range(combiner.partitions)
    silent = [p for p in every if p not in combiner.bounds]
    quiet = [p for p in every if p not in combiner.floors]
    parts = []
    if silent:
        parts.append(f"match partitions {_numbers(silent)}")
    if quiet:
        parts.append(f"player partitions {_numbers(quiet)}")
    heard = " and ".join(parts) if parts else "nobody: it has heard from every partition"
    return f"the event-time combiner's view; it waits for the reports of {heard}"


def _numbers(numbers: Iterable[int]) -> str:
    return ", ".join(str(n) for n in numbers) or "none"


class LivenessMonitor:
    """Says each stuck wait once, counts it and keeps the gauges (see the module docstring)."""

    def __init__(self, metrics: WorkerMetrics, bound: float) -> None:
        self.metrics = metrics
        self.bound = bound
        self.reported: set[tuple[str, str]] = set()

    def check(
        self,
        matches: Mapping[int, MatchPartition],
        players: Mapping[int, PlayerPartition],
        wall: float,
    ) -> list[Stuck]:
        stuck = find_stuck(matches, players, wall, self.bound)
        current: set[tuple[str, str]] = set()
        counts = dict.fromkeys(KINDS, 0)
        for item in stuck:
            key = (item.kind, item.key)
            current.add(key)
            counts[item.kind] += 1
            if key not in self.reported:
                log.warning(
                    "stuck: %s",
                    item.describe(),
                    extra={"kind": item.kind, "key": item.key, "partition": item.partition},
                )
                self.metrics.stuck_total.labels(item.kind).inc()
        # One that settles and gets stuck again later is said again.
        self.reported = current
        for kind, n in counts.items():
            self.metrics.stuck.labels(kind).set(n)
        return stuck
