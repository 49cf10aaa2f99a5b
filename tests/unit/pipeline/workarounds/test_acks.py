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
