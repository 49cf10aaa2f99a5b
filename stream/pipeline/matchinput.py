"""A match event as the match side reads it: checked before anything is done with it.

An event is refused (its dead letter's reason returned) when it is larger than
SKILLSTREAM_MAX_EVENT_BYTES (counted before parsing, key included: a forwarded event carries
both), when it does not parse or names a mode the modes file rejects, or when its time is
further ahead of the worker's clock than SKILLSTREAM_MAX_FUTURE_SECONDS. Pure: no outbox, no
table; the match side (stream/pipeline/matches.py) dead-letters a refusal and goes on with the
rest.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from stream.events import (
    EventError,
    EventLimits,
    MatchFinished,
    MatchStarted,
    decode_match_finished,
    decode_match_started,
)
from stream.pipeline.matchpartition import STARTED
from stream.ratings.modeconfig import ModeConfig

__all__ = ["ReadEvent", "read_event"]


@dataclass(frozen=True, slots=True)
class ReadEvent:
    """An event that passed the checks: the event, its mode, and its time (start or finish)."""

    event: MatchStarted | MatchFinished
    mode: ModeConfig
    at: float


def read_event(
    kind: str,
    key: bytes | None,
    value: bytes | None,
    *,
    limits: EventLimits,
    mode_of: Callable[[str], ModeConfig],
    wall: float,
    max_future_seconds: float | None,
) -> ReadEvent | str:
    """The event of a match-started or match-finished message (``kind``: STARTED or
    FINISHED), or the reason it is refused. ``mode_of`` raises EventError for a mode the
    modes file rejects."""
    size = len(key or b"") + len(value or b"")
    if size > limits.max_bytes:
        return (
            f"match-{kind}: event is {size} bytes (key {len(key or b'')}, value "
            f"{len(value or b'')}), over the limit of {limits.max_bytes} bytes "
            "(SKILLSTREAM_MAX_EVENT_BYTES)"
        )
    decode = decode_match_started if kind == STARTED else decode_match_finished
    try:
        event = decode(value or b"", limits)
        mode = mode_of(event.mode)
    except EventError as exc:
        return f"match-{kind}: {exc}"
    at = event.started_at if isinstance(event, MatchStarted) else event.finished_at
    if max_future_seconds is not None and at > wall + max_future_seconds:
        field_name = "started_at" if kind == STARTED else "finished_at"
        return (
            f"match-{kind}: {field_name} is {at - wall:,.0f} s ahead of the worker's clock "
            f"(limit {max_future_seconds:g} s, SKILLSTREAM_MAX_FUTURE_SECONDS)"
        )
    return ReadEvent(event, mode, at)
