"""What `skillstream bench pipeline` prints about the records a run left on the broker, and the
issue-16 targets it is judged by.

Topics are put in classes by the role the worker's settings give their names (never by a list
of names kept here): the worker writes commands, changelogs, outputs (rating-changed) and dead
letters; the load generator writes the inputs; any other topic the broker lists is "other" and
named, so that nothing the worker writes goes uncounted.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from stream.bench.topics import Log
from stream.config.settings import Settings

# The worker's classes, in the order printed; then what the load generator wrote.
WORKER_CLASSES = ("commands", "changelogs", "outputs", "dead letters")
INPUTS = "inputs"
OTHER = "other"

# The event-time protocol's commands (docs/event-time.md), by their wire names: the combiner's
# (protocol version 10), then those of the all-to-all exchanges before it (a run of an older
# release counts them the same way).
CONTROL_KINDS = ("tick", "rep", "prep", "view", "gwm", "progress", "wm", "awm")

# Issue 16's targets.
MATCHES_PER_RAW_EVENT = 0.05
P99_RATE = 500.0
P99_MS = 150.0
# Issue 47's: learning live costs no more per match than before it (as a ratio to the raw
# loop, what the issue measured then), and every producer style's p99 within this many times
# the start-at-start style's in the same run.
LEARNING_PER_RAW_EVENT = 0.027
STYLE_P99_RATIO = 1.5


def topic_class(topic: str, settings: Settings) -> str:
    """The class of ``topic`` for a worker running with ``settings``."""
    if topic in (settings.topics.match_started, settings.topics.match_finished):
        return INPUTS
    if topic in (settings.match_commands_topic, settings.player_commands_topic):
        return "commands"
    if topic == settings.topics.rating_changed:
        return "outputs"
    if topic == settings.topics.dead_letter:
        return "dead letters"
    if topic == settings.topics.audit:
        return "corrections"
    # Faust names every table's changelog this way (Settings.changelog_topic).
    if topic.startswith(f"{settings.app_id}-") and topic.endswith("-changelog"):
        return "changelogs"
    return OTHER


@dataclass(frozen=True, slots=True)
class ClassCounts:
    """A run's records and batches per class, each class's topics, and the topics that fell in
    "other"."""

    classes: dict[str, Log]
    other_topics: tuple[str, ...]
    topics: dict[str, dict[str, Log]] = field(default_factory=dict)

    @property
    def worker(self) -> Log:
        """Everything but the inputs: what the worker wrote (and "other", if anything)."""
        total = Log()
        for name, log in self.classes.items():
            if name != INPUTS:
                total = total + log
        return total


def by_class(topics: Mapping[str, Log], settings: Settings) -> ClassCounts:
    classes: dict[str, Log] = {name: Log() for name in (*WORKER_CLASSES, INPUTS)}
    members: dict[str, dict[str, Log]] = {}
    others: list[str] = []
    for topic, log in sorted(topics.items()):
        name = topic_class(topic, settings)
        if name == OTHER and log.records + log.batches > 0:
            others.append(topic)
        classes[name] = classes.get(name, Log()) + log
        members.setdefault(name, {})[topic] = log
    return ClassCounts(classes, tuple(others), members)


def records_lines(counts: ClassCounts, matches: int) -> list[str]:
    """One line per class: records and batches per match, and the totals; under a class of
    several topics that wrote anything, one line per topic (what the next cut aims at)."""
    per = max(matches, 1)
    header = (
        f"    {'records per 1v1 match (' + format(matches, ',') + ' published)':<40}"
        f" {'records':>9} {'batches':>9} {'records/match':>14} {'batches/match':>14}"
    )
    lines = [header]

    def line(label: str, log: Log) -> str:
        return (
            f"      {label:<38} {log.records:>9,} {log.batches:>9,}"
            f" {log.records / per:>14.2f} {log.batches / per:>14.2f}"
        )

    names = [*WORKER_CLASSES, *([OTHER] if counts.other_topics else [])]
    for name in names:
        label = name if name != OTHER else f"other: {', '.join(counts.other_topics)}"
        lines.append(line(label, counts.classes[name]))
        written = {t: log for t, log in counts.topics.get(name, {}).items() if log.records}
        if name != OTHER and len(written) > 1:
            lines.extend(line(f"  {topic}", log) for topic, log in written.items())
    lines.append(line("total, worker", counts.worker))
    lines.append(line("inputs (the load generator)", counts.classes[INPUTS]))
    return lines


def control_line(commands: Log, seconds: float, partitions: int) -> str:
    """The event-time protocol's commands per second among ``commands`` (what the command
    topics gained over ``seconds``), per kind, and per partition and per partition squared:
    the growth the design aims at shows as the column that stays flat across partition
    counts."""
    span = max(seconds, 1e-9)
    control = {kind: commands.kinds.get(kind, 0) for kind in CONTROL_KINDS}
    total = sum(control.values()) / span
    kinds = ", ".join(f"{kind} {n / span:,.1f}" for kind, n in control.items())
    return (
        f"    control: {total:,.1f} commands/s ({kinds});"
        f" {total / partitions:,.2f} per partition, {total / partitions**2:,.3f} per partition"
        f" squared; command records {commands.records / span:,.1f}/s"
    )


def verdict(value: float | None, target: float, *, at_least: bool) -> str:
    """ "met", "not met", or "not measured" (no value, or NaN)."""
    if value is None or math.isnan(value):
        return "not measured"
    met = value >= target if at_least else value <= target
    return "met" if met else "not met"


def target_lines(
    matches_per_raw_event: float | None,
    worker_cpu_ms_per_match: float | None,
    p99_ms: float | None,
    p99_label: str,
    naive_per_raw_event: float | None = None,
    floor_per_raw_event: float | None = None,
) -> list[str]:
    """The targets block: each figure beside its target, marked met / not met; with the naive
    Faust app's ratio when it ran (the target's other half: above that app), and Faust's floor
    (an agent doing nothing with both events of each match) with the share of it the target
    and the worker are."""
    ratio = "-" if matches_per_raw_event is None else f"{matches_per_raw_event:.4f}"
    cpu = "-" if worker_cpu_ms_per_match is None else f"{worker_cpu_ms_per_match:.2f} ms"
    p99 = "-" if p99_ms is None or math.isnan(p99_ms) else f"{p99_ms:.1f} ms"
    lines = [
        "  targets (issue 16):",
        f"    1v1 matches per raw-loop event, flat out: {ratio}"
        f" (target >= {MATCHES_PER_RAW_EVENT}):"
        f" {verdict(matches_per_raw_event, MATCHES_PER_RAW_EVENT, at_least=True)};"
        f" worker CPU per match {cpu}",
    ]
    if naive_per_raw_event is not None:
        above = verdict(matches_per_raw_event, naive_per_raw_event, at_least=True)
        lines.append(
            f"    the naive Faust app, same raw loop: {naive_per_raw_event:.4f};"
            f" skillstream above it: {above}"
        )
    if floor_per_raw_event is not None and floor_per_raw_event > 0:
        worker_share = (
            "-"
            if matches_per_raw_event is None
            else f"{matches_per_raw_event / floor_per_raw_event:.0%}"
        )
        lines.append(
            f"    Faust's floor (an agent doing nothing with both events), same raw loop:"
            f" {floor_per_raw_event:.4f}; the target is"
            f" {MATCHES_PER_RAW_EVENT / floor_per_raw_event:.0%} of it, skillstream {worker_share}"
        )
    return [
        *lines,
        f"    p99 latency at {P99_RATE:,.0f}/s, {p99_label}: {p99} (target <= {P99_MS:g} ms):"
        f" {verdict(p99_ms, P99_MS, at_least=False)}",
    ]


def style_lines(
    matches_per_raw_event: float | None,
    start_p99_ms: float | None,
    styles: list[tuple[str, float]],
) -> list[str]:
    """Issue 47's block: the flat-out ratio against what it was before learning live, and each
    producer style's p99 (label, ms) as a multiple of the start-at-start style's, same run."""
    ratio = "-" if matches_per_raw_event is None else f"{matches_per_raw_event:.4f}"
    lines = [
        "  targets (issue 47):",
        f"    1v1 matches per raw-loop event, flat out: {ratio}"
        f" (target >= {LEARNING_PER_RAW_EVENT}):"
        f" {verdict(matches_per_raw_event, LEARNING_PER_RAW_EVENT, at_least=True)}",
    ]
    if start_p99_ms is None or math.isnan(start_p99_ms) or start_p99_ms <= 0:
        return [*lines, "    producer styles' p99 against the start at the start: not measured"]
    for label, p99 in styles:
        times = p99 / start_p99_ms
        lines.append(
            f"    p99 {label}: {p99:.1f} ms = {times:.2f}x the start at the start's"
            f" {start_p99_ms:.1f} ms (target <= {STYLE_P99_RATIO:g}x):"
            f" {verdict(times, STYLE_P99_RATIO, at_least=False)}"
        )
    return lines
