"""stream/pipeline/workarounds/committed.py: Faust's consumer thread seeks through the patch,
which rewinds a partition never committed and leaves changelogs alone (the bug itself, on a
real broker: tests/integration/pipeline/workarounds/test_committed_seek.py)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from aiokafka import TopicPartition
from faust.transport.drivers import aiokafka as aiokafka_driver

from stream.pipeline.workarounds.committed import on_seek, patch_seek_to_committed

STREAM, NEVER, CHANGELOG = (
    TopicPartition("in", 0),
    TopicPartition("in", 1),
    TopicPartition("app-ratings-changelog", 0),
)


class Consumer:
    """The calls of aiokafka's consumer the patched seek makes, recorded."""

    def __init__(self) -> None:
        self.rewound: list[TopicPartition] = []
        self.sought: dict[TopicPartition, int] = {}

    def seek(self, tp: TopicPartition, offset: int) -> None:
        self.sought[tp] = offset

    async def seek_to_committed(self) -> dict[TopicPartition, int | None]:
        return {STREAM: 4, NEVER: None, CHANGELOG: None}

    async def seek_to_beginning(self, *tps: TopicPartition) -> None:
        self.rewound.extend(tps)

    async def beginning_offsets(self, tps: list[TopicPartition]) -> dict[TopicPartition, int]:
        # A log whose first records are gone (retention): it starts at 7.
        return dict.fromkeys(tps, 7)


class Thread:
    """Faust's consumer thread, as the patched method uses it."""

    def __init__(self, consumer: Consumer, app: object) -> None:
        self.kafka = consumer
        self.consumer: Any = type(
            "FaustConsumer",
            (),
            {"_is_changelog_tp": lambda _, tp: tp.topic.endswith("-changelog"), "app": app},
        )()

    def _ensure_consumer(self) -> Consumer:
        return self.kafka

    async def call_thread(self, method: Callable[..., Any], *args: Any) -> Any:
        return await method(*args)


async def test_the_thread_seeks_through_the_patch_once() -> None:
    patch_seek_to_committed()
    patch_seek_to_committed()
    method: Any = aiokafka_driver.AIOKafkaConsumerThread.seek_to_committed
    assert not hasattr(method.__wrapped__, "__wrapped__")
    kafka = Consumer()
    app = type("App", (), {})()
    heard: list[tuple[dict[TopicPartition, int], dict[TopicPartition, int]]] = []

    def listener(
        committed: Mapping[TopicPartition, int], starts: Mapping[TopicPartition, int]
    ) -> Mapping[TopicPartition, int]:
        heard.append((dict(committed), dict(starts)))
        return {STREAM: 4, NEVER: 7}

    on_seek(app, listener)
    committed = await method(Thread(kafka, app))
    # The rewound partition's log start stands for its commit (workarounds/headgap.py).
    assert committed == {STREAM: 4, NEVER: 7, CHANGELOG: None}
    assert kafka.rewound == [NEVER]
    # The app hears where its stream partitions were sought, and where their logs start.
    assert heard == [({STREAM: 4, NEVER: 7}, {STREAM: 7, NEVER: 7})]
    assert kafka.sought == {}  # it kept every commit


async def test_a_partition_the_app_starts_lower_is_sought_there_and_reported_committed_there() -> (
    None
):
    """A table restored behind its offsets (stream/pipeline/checkpoints.py): the app says the
    stream partition starts below its commit; Faust is told it was committed there, so its own
    read and commit bookkeeping starts from the same place."""
    kafka = Consumer()
    app = type("App", (), {})()
    on_seek(app, lambda committed, starts: {**committed, STREAM: 2})
    method: Any = aiokafka_driver.AIOKafkaConsumerThread.seek_to_committed
    committed = await method(Thread(kafka, app))
    assert kafka.sought == {STREAM: 2}
    assert committed == {STREAM: 2, NEVER: 7, CHANGELOG: None}
