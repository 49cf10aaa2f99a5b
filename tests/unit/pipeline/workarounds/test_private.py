"""stream/pipeline/workarounds/private.py: the private state it reads still exists in Faust, with
the meaning the accessors give it."""

from __future__ import annotations

from collections.abc import AsyncIterator

import faust
import pytest
from faust.exceptions import NotReady

from stream.pipeline.workarounds import private


@pytest.fixture
async def app() -> AsyncIterator[faust.App]:
    # Never started: the state before start is what readiness reports most of the time.
    yield faust.App("private-test", broker="kafka://127.0.0.1:1", autodiscover=False)


async def test_the_private_attributes_still_exist(app: faust.App) -> None:
    gone = [name for name in ("_started", "_consumer") if not hasattr(app, name)]
    assert gone == [], f"Faust no longer has App.{gone}: revisit workarounds/private.py"
    assert hasattr(app.consumer, "_committed_offset"), (
        "Faust's consumer no longer has _committed_offset: revisit workarounds/private.py"
    )
    thread = getattr(app.consumer, "_thread", None)
    assert thread is not None and hasattr(thread, "_ensure_consumer"), (
        "Faust's consumer no longer reaches aiokafka's through _thread._ensure_consumer(): "
        "revisit workarounds/private.py (fetched_end)"
    )


async def test_an_app_not_started_reads_as_such_and_is_not_changed_by_asking(
    app: faust.App,
) -> None:
    assert private.started(app) is False
    assert private.consumer_exists(app) is False
    # Asking did not create the consumer; the public attribute does.
    assert private.consumer_exists(app) is False
    consumer = app.consumer
    assert private.consumer_exists(app) is True
    assert dict(private.committed_offsets(consumer)) == {}


def test_missing_attributes_read_as_nothing() -> None:
    bare = object()
    assert private.started(bare) is False
    assert private.consumer_exists(bare) is False
    assert dict(private.committed_offsets(bare)) == {}


async def test_the_aiokafka_producer_under_fausts_is_reached_and_not_ready_before_start(
    app: faust.App,
) -> None:
    with pytest.raises(NotReady):
        private.kafka_producer(app)
