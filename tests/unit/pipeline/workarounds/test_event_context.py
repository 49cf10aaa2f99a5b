"""stream/pipeline/workarounds/events.py: the event EventContext sets is the one Faust's table
writes ask for (``faust.streams.current_event``), and it is put back afterwards."""

from __future__ import annotations

from typing import Any

import pytest
from faust.streams import current_event

from stream.pipeline.workarounds.events import EventContext


class Event:
    """Stands for a Faust event: the context holds a weak reference to it, as Faust does."""


def test_the_event_is_current_inside_the_context_only() -> None:
    outer: Any = Event()
    inner: Any = Event()
    assert current_event() is None
    with EventContext(outer):
        assert current_event() is outer, (
            "Faust no longer reads its current event from faust.streams._current_event: "
            "EventContext (workarounds/events.py) stopped working"
        )
        with EventContext(inner):
            assert current_event() is inner
        assert current_event() is outer
    assert current_event() is None


def test_the_event_is_put_back_after_an_error() -> None:
    event: Any = Event()
    with pytest.raises(RuntimeError), EventContext(event):
        raise RuntimeError("write failed")
    assert current_event() is None
