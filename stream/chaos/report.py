"""What a chaos run found: the figures, the faults as injected, and the checks; as text or JSON."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from stream.chaos.faults import KILLS, FaultKind, PlannedFault
from stream.chaos.verify import Check
from stream.chaos.workerfleet import WorkerExit

__all__ = ["ChaosReport", "FaultRecord"]


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 2)


def _seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f} s"


@dataclass
class FaultRecord:
    """One planned fault and what happened when it was injected (times: seconds since the run
    started)."""

    planned: PlannedFault
    target: str = ""  # "w1 pid 1234", "tansu pid 99", ...
    injected_at: float | None = None
    ended_at: float | None = None  # the process continued, or the killed worker's replacement ready
    in_flight: int = 0  # matches published and not yet fully rated when it was injected
    # The longest a wave in flight during the fault waited for its ratings after the
    # injection: how long the stream stood still.
    stall_seconds: float | None = None
    restart_seconds: float | None = None  # kill: SIGKILL -> replacement "Worker ready"
    after_ready: float | None = None  # kill: the victim's "Worker ready" -> SIGKILL
    ratings_during: int | None = None  # pauses: ratings published while the process was stopped
    cache_seconds: float | None = None  # Redis: SIGCONT -> the cache caught up
    # Outage: matches published while every worker was down, and the time from the restart
    # (every worker ready) until all of them were rated.
    backlog: int | None = None
    drain_seconds: float | None = None
    error: str | None = None

    @property
    def injected(self) -> bool:
        """Whether the signal was sent (what followed may still have failed: ``error``)."""
        return self.injected_at is not None

    def describe(self) -> str:
        p = self.planned
        if self.injected_at is None:
            return f"{p.describe()}: NOT injected" + (f" ({self.error})" if self.error else "")
        parts = [f"[{self.injected_at:6.1f} s] {p.kind} {self.target} at wave {p.wave}"]
        parts.append(f"{self.in_flight} match(es) in flight")
        if p.kind in KILLS:
            if self.after_ready is not None:
                parts.append(f"{self.after_ready:.1f} s after the victim was ready")
            if self.restart_seconds is not None:
                parts.append(f"replacement ready after {self.restart_seconds:.1f} s")
        elif p.kind is FaultKind.OUTAGE:
            if self.restart_seconds is not None:
                parts.append(f"all ready {self.restart_seconds:.1f} s after the restart")
            if self.backlog is not None:
                parts.append(f"{self.backlog:,} matches published meanwhile")
            if self.drain_seconds is not None:
                parts.append(f"backlog rated {self.drain_seconds:.1f} s after all were ready")
        elif self.ended_at is not None:
            parts.append(
                f"SIGCONT at {self.ended_at:.1f} s after {self.ended_at - self.injected_at:.1f} s"
            )
        if self.ratings_during is not None:
            parts.append(f"{self.ratings_during:,} ratings during the pause")
        if self.stall_seconds is not None:
            parts.append(f"longest wave wait {self.stall_seconds:.1f} s")
        if p.kind is FaultKind.REDIS_PAUSE:
            caught = "never" if self.cache_seconds is None else f"{self.cache_seconds:.2f} s"
            parts.append(f"cache caught up {caught} after SIGCONT")
        if self.error:
            parts.append(f"ERROR: {self.error}")
        return ", ".join(parts)

    def to_json(self) -> dict[str, Any]:
        p = self.planned
        return {
            "kind": str(p.kind),
            "wave": p.wave,
            "target": self.target,
            "delay": p.delay,
            "seconds": p.seconds,
            "injected_at": _round(self.injected_at),
            "ended_at": _round(self.ended_at),
            "in_flight": self.in_flight,
            "stall_seconds": _round(self.stall_seconds),
            "restart_seconds": _round(self.restart_seconds),
            "after_ready_seconds": _round(self.after_ready),
            "ratings_during": self.ratings_during,
            "cache_seconds": _round(self.cache_seconds),
            "backlog": self.backlog,
            "drain_seconds": _round(self.drain_seconds),
            "error": self.error,
        }


@dataclass
class ChaosReport:
    config: dict[str, Any]
    matches: int = 0
    waves: int = 0
    published: int = 0  # matches published (all of them unless the stream stalled)
    ratings: int = 0  # distinct (player, match) rating-changed events
    records: int = 0  # rating-changed records read, redeliveries included
    redeliveries: int = 0
    dead_letters: int = 0
    # Seconds from a wave's publication to its last rating: median and longest.
    wave_median: float | None = None
    wave_max: float | None = None
    faults: list[FaultRecord] = field(default_factory=list)
    exits: list[WorkerExit] = field(default_factory=list)
    # Seconds from the last wave rated to the cache equal to every last rating-changed.
    cache_end_seconds: float | None = None
    stalled: str | None = None  # why the stream stopped before the last wave
    # After a stall: where the missing ratings' matches got stuck (trace.py), and the
    # workers' warnings and errors, so a stall seen once explains itself.
    trace: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    seconds: float = 0.0
    checks: list[Check] = field(default_factory=list)
    logs: list[str] = field(default_factory=list)  # worker logs kept (--keep-logs)
    # Every process the run started (servers and each worker incarnation), all stopped by
    # the time the report is returned; not part of the printed report.
    pids: list[int] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return bool(self.checks) and all(c.passed for c in self.checks)

    @property
    def kills(self) -> int:
        return sum(1 for f in self.faults if f.planned.kind in KILLS and f.injected)

    def to_json(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "config": self.config,
            "seconds": round(self.seconds, 1),
            "matches": self.matches,
            "waves": self.waves,
            "published": self.published,
            "ratings": self.ratings,
            "records": self.records,
            "redeliveries": self.redeliveries,
            "dead_letters": self.dead_letters,
            "wave_median_seconds": _round(self.wave_median),
            "wave_max_seconds": _round(self.wave_max),
            "kills": self.kills,
            "faults": [f.to_json() for f in self.faults],
            "unexpected_exits": [e.to_json() for e in self.exits],
            "cache_end_seconds": _round(self.cache_end_seconds),
            "stalled": self.stalled,
            "trace": self.trace,
            "warnings": self.warnings,
            "checks": [c.to_json() for c in self.checks],
            "logs": self.logs,
        }

    def text(self) -> str:
        c = self.config
        lines = [
            f"chaos run: {self.matches:,} matches in {self.waves} waves, {c['players']} players, "
            f"team size {c['team_size']}, {c['workers']} workers, {c['store']} store, "
            f"seed {c['seed']}: {self.seconds:.1f} s",
            f"  ratings: {self.ratings:,} distinct (player, match) events, {self.records:,} "
            f"records read, {self.redeliveries:,} byte-identical redeliveries, "
            f"{self.dead_letters} dead letters",
            f"  waves: rated {_seconds(self.wave_median)} after publication (median), the "
            f"longest wait {_seconds(self.wave_max)}",
            "  faults:",
            *(f"    {f.describe()}" for f in self.faults),
        ]
        if self.exits:
            lines.append("  unexpected worker exits (restarted by the harness):")
            for e in self.exits:
                restarted = (
                    "not ready again"
                    if e.restarted_in is None
                    else f"ready again after {e.restarted_in:.1f} s"
                )
                lines.append(f"    {e.describe()}, {restarted}; its last lines:")
                lines.extend(f"      | {line}" for line in e.tail.splitlines()[-8:])
        else:
            lines.append("  unexpected worker exits: none")
        end = "never" if self.cache_end_seconds is None else f"{self.cache_end_seconds:.2f} s"
        lines.append(f"  cache at the end: equal to the ratings {end} after the last wave")
        if self.stalled:
            lines.append(f"  STALLED: {self.stalled}")
        if self.trace:
            lines.append("  trace of the stalled matches:")
            lines.extend(f"    {line}" for line in self.trace)
        if self.warnings:
            lines.append("  worker warnings and errors:")
            lines.extend(f"    {line}" for line in self.warnings)
        if self.logs:
            lines.append("  worker logs kept: " + " ".join(self.logs))
        lines.append("  checks:")
        for check in self.checks:
            verdict = "PASS" if check.passed else "FAIL"
            lines.append(f"    {verdict} {check.name:<13} {check.detail}")
        lines.append(f"  result: {'PASS' if self.passed else 'FAIL'}")
        return "\n".join(lines)
