"""The topics a worker uses, and creating the missing ones before it starts.

Every topic the worker reads or writes has the same partition count: Faust co-partitions
tables with their source topics by partition number, and the match and player partitions are
computed from it. The changelog topics of the tables (``<app id>-<table>-changelog``) are
created here too, compacted, so ``skillstream topics create`` provisions everything before
the first worker starts.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from aiokafka.admin import AIOKafkaAdminClient, NewTopic
from aiokafka.errors import TopicAlreadyExistsError, for_code

from stream.access.kafka import principal_shown
from stream.config.settings import TABLES, Settings
from stream.reachability import (
    AccessDeniedError,
    kafka_errors,
    kafka_within_timeout,
    quiet_kafka_logs,
    resolve_brokers,
)

# TABLES is defined with the settings (the changelog names derive from it) and re-exported here.
__all__ = [
    "DAY_MS",
    "TABLES",
    "TopicError",
    "TopicSpec",
    "ensure_topics",
    "topic_specs",
    "worker_optional_topics",
]

DAY_MS = 86_400_000


@dataclass(frozen=True)
class TopicSpec:
    name: str
    partitions: int
    replication_factor: int
    config: dict[str, str] = field(default_factory=dict)


def topic_specs(settings: Settings) -> list[TopicSpec]:
    """Every topic of the deployment: inputs, output, dead letters, the audit log of
    corrections, internal commands, and the tables' changelogs (compacted: each keeps the
    latest value per key for ever, which is what recovery and ``cache rebuild`` read)."""
    p, r = settings.partitions, settings.kafka.replication_factor
    week = str(7 * DAY_MS)
    # With three or more replicas an acknowledged write survives the loss of one broker.
    durable = {"min.insync.replicas": "2"} if r >= 3 else {}
    delete = {"cleanup.policy": "delete", **durable}
    compact = {"cleanup.policy": "compact", **durable}
    return [
        TopicSpec(settings.topics.match_started, p, r, {**delete, "retention.ms": week}),
        TopicSpec(settings.topics.match_finished, p, r, {**delete, "retention.ms": week}),
        TopicSpec(settings.topics.rating_changed, p, r, {**delete, "retention.ms": week}),
        TopicSpec(settings.topics.dead_letter, p, r, {**delete, "retention.ms": str(30 * DAY_MS)}),
        # One partition: the corrections have one order. Kept for good: it is the audit trail.
        TopicSpec(settings.topics.audit, 1, r, {**delete, "retention.ms": "-1"}),
        TopicSpec(settings.match_commands_topic, p, r, {**delete, "retention.ms": week}),
        TopicSpec(settings.player_commands_topic, p, r, {**delete, "retention.ms": week}),
        *(TopicSpec(settings.changelog_topic(t), p, r, compact) for t in TABLES),
    ]


TOPIC_AUTHORIZATION_FAILED = 29  # Kafka's error code


def worker_optional_topics(settings: Settings) -> frozenset[str]:
    """The topics a worker makes sure of only where its grants allow: the audit topic, which
    only operators read and write (a worker without ACLs creates it, so that a local stack's
    corrections find it; one with the worker role's grants leaves it to `topics create`)."""
    return frozenset({settings.topics.audit})


class TopicError(RuntimeError):
    """A topic exists with a partition count the worker cannot use."""


async def ensure_topics(
    settings: Settings,
    specs: list[TopicSpec] | None = None,
    optional: frozenset[str] = frozenset(),
) -> list[str]:
    """Create the missing topics; returns the names created.

    Raises TopicError when a topic exists with another partition count (matches and players
    would be looked for on the wrong partitions), AccessDeniedError when the brokers refuse to
    create one not in ``optional`` (an optional one refused is left out), UnreachableError
    when the brokers cannot be reached or do not answer within the connect timeout. Safe to
    run any number of times, also from several workers at once.
    """
    specs = topic_specs(settings) if specs is None else specs
    admin = AIOKafkaAdminClient(
        bootstrap_servers=settings.kafka.bootstrap_servers,
        request_timeout_ms=round(settings.connect_timeout_seconds * 1000),
        **settings.kafka.security.aiokafka_options(),
    )
    try:
        with quiet_kafka_logs(), kafka_errors(settings):
            await kafka_within_timeout(settings, resolve_brokers(settings))
            await kafka_within_timeout(settings, admin.start())
            return await _create_missing(admin, specs, principal_shown(settings), optional)
    finally:
        await admin.close()


async def _create_missing(
    admin: AIOKafkaAdminClient,
    specs: list[TopicSpec],
    principal: str,
    optional: frozenset[str] = frozenset(),
) -> list[str]:
    existing = set(await admin.list_topics())
    created: list[str] = []
    missing = [spec for spec in specs if spec.name not in existing]
    for spec in missing:
        new = NewTopic(
            spec.name, spec.partitions, spec.replication_factor, topic_configs=spec.config
        )
        response = await admin.create_topics([new])
        # aiokafka returns the broker's answer without raising: each topic's code is read here
        # (until 2026-12-05 it was not, and a topic the broker refused was reported created).
        for name, code, *message in response.topic_errors:
            if code == 0:
                created.append(name)
            elif code == TOPIC_AUTHORIZATION_FAILED and name in optional:
                continue
            elif code == TOPIC_AUTHORIZATION_FAILED:
                raise AccessDeniedError(
                    f"{principal} finds no topic {name!r} and may not create it (CREATE on TOPIC"
                    f" {name}; or it lacks DESCRIBE on it): run `skillstream topics create` with"
                    " an administrator's credentials first"
                    " (docs/operations.md#access-who-may-do-what)"
                )
            elif code != TopicAlreadyExistsError.errno:
                said = (message[0] if message else None) or for_code(code).__name__
                raise TopicError(f"topic {name!r}: the broker refused to create it: {said}")
    present = [spec for spec in specs if spec.name in existing]
    if present:
        described = await admin.describe_topics([spec.name for spec in present])
        counts = {d["topic"]: len(d["partitions"]) for d in described}
        for spec in present:
            count = counts.get(spec.name)
            if count is not None and count != spec.partitions:
                raise TopicError(
                    f"topic {spec.name!r} has {count} partitions but "
                    f"SKILLSTREAM_PARTITIONS is {spec.partitions}; every topic of the "
                    "worker needs the same count (see docs/operations.md: changing the "
                    "partition count)"
                )
    return created
