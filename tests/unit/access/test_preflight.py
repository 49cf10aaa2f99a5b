"""A worker's grants checked against what the brokers say it may do (stream/access/preflight.py):
the decision, from answers as Metadata v8 and FindCoordinator carry them;
tests/integration/test_local_stack.py asks the local broker for real."""

from __future__ import annotations

from stream.access.kafka import Grant, Operation, Pattern, Resource, grants
from stream.access.preflight import (
    NOT_PROVIDED,
    Answer,
    MetadataRequest_v8,
    TopicOperationsRequest,
    missing_grants,
    refusal,
)
from stream.config.settings import Settings

READ, WRITE, CREATE, DESCRIBE = 1 << 3, 1 << 4, 1 << 5, 1 << 8
WORKER = grants(Settings(), "worker")


def answer(ops: int, cluster: int = NOT_PROVIDED, **codes: int) -> Answer:
    names = sorted({g.name for g in WORKER if g.resource is Resource.TOPIC})
    return Answer({name: (codes.get(name.replace("-", "_"), 0), ops) for name in names}, cluster)


def grant(name: str, op: Operation, resource: Resource = Resource.TOPIC) -> Grant:
    return Grant(resource, name, Pattern.LITERAL, op)


def test_a_principal_with_every_operation_misses_nothing() -> None:
    assert missing_grants(WORKER, answer(READ | WRITE | CREATE | DESCRIBE)) == []


def test_a_principal_that_may_only_read_misses_every_write_and_create() -> None:
    missing = missing_grants(WORKER, answer(READ | DESCRIBE))
    assert missing is not None and missing
    assert {g.operation for g in missing} == {Operation.WRITE, Operation.CREATE}
    assert grant("rating-changed", Operation.WRITE) in missing


def test_create_granted_on_the_cluster_covers_every_topic() -> None:
    cluster_create = 1 << Operation.CREATE
    assert missing_grants(WORKER, answer(READ | WRITE | DESCRIBE, cluster_create)) == []


def test_a_topic_it_may_not_even_describe_misses_every_grant_on_it() -> None:
    missing = missing_grants(WORKER, answer(READ | WRITE | CREATE, match_started=29))
    assert missing == [grant("match-started", Operation.READ)]


def test_a_group_the_broker_names_no_coordinator_for_is_missing() -> None:
    full = answer(READ | WRITE | CREATE)
    refused = Answer(full.topics, refused_groups=frozenset({"skillstream"}))
    assert missing_grants(WORKER, refused) == [grant("skillstream", Operation.READ, Resource.GROUP)]
    # Also where the topics' operations are not reported.
    blind = Answer({}, refused_groups=frozenset({"skillstream-cache"}))
    assert missing_grants(WORKER, blind) == [
        grant("skillstream-cache", Operation.READ, Resource.GROUP)
    ]


def test_a_broker_that_reports_nothing_is_not_taken_for_a_refusal() -> None:
    assert missing_grants(WORKER, answer(NOT_PROVIDED)) is None
    assert missing_grants(WORKER, Answer({})) is None
    # A topic that does not exist yet (3) says nothing either way.
    assert missing_grants(WORKER, answer(NOT_PROVIDED, match_started=3)) is None


def test_the_request_asks_for_the_topics_and_the_clusters_operations() -> None:
    built = TopicOperationsRequest(["a"]).build(MetadataRequest_v8)
    # topics [a], no auto-creation, the cluster's operations, the topics' operations.
    assert built.encode() == b"\x00\x00\x00\x01\x00\x01a" + b"\x00\x01\x01"


def test_the_refusal_names_the_principal_the_operation_and_the_resource() -> None:
    settings = Settings.from_env(
        {
            "KAFKA_SECURITY_PROTOCOL": "SASL_PLAINTEXT",
            "KAFKA_SASL_USERNAME": "w",
            "KAFKA_SASL_PASSWORD": "p",
        }
    )
    missing = missing_grants(WORKER, answer(READ | DESCRIBE))
    assert missing
    assert str(refusal(settings, missing)).startswith(
        f"KAFKA_SASL_USERNAME 'w' may not {missing[0].operation.name} topic"
        f" {missing[0].name!r} (and {len(missing) - 1} more): grant the worker role's ACLs"
    )
    group = [grant("skillstream", Operation.READ, Resource.GROUP)]
    assert str(refusal(Settings(), group)).startswith(
        "this client's principal may not READ group 'skillstream': grant"
    )
