"""Every command that talks to Kafka or Redis, run as a user runs it, against a port where no
usable server answers (closed, silent, or speaking another protocol): exit code 2, one line
naming the setting and the address, no traceback, within the connect timeout. And settings
that cannot work are refused before anything connects."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest
from failing_servers import GARBAGE, closed_port, listener

from stream.local.stack import LocalStack, environment

# The bound every command is held to here; the default is 10 s (docs/configuration.md).
CONNECT_TIMEOUT = 2.0
# Interpreter start, imports and the client's own retries on top of the connect timeout.
SLACK = 8.0


@pytest.fixture(params=["closed", "silent", "other protocol"])
def dead_port(request: pytest.FixtureRequest) -> Iterator[int]:
    if request.param == "closed":
        yield closed_port()
        return
    with listener(b"" if request.param == "silent" else GARBAGE) as port:
        yield port


def run(env: dict[str, str], command: str) -> tuple[subprocess.CompletedProcess[str], float]:
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "stream", *command.split()],
        env={**env, "SKILLSTREAM_CONNECT_TIMEOUT_SECONDS": str(CONNECT_TIMEOUT)},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return done, time.monotonic() - started


def assert_one_line(done: subprocess.CompletedProcess[str], command: str, expected: str) -> None:
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"skillstream {command}: error: "), lines[0]
    assert expected in lines[0]
    assert "Traceback" not in done.stderr
    assert done.stdout == ""


COMMANDS_ON_KAFKA = [
    ("topics create", "topics create"),
    ("cache rebuild", "cache rebuild"),
    ("cache writer", "cache writer"),
    ("simulate --kafka --matches 5", "simulate"),
    ("worker", "worker"),
]
COMMANDS_ON_REDIS = [
    ("ratings get 1v1 ann bob", "ratings get"),
    ("leaderboard 1v1", "leaderboard"),
    ("cache rebuild", "cache rebuild"),
    ("cache writer", "cache writer"),
    ("worker", "worker"),
]


# Each server: the setting that points at it, its address on a port, and what it is called.
SERVERS = {
    "kafka": ("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:{port}", "Kafka"),
    "redis": ("REDIS_URL", "redis://127.0.0.1:{port}/0", "Redis"),
}


@pytest.mark.parametrize(
    ("server", "command", "name"),
    [("kafka", *c) for c in COMMANDS_ON_KAFKA] + [("redis", *c) for c in COMMANDS_ON_REDIS],
)
def test_a_server_that_does_not_answer_is_one_line_in_bounded_time(
    stack: LocalStack, dead_port: int, server: str, command: str, name: str
) -> None:
    setting, address, called = SERVERS[server]
    env = {**environment(stack), setting: address.format(port=dead_port)}
    done, seconds = run(env, command)
    expected = f"{setting}: cannot reach {called} at 127.0.0.1:{dead_port}"
    assert_one_line(done, name, expected)
    assert seconds < CONNECT_TIMEOUT + SLACK


SETTINGS_THAT_CANNOT_WORK = [
    ({"SKILLSTREAM_TOPIC_DLQ": "match-finished"}, "SKILLSTREAM_TOPIC_DLQ: topic 'match-finished'"),
    ({"SKILLSTREAM_WEB_PORT": "99999"}, "SKILLSTREAM_WEB_PORT: port must be between"),
    ({"REDIS_URL": "garbage"}, "REDIS_URL: 'garbage' must start with redis://"),
    ({"KAFKA_BOOTSTRAP_SERVERS": "broker:ninety"}, "KAFKA_BOOTSTRAP_SERVERS (broker:ninety)"),
    ({"SKILLSTREAM_WEB_BIND": "all"}, "SKILLSTREAM_WEB_BIND: expected an IP address"),
]


EVERY_COMMAND = [*COMMANDS_ON_KAFKA, *COMMANDS_ON_REDIS[:2]]


# Every command meets at least one bad setting and every bad setting at least one command.
@pytest.mark.parametrize(
    ("setting", "expected", "command", "name"),
    [
        (*SETTINGS_THAT_CANNOT_WORK[i % len(SETTINGS_THAT_CANNOT_WORK)], *EVERY_COMMAND[i])
        for i in range(len(EVERY_COMMAND))
    ],
)
def test_a_setting_that_cannot_work_stops_every_command_before_it_connects(
    setting: dict[str, str], expected: str, command: str, name: str
) -> None:
    # Nothing listens on either address: a command that connected first would name them.
    port = closed_port()
    env = {
        "PATH": "/usr/bin:/bin",
        "KAFKA_BOOTSTRAP_SERVERS": f"127.0.0.1:{port}",
        "REDIS_URL": f"redis://127.0.0.1:{port}/0",
        **setting,
    }
    done, _ = run(env, command)
    assert_one_line(done, name, expected)


def test_a_web_port_in_use_stops_the_worker_before_it_connects() -> None:
    port = closed_port()
    with socket.create_server(("127.0.0.1", 0)) as taken:
        web_port = taken.getsockname()[1]
        env = {
            "PATH": "/usr/bin:/bin",
            "KAFKA_BOOTSTRAP_SERVERS": f"127.0.0.1:{port}",
            "SKILLSTREAM_CACHE_WRITER": "off",
            "SKILLSTREAM_WEB_BIND": "127.0.0.1",
            "SKILLSTREAM_WEB_PORT": str(web_port),
        }
        done, _ = run(env, "worker")
    expected = f"SKILLSTREAM_WEB_PORT={web_port}, SKILLSTREAM_WEB_BIND=127.0.0.1: cannot listen"
    assert_one_line(done, "worker", expected)
    assert "in use" in done.stderr


UNKNOWN_HOST = "no-such-host.invalid"  # .invalid never resolves (RFC 2606)


@pytest.mark.parametrize(
    ("command", "name", "setting"),
    [
        *((c, n, {"KAFKA_BOOTSTRAP_SERVERS": f"{UNKNOWN_HOST}:1"}) for c, n in COMMANDS_ON_KAFKA),
        *((c, n, {"REDIS_URL": f"redis://{UNKNOWN_HOST}:1/0"}) for c, n in COMMANDS_ON_REDIS),
    ],
)
def test_a_host_that_does_not_resolve_is_named(
    stack: LocalStack, command: str, name: str, setting: dict[str, str]
) -> None:
    done, _ = run({**environment(stack), **setting}, command)
    (variable,) = setting
    assert_one_line(done, name, f"{variable}: cannot reach")
    assert UNKNOWN_HOST in done.stderr.partition("(")[2]  # the reason names it
