"""The deployment files give each role its own credentials, and those credentials the grants of
their role: Compose's Kafka users, the ACLs its topics service grants them and its Redis users
(deploy/compose/users.acl, run on a real Valkey in tests/integration/cache/
test_access_on_valkey.py); the Kubernetes Job's principals and the workers' Secret."""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from test_deploy_files import (
    ROOT,
    env_of,
    job,
    manifests,
    only_container,
    project_services,
    services,
    worker_services,
)

from stream.access.kafka import parse_principals
from stream.access.redis import acl_line
from stream.cli.main import build_parser

USERS_ACL = ROOT / "deploy" / "compose" / "users.acl"


def jaas_users() -> dict[str, str]:
    """The Kafka users the Compose broker knows, with their passwords (its JAAS line)."""
    env = env_of(services()["kafka"])
    path = env["KAFKA_OPTS"].removeprefix("-Djava.security.auth.login.config=")
    (source,) = [src for src, target in volumes("kafka") if target == path]
    jaas = (ROOT / source).read_text(encoding="utf-8")
    assert "KafkaServer {" in jaas
    return dict(re.findall(r'user_([\w-]+)="([^"]*)"', jaas))


def volumes(service: str) -> list[tuple[str, str]]:
    """(source, target) of a service's short-syntax volumes."""
    pairs = [str(v).split(":") for v in services()[service]["volumes"]]
    return [(pair[0], pair[1]) for pair in pairs]


def compose_principals() -> dict[str, str]:
    """principal -> role, as the topics service grants them."""
    argv = services()["topics"]["command"]
    args = build_parser().parse_args(argv)
    return {principal: role for role, principal in parse_principals(args.principal)}


def test_every_compose_service_logs_in_as_its_own_kafka_user() -> None:
    users = jaas_users()
    kafka = env_of(services()["kafka"])
    assert kafka["KAFKA_SUPER_USERS"] == "User:admin"
    assert kafka["KAFKA_AUTHORIZER_CLASS_NAME"].endswith("StandardAuthorizer")
    granted = compose_principals()
    roles = {}
    for name, svc in project_services().items():
        env = env_of(svc)
        user, password = env["KAFKA_SASL_USERNAME"], env["KAFKA_SASL_PASSWORD"]
        assert users.get(user) == password, name
        roles[name] = "admin" if user == "admin" else granted[f"User:{user}"]
    assert roles == {
        "topics": "admin",
        "worker-1": "worker",
        "worker-2": "worker",
        "simulator": "fleet",
    }
    # Every user the broker knows is either the administrator or granted a role.
    assert set(users) == {"admin"} | {p.removeprefix("User:") for p in granted}


def acl_users() -> dict[str, str]:
    return {line.split()[1]: line for line in USERS_ACL.read_text(encoding="utf-8").splitlines()}


def test_the_compose_redis_users_are_what_cache_acl_prints() -> None:
    lines = acl_users()
    assert lines.pop("default") == "user default off"
    assert lines == {
        "skillstream-writer": acl_line(
            "cache-writer", "skillstream-writer", "skillstream", "writer-local"
        ),
        "matchmaker": acl_line("matchmaker", "matchmaker", "skillstream", "matchmaker-local"),
    }


def test_the_compose_workers_write_the_cache_as_the_writer_user() -> None:
    writer = acl_line("cache-writer", "skillstream-writer", "skillstream", "writer-local")
    for name, svc in worker_services().items():
        url = urlsplit(env_of(svc)["REDIS_URL"])
        assert (url.username, url.password) == ("skillstream-writer", "writer-local"), name
        assert acl_users()[str(url.username)] == writer
    for name, svc in project_services().items():
        if name not in worker_services():
            assert "REDIS_URL" not in env_of(svc), f"{name} needs no Redis user"
    redis = services()["redis"]
    assert redis["command"][-2:] == ["--aclfile", "/etc/redis/users.acl"]
    assert "./deploy/compose/users.acl:/etc/redis/users.acl:ro" in redis["volumes"]
    check = redis["healthcheck"]["test"]
    user, password = check[check.index("--user") + 1], check[check.index("--pass") + 1]
    assert acl_users()[user] == acl_line("matchmaker", user, "skillstream", password)


def test_the_kafka_health_check_logs_in_as_the_administrator() -> None:
    props = (ROOT / "deploy" / "compose" / "kafka-admin.properties").read_text(encoding="utf-8")
    assert 'username="admin" password="admin-local"' in props
    assert (
        "./deploy/compose/kafka-admin.properties:/etc/kafka/admin.properties:ro"
        in (services()["kafka"]["volumes"])
    )


def test_the_kubernetes_job_grants_the_workers_user_the_worker_role() -> None:
    argv = [*only_container(job()).get("args", [])]
    granted = {p: r for r, p in parse_principals(build_parser().parse_args(argv).principal)}
    worker_user = manifests()[("Secret", "skillstream-secrets")]["stringData"][
        "KAFKA_SASL_USERNAME"
    ]
    assert granted[f"User:{worker_user}"] == "worker"
    admin = manifests()[("Secret", "skillstream-topics-secrets")]["stringData"]
    assert admin["KAFKA_SASL_USERNAME"] != worker_user
    redis_url = manifests()[("Secret", "skillstream-secrets")]["stringData"]["REDIS_URL"]
    assert urlsplit(redis_url).username == "skillstream-writer"


@pytest.mark.parametrize("path", [USERS_ACL])
def test_the_acl_file_has_only_user_lines(path: Path) -> None:
    # Redis refuses to start on any other line, comments included (found starting Valkey).
    for line in path.read_text(encoding="utf-8").splitlines():
        assert shlex.split(line)[0] == "user", line
