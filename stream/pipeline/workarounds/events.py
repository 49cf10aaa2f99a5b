"""Table writes outside Faust's stream iteration, to the right changelog partition.

What: Faust decides a table write's changelog partition (and, with RocksDB, its database) from
the *current event*, a context variable it sets while an agent iterates a stream
(``faust.streams._current_event``). It has no public way to set it.

Why: the batch agents write a whole batch's changes after delivery
(stream/pipeline/changelogs.py, ``TableWrites.sent``), outside the iteration of any single
event; each partition's writes must go to that partition's changelog. :class:`EventContext`
makes one event of the partition current while its writes are made.

Upstream: https://github.com/faust-streaming/faust/issues/497 (open: a table written outside
one event's iteration, as with ``Stream.take()``, fails with "Cannot modify table key from
outside of stream iteration"). ``faust.streams.current_event()`` reads the variable; nothing
public sets it.

Written for faust-streaming 0.15.3, aiokafka 0.14.0, mode-streaming 0.7.1.
tests/unit/pipeline/workarounds/test_event_context.py fails when ``current_event()`` no longer
reads the variable set here.

Failure and replay: only a context variable changes, restored on exit even on error.
"""

from __future__ import annotations

from contextvars import Token
from typing import Any
from weakref import ref

from faust.streams import _current_event
from faust.types import EventT

__all__ = ["EventContext"]


class EventContext:
    """Make ``event`` Faust's current event, so table writes go to its partition's changelog
    (and, with RocksDB, to its partition's database)."""

    def __init__(self, event: EventT[Any]) -> None:
        self.event = event

    def __enter__(self) -> None:
        self.token: Token[Any] = _current_event.set(ref(self.event))

    def __exit__(self, *exc: object) -> None:
        _current_event.reset(self.token)
