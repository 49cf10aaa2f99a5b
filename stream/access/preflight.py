"""Before a worker starts: does its principal hold every topic grant of its role?

The brokers say, per topic, which operations the asking principal may perform (Metadata v8 and
later with ``include_topic_authorized_operations``, KIP-430, Kafka 2.3+): one request for every
topic of the role, compared with :func:`stream.access.kafka.grants`. A missing grant stops the
worker with one line naming the principal, the operation and the topic, instead of Faust
retrying a fetch or a send it will never be allowed (or failing later with a traceback).

What it does not check: consumer groups (the group's grant is checked by the broker when the
worker joins), and nothing on a broker that does not report operations (no authorizer, or one
that answers with Kafka's "not provided" value, as Tansu does): then it says so in one log line
and lets the worker start.

Failure: AccessDeniedError (one line, exit 2) for a missing grant; UnreachableError for a broker
that cannot be reached. Replay: it only reads metadata.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from typing import Any, TypeAlias

from aiokafka.errors import IncompatibleBrokerVersion
from aiokafka.protocol.api import Request, RequestStruct, Response
from aiokafka.protocol.types import Array, Boolean, Int16, Int32, Schema, String

from stream.access.kafka import Grant, Pattern, Resource, principal_shown
from stream.config.settings import Settings
from stream.reachability import AccessDeniedError, kafka_client, kafka_within_timeout

__all__ = ["NOT_PROVIDED", "check_topic_grants", "missing_grants", "refusal"]

log = logging.getLogger("skillstream.worker")

# Kafka's value for "authorized operations not provided" (Int32 minimum).
NOT_PROVIDED = -(2**31)
TOPIC_AUTHORIZATION_FAILED = 29


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
    """Metadata v8 for ``topics``, asking what this principal may do with each."""

    API_KEY = 3

    def __init__(self, topics: list[str]) -> None:
        self._topics = topics

    def build(self, request_struct_class: type[MetadataV8Struct]) -> MetadataV8Struct:
        return request_struct_class(self._topics, False, False, True)


def missing_grants(
    needed: Iterable[Grant], topics: Sequence[tuple[int, str, int]]
) -> list[Grant] | None:
    """The literal topic grants of ``needed`` the brokers' answer (per topic: error code, name,
    authorized operations) does not hold; None when the answer says nothing of operations."""
    answers = {name: (code, ops) for code, name, ops in topics}
    missing: list[Grant] = []
    reported = False
    for grant in needed:
        if grant.resource is not Resource.TOPIC or grant.pattern is not Pattern.LITERAL:
            continue
        code, ops = answers.get(grant.name, (0, NOT_PROVIDED))
        if code == TOPIC_AUTHORIZATION_FAILED:
            reported = True
            missing.append(grant)
        elif code == 0 and ops != NOT_PROVIDED:
            reported = True
            if not ops & (1 << grant.operation):
                missing.append(grant)
    if not reported:
        return None
    return missing


async def check_topic_grants(settings: Settings, needed: list[Grant]) -> None:
    """AccessDeniedError naming the first missing grant of ``needed``; a log line and nothing
    else when the brokers do not report what the principal may do."""
    names = sorted({g.name for g in needed if g.resource is Resource.TOPIC})
    async with kafka_client(settings) as client:
        node = client.get_random_node()
        request = TopicOperationsRequest(names)
        try:
            response: Any = await kafka_within_timeout(settings, client.send(node, request))
        except (IncompatibleBrokerVersion, NotImplementedError):
            response = None  # a broker older than Kafka 2.3: no Metadata v8
    answer = [] if response is None else [(c, n, ops) for c, n, _, _, ops in response.topics]
    missing = missing_grants(needed, answer)
    if missing is None:
        log.info("the brokers do not report what this principal may do: grants not checked")
        return
    if missing:
        raise refusal(settings, missing)


def refusal(settings: Settings, missing: Sequence[Grant]) -> AccessDeniedError:
    """The one line for a worker missing ``missing`` (not empty): the first, and how many more."""
    first = missing[0]
    more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
    return AccessDeniedError(
        f"{principal_shown(settings)} may not {first.operation.name} topic"
        f" {first.name!r}{more}: grant the worker role's ACLs (`skillstream topics create"
        " --principal worker=...`, docs/operations.md#access-who-may-do-what)"
    )
