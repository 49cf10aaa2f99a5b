"""The embedded local stack: real Tansu and Valkey processes on free loopback ports."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
import redis.asyncio as aioredis
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer
from aiokafka.admin import AIOKafkaAdminClient, NewTopic

from stream.local.stack import LocalStack, environment


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A child that exited but was not reaped yet is a zombie: not running.
    with open(f"/proc/{pid}/stat") as f:
        return f.read().split()[2] != "Z"


@pytest.fixture
def stack() -> Iterator[LocalStack]:
    with LocalStack() as running:
        yield running


async def test_kafka_and_redis_answer_on_loopback(stack: LocalStack) -> None:
    cache = aioredis.Redis.from_url(stack.redis_url)
    assert await cache.ping()
    await cache.aclose()

    admin = AIOKafkaAdminClient(bootstrap_servers=stack.bootstrap_servers)
    await admin.start()
    await admin.create_topics([NewTopic("smoke", num_partitions=2, replication_factor=1)])
    await admin.close()
    producer = AIOKafkaProducer(bootstrap_servers=stack.bootstrap_servers)
    await producer.start()
    await producer.send_and_wait("smoke", b"hello", key=b"k")
    await producer.stop()
    consumer = AIOKafkaConsumer(
        "smoke", bootstrap_servers=stack.bootstrap_servers, auto_offset_reset="earliest"
    )
    await consumer.start()
    try:
        record = await asyncio.wait_for(consumer.getone(), 15)
    finally:
        await consumer.stop()
    assert (record.key, record.value) == (b"k", b"hello")


def test_stop_ends_exactly_the_started_processes() -> None:
    stack = LocalStack().start()
    pids = stack.pids()
    assert len(pids) == 2 and all(alive(p) for p in pids)
    assert stack.kafka_port != stack.redis_port
    stack.stop()
    assert not any(alive(p) for p in pids)


def local(*args: str | Path) -> subprocess.CompletedProcess[str]:
    """``skillstream local ARGS`` as a user runs it."""
    return subprocess.run(
        [sys.executable, "-m", "stream", "local", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_cli_detach_and_down(tmp_path: Path) -> None:
    state_file = tmp_path / "local.json"
    up = local("up", "--detach", "--state-file", state_file)
    assert up.returncode == 0, up.stderr
    assert "export KAFKA_BOOTSTRAP_SERVERS=127.0.0.1:" in up.stdout
    assert "export REDIS_URL=redis://127.0.0.1:" in up.stdout
    state = orjson.loads(state_file.read_bytes())
    pids = [p["pid"] for p in state["processes"]]
    assert {p["name"] for p in state["processes"]} == {"tansu", "valkey"}
    assert all(alive(p) for p in pids)
    # A second detached stack over the running one is refused; the record stays as it was.
    again = local("up", "--detach", "--state-file", state_file)
    assert again.returncode == 2 and again.stdout == ""
    assert again.stderr.count("\n") == 1 and "Traceback" not in again.stderr
    assert f"--state-file {state_file}: the stack it records still runs" in again.stderr
    assert orjson.loads(state_file.read_bytes()) == state
    down = local("down", "--state-file", state_file)
    assert down.returncode == 0, down.stderr
    assert down.stdout.count("stopped") == 2
    for _ in range(100):
        if not any(alive(p) for p in pids):
            break
        asyncio.run(asyncio.sleep(0.05))
    assert not any(alive(p) for p in pids)
    assert not state_file.exists()


def test_a_record_of_a_stack_that_is_gone_does_not_stop_up(tmp_path: Path) -> None:
    state_file = tmp_path / "local.json"
    gone = subprocess.Popen(["true"])
    gone.wait()
    record = {"processes": [{"name": "tansu", "pid": gone.pid, "exe": "/bin/true"}]}
    state_file.write_bytes(orjson.dumps(record))
    up = local("up", "--detach", "--state-file", state_file)
    assert up.returncode == 0, up.stderr
    down = local("down", "--state-file", state_file)
    assert down.stdout.count("stopped") == 2


def test_topics_create_is_idempotent_and_refuses_another_partition_count(
    stack: LocalStack,
) -> None:
    env = {
        **environment(stack),
        "SKILLSTREAM_APP_ID": "provision",
        # Its own audit topic: the default one may exist already on this stack.
        "SKILLSTREAM_TOPIC_AUDIT": "provision-audit",
    }
    command = [sys.executable, "-m", "stream", "topics", "create"]

    def run(*extra: str, **over: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*command, *extra],
            env={**env, **over},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    plan = run("--dry-run", KAFKA_BOOTSTRAP_SERVERS="127.0.0.1:9")  # nothing listens there
    assert plan.returncode == 0, plan.stderr
    assert "provision-ratings-changelog" in plan.stdout and "cleanup.policy=compact" in plan.stdout
    audit = next(line for line in plan.stdout.splitlines() if "provision-audit" in line)
    assert "retention.ms=-1" in audit
    first = run()
    assert first.returncode == 0, first.stderr
    created = [line for line in first.stdout.splitlines() if line.startswith("created")]
    assert len(created) == 12  # 7 topics (the audit log one) + 5 changelogs
    second = run()
    assert second.returncode == 0, second.stderr
    assert all(line.startswith("exists") for line in second.stdout.splitlines())
    wrong = run(SKILLSTREAM_PARTITIONS="3")
    assert wrong.returncode == 1
    assert "SKILLSTREAM_PARTITIONS is 3" in wrong.stderr and "Traceback" not in wrong.stderr


STATES = ("created", "exists ")


def test_topics_create_says_the_local_broker_took_no_acl(stack: LocalStack) -> None:
    """Tansu lists CreateAcls among its APIs but answers it with nothing a client can read:
    the command says no ACL was applied (exit 1, one line), after creating the topics."""
    env = {
        **environment(stack),
        "SKILLSTREAM_APP_ID": "acls",
        "SKILLSTREAM_TOPIC_AUDIT": "acls-audit",
    }
    done = subprocess.run(
        [sys.executable, "-m", "stream", "topics", "create", "--principal", "fleet=User:gs"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert "granted" not in done.stdout
    assert len([line for line in done.stdout.splitlines() if line[:7] in STATES]) == 12
    assert done.stderr.splitlines() == [
        f"skillstream topics create: error: the broker at {stack.bootstrap_servers} gave no"
        " readable answer to CreateAcls: this ACL and the ones after it were not applied"
        " (apply them with kafka-acls.sh)"
    ]


def test_the_worker_grant_check_reads_the_local_brokers_answer(stack: LocalStack) -> None:
    """Tansu answers Metadata v8 (decoded by the project's own schema) and reports no
    operations: the worker's topic grants are not checked there; it names a coordinator for
    each of its groups, so nothing is refused."""
    from aiokafka.client import AIOKafkaClient

    from stream.access.kafka import grants
    from stream.access.preflight import NOT_PROVIDED, TopicOperationsRequest, check_grants
    from stream.config.settings import Settings

    env = {**environment(stack), "SKILLSTREAM_APP_ID": "grants"}
    settings = Settings.from_env(env)

    async def ask() -> list[tuple[int, str, int]]:
        client = AIOKafkaClient(bootstrap_servers=stack.bootstrap_servers)
        await client.bootstrap()
        try:
            request = TopicOperationsRequest(["grants-a", "grants-b"])
            response = await client.send(client.get_random_node(), request)
        finally:
            await client.close()
        return [(code, name, ops) for code, name, _, _, ops in response.topics]

    async def make() -> None:
        admin = AIOKafkaAdminClient(bootstrap_servers=stack.bootstrap_servers)
        await admin.start()
        await admin.create_topics([NewTopic("grants-a", 2, 1)])
        await admin.close()

    asyncio.run(make())
    assert asyncio.run(ask()) == [(0, "grants-a", NOT_PROVIDED), (3, "grants-b", NOT_PROVIDED)]
    # Not checked (False), and its groups' coordinators found: nothing refused.
    assert asyncio.run(check_grants(settings, grants(settings, "worker"))) is False


def test_workers_on_the_stack_get_its_session_unless_the_environment_says(
    stack: LocalStack, monkeypatch: pytest.MonkeyPatch
) -> None:
    from stream.config.settings import Settings

    monkeypatch.delenv("SKILLSTREAM_SESSION_TIMEOUT_SECONDS", raising=False)
    settings = Settings.from_env(environment(stack))
    # Below the built-in default, which Apache Kafka's default floor (6 s) allows everywhere.
    assert settings.kafka.session_timeout_seconds == 4.0 < Settings().kafka.session_timeout_seconds
    monkeypatch.setenv("SKILLSTREAM_SESSION_TIMEOUT_SECONDS", "7")
    assert Settings.from_env(environment(stack)).kafka.session_timeout_seconds == 7.0
