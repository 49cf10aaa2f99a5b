"""The Faust behaviour stream/pipeline/workarounds/acks.py relies on: an ack of a withheld
message never reaches the consumer's ack bookkeeping, so its offset is never committed. Fails
when a Faust upgrade changes ``Message.ack`` (then the workaround must change with it)."""

from __future__ import annotations

from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import faust
import pytest
from faust.types import TP
from faust.types.tuples import ConsumerMessage

from stream.pipeline.workarounds.acks import withhold_acks


@pytest.fixture
def app() -> Iterator[faust.App]:
    # Never started: no broker needed for the ack bookkeeping.
    app = faust.App("acks-test", broker="kafka://127.0.0.1:1", autodiscover=False)
    yield app


def message(offset: int) -> ConsumerMessage:
    return ConsumerMessage("t", 0, offset, 0.0, 0, [], b"k", b"v", None)


async def test_a_withheld_message_is_never_recorded_as_acked(app: faust.App) -> None:
    app.topics.add(app.topic("t", value_serializer="raw"))
    # Faust fills its acking-topic index when the consumer starts; without a broker, directly.
    conductor: Any = app.topics
    await conductor._update_indices()
    consumer: Any = app.consumer
    tp = TP("t", 0)
    # Committed up to 5 (the next offset to read), so the commit head check of
    # workarounds/headgap.py, installed or not in this process, lets the run from 5 through.
    consumer._committed_offset[tp] = 5
    done, withheld, later = message(5), message(6), message(7)
    events = [SimpleNamespace(message=withheld)]
    withhold_acks(events)  # type: ignore[arg-type]
    # What Faust's take_events does for every event of the batch when the agent leaves it.
    assert done.ack(consumer) is True
    assert withheld.ack(consumer) is False, (
        "Faust's Message.ack no longer checks Message.acked: withhold_acks (workarounds/acks.py) "
        "stopped working"
    )
    assert later.ack(consumer) is True
    assert sorted(consumer._acked[tp]) == [5, 7]
    # The commit stops below the withheld offset: 6 is read again after a restart or seek.
    assert consumer._new_offset(tp) == 6


def test_take_events_still_acks_every_event_of_a_batch_its_agent_leaves() -> None:
    """Why the workaround exists: in Faust's ``take_events`` the batch's events are acked in a
    ``finally`` around the ``yield``, so an agent that raises or is cancelled while it holds the
    batch has it acked anyway. When this fails, Faust no longer does that: revisit acks.py (it
    may no longer be needed)."""
    import ast
    import inspect
    import textwrap

    from faust.streams import Stream

    source = textwrap.dedent(inspect.getsource(Stream.take_events))
    acked_in_finally = False
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Try) and any(isinstance(n, ast.Expr) for n in node.body):
            yields = any(isinstance(n, ast.Yield) for b in node.body for n in ast.walk(b))
            for statement in node.finalbody:
                if isinstance(statement, ast.For) and ast.unparse(statement.iter) == "events":
                    calls = {
                        ast.unparse(n.func) for n in ast.walk(statement) if isinstance(n, ast.Call)
                    }
                    acked_in_finally = acked_in_finally or (yields and "self.ack" in calls)
    assert acked_in_finally, "Faust's take_events no longer acks its batch in a finally"
