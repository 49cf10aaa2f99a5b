"""stream/pipeline/workarounds/fetchwait.py: Faust still hard-codes the worker consumer's fetch
wait (else the patch is no longer needed), and the patched factory sets ours."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import faust
import pytest
from faust.transport.drivers import aiokafka as aiokafka_driver

from stream.pipeline.workarounds.fetchwait import FAUST_FETCH_MAX_WAIT_MS, patch_fetch_wait


@pytest.fixture
async def app() -> AsyncIterator[faust.App]:
    # Never started: building the consumer object needs no broker.
    yield faust.App("fetch-wait-test", broker="kafka://127.0.0.1:1", autodiscover=False)


def worker_consumer(app: faust.App, factory: Any) -> Any:
    consumer: Any = app.consumer
    return factory(consumer._thread, consumer.transport)


def fetch_wait(kafka_consumer: Any) -> int:
    wait: int = kafka_consumer._fetch_max_wait_ms
    return wait


async def test_faust_alone_still_waits_its_hard_coded_fetch_wait(app: faust.App) -> None:
    patch_fetch_wait(20)
    factory: Any = aiokafka_driver.AIOKafkaConsumerThread._create_worker_consumer
    unpatched = worker_consumer(app, factory.__wrapped__)
    assert fetch_wait(unpatched) == FAUST_FETCH_MAX_WAIT_MS, (
        "upstream changed the worker consumer's fetch wait: revisit workarounds/fetchwait.py "
        "(remove it if Faust now has a setting for it)"
    )


async def test_the_patched_consumer_waits_the_configured_time(app: faust.App) -> None:
    patch_fetch_wait(37)
    patch_fetch_wait(37)  # idempotent: one wrapper, not two
    factory: Any = aiokafka_driver.AIOKafkaConsumerThread._create_worker_consumer
    assert not hasattr(factory.__wrapped__, "__wrapped__")
    assert fetch_wait(worker_consumer(app, factory)) == 37
    patch_fetch_wait(20)
    assert fetch_wait(worker_consumer(app, factory)) == 20
