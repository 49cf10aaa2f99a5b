"""Each Kafka role's ACLs (stream/access/kafka.py): what each principal may do, derived from
the settings, as the table in docs/operations.md says it."""

from __future__ import annotations

import dataclasses

import pytest
from aiokafka.protocol.admin import CreateAclsRequest, CreateAclsRequest_v1

from stream.access.apply import ALLOW, ANY_HOST
from stream.access.kafka import (
    ROLES,
    Binding,
    Grant,
    Operation,
    Pattern,
    Resource,
    bindings_for,
    grants,
    parse_principals,
)
from stream.config.settings import TABLES, CacheSettings, Settings
from stream.errors import UserError

S = Settings()
R, W, C, D = Operation.READ, Operation.WRITE, Operation.CREATE, Operation.DESCRIBE


def topic(name: str, op: Operation, pattern: Pattern = Pattern.LITERAL) -> Grant:
    return Grant(Resource.TOPIC, name, pattern, op)


def group(name: str, op: Operation = R, pattern: Pattern = Pattern.LITERAL) -> Grant:
    return Grant(Resource.GROUP, name, pattern, op)


def test_game_fleets_may_write_the_two_inputs_and_nothing_else() -> None:
    assert grants(S, "fleet") == [topic("match-finished", W), topic("match-started", W)]


def test_a_cache_writer_reads_rating_changed_in_its_group_and_writes_dead_letters() -> None:
    assert set(grants(S, "cache-writer")) == {
        topic("rating-changed", R),
        topic("skillstream-dlq", W),
        group("skillstream-cache"),
    }


def test_a_worker_gets_its_own_topics_and_group_and_never_the_audit_or_the_cluster() -> None:
    off = dataclasses.replace(S, cache=CacheSettings(writer="off"))
    worker = set(grants(off, "worker"))
    internal = [
        "skillstream-match-commands",
        "skillstream-player-commands",
        *(f"skillstream-{t}-changelog" for t in TABLES),
    ]
    assert worker == {
        topic("match-started", R),
        topic("match-finished", R),
        *(topic(name, op) for name in internal for op in (R, W, C)),
        # Faust's leader topic: consumed and declared, never written.
        topic("skillstream-__assignor-__leader", R),
        topic("skillstream-__assignor-__leader", C),
        topic("rating-changed", W),
        topic("skillstream-dlq", W),
        group("skillstream"),
    }
    # With the cache writer in the worker (the default), the writer's grants come along.
    assert set(grants(S, "worker")) == worker | set(grants(S, "cache-writer"))


def test_analytics_read_rating_changed_in_groups_under_their_prefix() -> None:
    assert grants(S, "analytics") == [
        topic("rating-changed", R),
        group("skillstream-analytics", R, Pattern.PREFIXED),
    ]


def test_a_re_rating_deployment_owns_its_prefix_and_an_operator_may_read_it() -> None:
    rerate = set(grants(S, "rerate", "skillstream-g2"))
    assert rerate == {
        topic("match-started", R),
        topic("match-finished", R),
        *(topic("skillstream-g2-", op, Pattern.PREFIXED) for op in (R, W, C)),
        group("skillstream-g2"),
    }
    plain = set(grants(S, "operator"))
    assert plain == {
        *(topic(name, op) for name in ("skillstream-audit", "rating-changed") for op in (R, W)),
        topic("match-started", R),
        topic("match-finished", R),
        topic("skillstream-ratings-changelog", R),
    }
    assert set(grants(S, "operator", "skillstream-g2")) - plain == {
        topic("skillstream-g2-", R, Pattern.PREFIXED),
        group("skillstream-g2", D),
    }
    with pytest.raises(UserError, match="--rerate-app-id"):
        grants(S, "rerate")


@pytest.mark.parametrize("role", ROLES)
def test_only_the_operator_writes_the_audit_topic_and_nobody_touches_the_cluster(role: str) -> None:
    for grant in grants(S, role, "skillstream-g2"):
        assert grant.resource in (Resource.TOPIC, Resource.GROUP)
        if grant.name == S.topics.audit and grant.operation is W:
            assert role == "operator"
        if grant.name in (S.topics.match_started, S.topics.match_finished) and grant.operation is W:
            assert role == "fleet"
        if grant.operation is C:
            assert role in ("worker", "rerate")


def test_the_names_follow_the_settings() -> None:
    moved = dataclasses.replace(
        S,
        app_id="rating-eu",
        topics=dataclasses.replace(S.topics, match_started="eu.started"),
    )
    assert topic("eu.started", W) in grants(moved, "fleet")
    assert group("rating-eu") in grants(moved, "worker")


def test_principals_are_checked_one_line_naming_the_value() -> None:
    assert parse_principals(["fleet=User:gs", "worker=User:w"]) == [
        ("fleet", "User:gs"),
        ("worker", "User:w"),
    ]
    for bad, said in (
        ("flet=User:x", "ROLE one of fleet, worker"),
        ("fleet", "expected ROLE=PRINCIPAL"),
        ("fleet=gs", "must be Type:name"),
        ("fleet=User:", "must be Type:name"),
        ("fleet=User:a b", "must be Type:name"),
    ):
        with pytest.raises(UserError, match=said):
            parse_principals([bad])


def test_bindings_are_sorted_without_repeats() -> None:
    pairs = [("fleet", "User:gs"), ("fleet", "User:gs"), ("analytics", "User:bi")]
    bindings = bindings_for(S, pairs)
    assert len(bindings) == len(set(bindings)) == 4
    assert bindings == sorted(bindings)
    assert str(bindings[0]) == (
        "User:bi                      analytics     ALLOW READ     TOPIC LITERAL  rating-changed"
    )
    with pytest.raises(UserError, match="--rerate-app-id ' ': a name without spaces"):
        bindings_for(S, pairs, " ")


def test_a_re_rating_app_id_may_not_cover_the_live_deployments_names() -> None:
    pairs = [("rerate", "User:r")]
    for app_id, covered in (("skillstream", "skillstream-dlq"), ("match", "match-started")):
        with pytest.raises(UserError) as refused:
            bindings_for(S, pairs, app_id)
        assert str(refused.value).startswith(
            f"--rerate-app-id {app_id!r}: its prefix {app_id + '-'!r} covers the live"
            f" deployment's {covered!r}"
        )
    assert bindings_for(S, pairs, "skillstream-g2")


def test_a_binding_is_sent_as_kafka_encodes_create_acls_v1() -> None:
    """The bytes of CreateAcls v1 (the Kafka protocol's field order: resource type, name,
    pattern type, principal, host, operation, permission) for one binding."""
    binding = Binding("User:gs", "fleet", topic("match-started", W))
    g = binding.grant
    request = CreateAclsRequest(
        g.resource.value, g.name, g.pattern.value, binding.principal, ANY_HOST, g.operation, ALLOW
    ).build(CreateAclsRequest_v1)

    def string(text: str) -> bytes:
        return len(text).to_bytes(2, "big") + text.encode()

    expected = (
        (1).to_bytes(4, "big")  # one creation
        + bytes([2])  # TOPIC
        + string("match-started")
        + bytes([3])  # LITERAL
        + string("User:gs")
        + string("*")
        + bytes([4])  # WRITE
        + bytes([3])  # ALLOW
    )
    assert request.encode() == expected
