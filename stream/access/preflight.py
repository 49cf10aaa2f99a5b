"""Before a worker starts: does its principal hold every topic grant of its role?

The brokers say, per topic, which operations the asking principal may perform (Metadata v8 and
later with ``include_topic_authorized_operations``, KIP-430, Kafka 2.3+): one request for every
topic of the role, compared with :func:`stream.access.kafka.grants`. A missing grant stops the
worker with one line naming the principal, the operation and the topic, instead of Faust
retrying a fetch or a send it will never be allowed (or failing later with a traceback).

Its consumer groups are checked too: a FindCoordinator for each (it needs DESCRIBE on the
group, which READ implies) is refused for a group the principal may not use. A broker that
answers a topic's operations with Kafka's "not provided" value (Tansu does) cannot be checked
this way: the worker starts. (A broker without an authorizer reports every operation allowed.)

Failure: AccessDeniedError (one line, exit 2) for a missing grant; UnreachableError for a broker
that cannot be reached. Replay: it only reads metadata.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from aiokafka.errors import IncompatibleBrokerVersion
from aiokafka.protocol.api import Request, RequestStruct, Response
from aiokafka.protocol.coordination import FindCoordinatorRequest
from aiokafka.protocol.types import Array, Boolean, Int16, Int32, Schema, String

from stream.access.kafka import Grant, Operation, Pattern, Resource, principal_shown
from stream.config.settings import Settings
from stream.reachability import AccessDeniedError, kafka_client, kafka_within_timeout

__all__ = ["NOT_PROVIDED", "Answer", "check_grants", "missing_grants", "refusal"]

# Kafka's value for "authorized operations not provided" (Int32 minimum).
NOT_PROVIDED = -(2**31)
TOPIC_AUTHORIZATION_FAILED = 29
GROUP_AUTHORIZATION_FAILED = 30


class MetadataResponse_v8(Response):  # type: ignore[misc]  # noqa: N801 (aiokafka's naming)
    API_KEY = 3
    API_VERSION = 8
    SCHEMA = Schema(
        ("throttle_time_ms", Int32),
        (
            "brokers",
            Array(
                ("node_id", Int32),
                ("host", String("utf-8")),
                ("port", Int32),
                ("rack", String("utf-8")),
            ),
        ),
        ("cluster_id", String("utf-8")),
        ("controller_id", Int32),
        (
            "topics",
            Array(
                ("error_code", Int16),
                ("topic", String("utf-8")),
                ("is_internal", Boolean),
                (
                    "partitions",
                    Array(
                        ("error_code", Int16),
                        ("partition", Int32),
                        ("leader", Int32),
                        ("leader_epoch", Int32),
                        ("replicas", Array(Int32)),
                        ("isr", Array(Int32)),
                        ("offline_replicas", Array(Int32)),
                    ),
                ),
                ("topic_authorized_operations", Int32),
            ),
        ),
        ("cluster_authorized_operations", Int32),
    )


class MetadataRequest_v8(RequestStruct):  # type: ignore[misc]  # noqa: N801
    API_KEY = 3
    API_VERSION = 8
    RESPONSE_TYPE = MetadataResponse_v8
    SCHEMA = Schema(
        ("topics", Array(String("utf-8"))),
        ("allow_auto_topic_creation", Boolean),
        ("include_cluster_authorized_operations", Boolean),
        ("include_topic_authorized_operations", Boolean),
    )


MetadataV8Struct: TypeAlias = MetadataRequest_v8


class TopicOperationsRequest(Request[MetadataV8Struct]):  # type: ignore[misc]
    """Metadata v8 for ``topics``, asking what this principal may do with each and with the
    cluster (a CREATE granted on the cluster covers every topic)."""

    API_KEY = 3

    def __init__(self, topics: list[str]) -> None:
        self._topics = topics

    def build(self, request_struct_class: type[MetadataV8Struct]) -> MetadataV8Struct:
        return request_struct_class(self._topics, False, True, True)


@dataclass(frozen=True)
class Answer:
    """What the brokers said: per topic (error code, authorized operations), the cluster's
    authorized operations, and the groups they refused to name a coordinator for."""

    topics: Mapping[str, tuple[int, int]]
    cluster: int = NOT_PROVIDED
    refused_groups: frozenset[str] = frozenset()


def missing_grants(needed: Iterable[Grant], answer: Answer) -> list[Grant] | None:
    """The literal grants of ``needed`` the brokers' answer does not hold; None when it says
    nothing of any topic's operations (no authorizer's view to compare with)."""
    missing: list[Grant] = []
    reported = False
    cluster_create = answer.cluster != NOT_PROVIDED and answer.cluster & (1 << Operation.CREATE)
    for grant in needed:
        if grant.pattern is not Pattern.LITERAL:
            continue
        if grant.resource is Resource.GROUP:
            if grant.name in answer.refused_groups:
                missing.append(grant)
            continue
        code, ops = answer.topics.get(grant.name, (0, NOT_PROVIDED))
        if code == TOPIC_AUTHORIZATION_FAILED:
            reported = True
            missing.append(grant)
        elif code == 0 and ops != NOT_PROVIDED:
            reported = True
            held = ops & (1 << grant.operation) or (
                grant.operation is Operation.CREATE and cluster_create
            )
            if not held:
                missing.append(grant)
    if not reported and not missing:
        return None
    return missing


async def check_grants(settings: Settings, needed: list[Grant]) -> bool:
    """AccessDeniedError naming the first missing grant of ``needed``; False when the brokers
    do not report what the principal may do with its topics (then only its groups were
    checked), True when everything was checked and held."""
    names = sorted({g.name for g in needed if g.resource is Resource.TOPIC})
    groups = sorted({g.name for g in needed if g.resource is Resource.GROUP})
    async with kafka_client(settings) as client:
        node = client.get_random_node()
        try:
            response: Any = await kafka_within_timeout(
                settings, client.send(node, TopicOperationsRequest(names))
            )
        except (IncompatibleBrokerVersion, NotImplementedError):
            response = None  # a broker older than Kafka 2.3: no Metadata v8
        refused = set()
        for group in groups:
            # FindCoordinator needs DESCRIBE on the group, which READ implies.
            found: Any = await kafka_within_timeout(
                settings, client.send(node, FindCoordinatorRequest(group, 0))
            )
            if found.error_code == GROUP_AUTHORIZATION_FAILED:
                refused.add(group)
    if response is None:
        answer = Answer({}, refused_groups=frozenset(refused))
    else:
        topics = {name: (code, ops) for code, name, _, _, ops in response.topics}
        answer = Answer(topics, response.cluster_authorized_operations, frozenset(refused))
    missing = missing_grants(needed, answer)
    if missing:
        raise refusal(settings, missing)
    return missing is not None


def refusal(settings: Settings, missing: Sequence[Grant]) -> AccessDeniedError:
    """The one line for a worker missing ``missing`` (not empty): the first, and how many more."""
    first = missing[0]
    more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
    what = "topic" if first.resource is Resource.TOPIC else "group"
    return AccessDeniedError(
        f"{principal_shown(settings)} may not {first.operation.name} {what}"
        f" {first.name!r}{more}: grant the worker role's ACLs (`skillstream topics create"
        " --principal worker=...`, docs/operations.md#access-who-may-do-what)"
    )
