"""The local stack as the real-broker tests use it: a worker's environment, topics made first, the
simulated fleet publishing to topics of its own."""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from stream.local.stack import LocalStack, environment
from stream.simulation import SimulatedMatch
from stream.simulation.gamefleet import FleetConfig, FleetReport, run_fleet

STARTED, FINISHED = "match-started", "match-finished"
RATING_CHANGED, DEAD_LETTERS = "rating-changed", "skillstream-dlq"


def worker_env(
    stack: LocalStack, *, partitions: int, modes_file: Path, data_dir: Path
) -> dict[str, str]:
    """Plain topic names, a short session (the group forms in ~2 s), the given modes file."""
    return {
        **environment(stack),
        "SKILLSTREAM_PARTITIONS": str(partitions),
        "SKILLSTREAM_SESSION_TIMEOUT_SECONDS": "4",
        "SKILLSTREAM_MODES_FILE": str(modes_file),
        "SKILLSTREAM_DATA_DIR": str(data_dir),
        "SKILLSTREAM_TOPIC_MATCH_STARTED": STARTED,
        "SKILLSTREAM_TOPIC_MATCH_FINISHED": FINISHED,
        "SKILLSTREAM_TOPIC_RATING_CHANGED": RATING_CHANGED,
        "SKILLSTREAM_TOPIC_DLQ": DEAD_LETTERS,
    }


def own_topics_env(stack: LocalStack, letter: str) -> dict[str, str]:
    """Settings for one test's own app id, topics and cache prefix on a shared stack (4
    partitions, a short session); ``letter`` starts the app id, to tell the tests apart."""
    tag = uuid.uuid4().hex[:8]
    return {
        **environment(stack),
        "SKILLSTREAM_APP_ID": f"{letter}{tag}",
        "SKILLSTREAM_PARTITIONS": "4",
        "SKILLSTREAM_SESSION_TIMEOUT_SECONDS": "4",
        "SKILLSTREAM_TOPIC_MATCH_STARTED": f"started-{tag}",
        "SKILLSTREAM_TOPIC_MATCH_FINISHED": f"finished-{tag}",
        "SKILLSTREAM_TOPIC_RATING_CHANGED": f"rating-{tag}",
        "SKILLSTREAM_TOPIC_DLQ": f"dlq-{tag}",
        "SKILLSTREAM_CACHE_PREFIX": f"{letter}{tag}",
    }


async def create_topics(stack: LocalStack, *names: str, partitions: int = 2) -> None:
    """Topics made before anyone uses them: librdkafka consumers that subscribe to a topic
    that does not exist yet see it only at their next metadata refresh (minutes)."""
    admin = AIOKafkaAdminClient(bootstrap_servers=stack.bootstrap_servers)
    await admin.start()
    try:
        await admin.create_topics([NewTopic(n, partitions, 1) for n in names])
    finally:
        await admin.close()


async def fleet_to_own_topics(
    stack: LocalStack,
    matches: Iterable[SimulatedMatch],
    topics: tuple[str, str],
    partitions: int,
    config: FleetConfig,
) -> FleetReport:
    """``matches`` published by the simulated fleet as ``config`` says, to ``topics`` (starts,
    finishes) of their own, made first with ``partitions`` each."""
    started, finished = topics
    await create_topics(stack, started, finished, partitions=partitions)
    config = replace(config, match_started_topic=started, match_finished_topic=finished)
    return await run_fleet(matches, stack.bootstrap_servers, config)
