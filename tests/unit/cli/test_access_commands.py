"""`skillstream topics create --dry-run --principal ...` and `skillstream cache acl`: the access
model printed, and the mistakes in their arguments one line each (exit 2)."""

from __future__ import annotations

import hashlib

import pytest

from stream.cli.main import main


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own exit
        code = int(exc.code or 0)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(autouse=True)
def plain_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("SKILLSTREAM_REDIS_WRITER_PASSWORD", "SKILLSTREAM_REDIS_MATCHMAKER_PASSWORD"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("SKILLSTREAM_APP_ID", raising=False)
    monkeypatch.delenv("SKILLSTREAM_CACHE_PREFIX", raising=False)


def test_the_dry_run_prints_each_principals_acls_after_the_topics(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["topics", "create", "--dry-run", "--principal", "fleet=User:gs"]
    code, out, err = run([*argv, "--principal", "analytics=User:bi"], capsys)
    assert (code, err) == (0, "")
    lines = out.splitlines()
    start = lines.index("would grant (Kafka ACLs, any host):")
    assert [line.split() for line in lines[start + 1 :]] == [
        ["User:bi", "analytics", "ALLOW", "READ", "TOPIC", "LITERAL", "rating-changed"],
        ["User:bi", "analytics", "ALLOW", "READ", "GROUP", "PREFIXED", "skillstream-analytics"],
        ["User:gs", "fleet", "ALLOW", "WRITE", "TOPIC", "LITERAL", "match-finished"],
        ["User:gs", "fleet", "ALLOW", "WRITE", "TOPIC", "LITERAL", "match-started"],
    ]
    code, out, _ = run(["topics", "create", "--dry-run"], capsys)
    assert code == 0 and "would grant" not in out


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (
            ["--principal", "fleets=User:gs"],
            "--principal 'fleets=User:gs': expected ROLE=PRINCIPAL",
        ),
        (["--principal", "fleet=gs"], "--principal 'fleet=gs': the principal must be Type:name"),
        (["--principal", "rerate=User:r"], "--rerate-app-id: the rerate role needs"),
    ],
)
def test_a_wrong_principal_is_one_line(
    argv: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(["topics", "create", "--dry-run", *argv], capsys)
    assert (code, out) == (2, "")
    assert len(err.splitlines()) == 1
    assert err.startswith(f"skillstream topics create: error: {said}")


def test_cache_acl_prints_both_users_hashing_the_passwords_it_is_given(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKILLSTREAM_REDIS_WRITER_PASSWORD", "w-secret")
    monkeypatch.setenv("SKILLSTREAM_CACHE_PREFIX", "eu")
    code, out, err = run(["cache", "acl", "--matchmaker", "mm"], capsys)
    assert code == 0
    writer, matchmaker = out.splitlines()
    digest = hashlib.sha256(b"w-secret").hexdigest()
    assert writer.startswith(f"user skillstream-writer reset on #{digest} resetkeys ~eu:* ")
    assert matchmaker.startswith("user mm reset off resetkeys ~eu:* ")
    assert "w-secret" not in out
    assert err.splitlines() == [
        "skillstream cache acl: SKILLSTREAM_REDIS_MATCHMAKER_PASSWORD is not set: user 'mm'"
        " written off (no login) until it has a password"
    ]
    code, out, _ = run(["cache", "acl", "--setuser"], capsys)
    assert [line.split()[:3] for line in out.splitlines()] == [
        ["ACL", "SETUSER", "skillstream-writer"],
        ["ACL", "SETUSER", "matchmaker"],
    ]


def test_cache_acl_refuses_a_user_name_with_a_space(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["cache", "acl", "--writer", "a b"], capsys)
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        "skillstream cache acl: error: --writer 'a b': a user name without spaces"
    ]


def test_a_kafka_refusal_met_by_a_command_is_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from aiokafka.errors import TopicAuthorizationFailedError

    from stream.cli.main import kafka_refusal

    monkeypatch.setenv("KAFKA_SASL_USERNAME", "ops")
    line = kafka_refusal(TopicAuthorizationFailedError("skillstream-audit"))
    assert line == (
        "the brokers refused KAFKA_SASL_USERNAME 'ops': TopicAuthorizationFailedError"
        " (skillstream-audit): its role's ACLs are in docs/operations.md#access-who-may-do-what"
    )
    assert "\n" not in line
