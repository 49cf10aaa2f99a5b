"""The retained inputs as a history file (`skillstream inputs export`).

Reads match-started and match-finished from their first offsets to their end offsets when the
export began, and writes one JSON line per finished match: the finish as the producer sent it,
its line-up from the start when the finish has none, and the start's ``started_at``, so
``skillstream replay --in-play-order`` rates it in the order of play and settles overlapping
matches as the live pipeline does. Times and stats are copied as they were sent, so replay
parses the very values the workers parsed.

What it cannot carry, said in the report: a match started and never finished (live settles it
as abandoned or timed out; a history holds results only), events the workers dead-letter
(unreadable), a second finish of the same match (live rates the first), a finish without a
line-up whose start never came. **Refused:** inputs no longer retained from their start (a
partition whose first offset is above 0 lost records to retention): an export of them would be
a different history from the one the ratings were made from.

On failure: an unreachable broker is UnreachableError; a missing topic or a partition that
starts above 0 is NotRetainedError (one line naming it). Read-only: joins no consumer group,
commits nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import orjson
from aiokafka import TopicPartition

from stream.config.settings import Settings
from stream.errors import UserError
from stream.events import EventError, EventLimits, parse_match_finished, parse_match_started
from stream.reachability import (
    kafka_errors,
    kafka_within_timeout,
    log_reader,
    missing_topic,
    quiet_kafka_logs,
)

__all__ = ["ExportReport", "NotRetainedError", "export_lines", "read_inputs", "retention_problem"]


class NotRetainedError(UserError):
    """The inputs are not all there from their first record."""


@dataclass(slots=True)
class ExportReport:
    """What an export wrote and what it left out, by reason."""

    matches: int = 0
    started_only: int = 0
    unreadable: int = 0
    repeated_finishes: int = 0
    without_line_up: int = 0
    records: int = 0

    def lines(self) -> list[str]:
        out = [f"{self.matches:,} finished matches from {self.records:,} input records"]
        for count, what in (
            (self.started_only, "started and never finished (live settles them; left out)"),
            (self.unreadable, "unreadable events (the workers dead-letter them; left out)"),
            (self.repeated_finishes, "repeated finishes (live rates the first; left out)"),
            (self.without_line_up, "finishes without a line-up or a start (left out)"),
        ):
            if count:
                out.append(f"{count:,} {what}")
        return out


def retention_problem(first_offsets: Mapping[tuple[str, int], int]) -> str | None:
    """The first input partition that no longer starts at offset 0, as one line; None when
    every one still holds its first record."""
    for (topic, partition), first in sorted(first_offsets.items()):
        if first > 0:
            return (
                f"{topic} partition {partition} starts at offset {first:,}: the records before "
                "it are gone (retention), so the retained inputs are not the history the ratings "
                "were made from; an export or a re-rate of them would not be exact"
            )
    return None


def export_lines(
    starts: Iterable[tuple[int, bytes]],
    finishes: Iterable[tuple[int, bytes]],
    limits: EventLimits,
    report: ExportReport,
) -> Iterator[bytes]:
    """The history lines of the finished matches, in the order their finishes were read, from
    the raw values of both topics (each with its offset, unused but for order); ``report``
    counts what is left out. Pure."""
    started: dict[str, dict[str, Any]] = {}
    for _, raw in starts:
        event = _event(raw, parse_match_started, limits, report)
        if event is not None:
            started.setdefault(event["match_id"], event)
    finished: set[str] = set()
    for _, raw in finishes:
        event = _event(raw, parse_match_finished, limits, report)
        if event is None:
            continue
        match_id = event["match_id"]
        if match_id in finished:
            report.repeated_finishes += 1
            continue
        start = started.get(match_id)
        line = dict(event)
        if line.get("teams") is None:
            if start is None:
                finished.add(match_id)
                report.without_line_up += 1
                continue
            line["teams"] = start["teams"]
            try:
                # With the start's line-up, what the match side checks when they meet: ranks,
                # quitters, stats and parties that do not fit it are dead-lettered live.
                parse_match_finished(line, limits)
            except EventError:
                report.unreadable += 1
                continue
        finished.add(match_id)
        if start is not None:
            line["started_at"] = start["started_at"]
        report.matches += 1
        yield orjson.dumps(line, option=orjson.OPT_APPEND_NEWLINE)
    report.started_only += sum(1 for m in started if m not in finished)


async def read_inputs(
    settings: Settings, progress: Callable[[int, int], None] | None = None
) -> tuple[list[tuple[int, bytes]], list[tuple[int, bytes]]]:
    """Every retained record of match-started and of match-finished (offset, value), read to
    the end offsets of when the read began. NotRetainedError when a topic is missing or a
    partition no longer starts at 0. ``progress(read, total)`` is told the records read so far
    out of what the end offsets hold, after every fetch (a terminal's bar)."""
    consumer = log_reader(settings)
    topics = (settings.topics.match_started, settings.topics.match_finished)
    values: dict[str, list[tuple[int, bytes]]] = {t: [] for t in topics}
    with quiet_kafka_logs(), kafka_errors(settings):
        await kafka_within_timeout(settings, consumer.start())
        try:
            known = await consumer.topics()
            tps = []
            for topic, variable in zip(
                topics,
                ("SKILLSTREAM_TOPIC_MATCH_STARTED", "SKILLSTREAM_TOPIC_MATCH_FINISHED"),
                strict=True,
            ):
                if topic not in known:
                    raise NotRetainedError(f"{variable}: {missing_topic(topic)}")
                parts = sorted(consumer.partitions_for_topic(topic) or ())
                tps += [TopicPartition(topic, p) for p in parts]
            consumer.assign(tps)
            await consumer.seek_to_beginning(*tps)
            firsts = await consumer.beginning_offsets(tps)
            problem = retention_problem({(tp.topic, tp.partition): firsts[tp] for tp in tps})
            if problem is not None:
                raise NotRetainedError(problem)
            ends = await consumer.end_offsets(tps)
            remaining = {tp for tp in tps if ends[tp] > firsts[tp]}
            total = sum(ends[tp] - firsts[tp] for tp in tps)
            read = 0
            while remaining:
                batches = await consumer.getmany(*remaining, timeout_ms=500, max_records=5000)
                for tp, batch in batches.items():
                    values[tp.topic] += [(r.offset, r.value or b"") for r in batch]
                    read += len(batch)
                    # A whole fetched batch is used: Tansu may report an end offset inside
                    # its last batch (docs/decisions.md, known problems).
                    if batch and batch[-1].offset + 1 >= ends[tp]:
                        remaining.discard(tp)
                if progress is not None:
                    progress(read, total)
        finally:
            await consumer.stop()
    return values[topics[0]], values[topics[1]]


def _event(
    raw: bytes,
    parse: Callable[[object, EventLimits], object],
    limits: EventLimits,
    report: ExportReport,
) -> dict[str, Any] | None:
    """The event as sent (a JSON object) when the workers would accept it, else None."""
    report.records += 1
    try:
        if len(raw) > limits.max_bytes:
            raise EventError("too large")
        event = orjson.loads(raw)
        parse(event, limits)
    except (orjson.JSONDecodeError, EventError, ValueError):
        report.unreadable += 1
        return None
    assert isinstance(event, dict)
    return event
