"""The Redis users' ACL rules (stream/access/redis.py); tests/integration/cache/
test_access_on_valkey.py runs them on a real Valkey."""

from __future__ import annotations

import hashlib

from stream.access.redis import acl_line, key_pattern, rules


def test_the_key_pattern_takes_the_prefix_literally() -> None:
    assert key_pattern("skillstream") == "~skillstream:*"
    assert key_pattern("a*b?[c]\\") == "~a\\*b\\?\\[c\\]\\\\:*"


def test_a_matchmaker_reads_and_runs_only_read_only_scripts() -> None:
    assert rules("matchmaker", "ss") == (
        "resetkeys",
        "~ss:*",
        "resetchannels",
        "-@all",
        "+@connection",
        "+select",
        "+@read",
        "-@dangerous",
        "+eval_ro",
    )


def test_the_writer_writes_through_its_scripts_without_the_dangerous_commands() -> None:
    writer = rules("cache-writer", "ss")
    assert writer[:6] == ("resetkeys", "~ss:*", "resetchannels", "-@all", "+@connection", "+select")
    assert "+eval" not in writer  # redis-py's scripts send EVALSHA, loading them first
    assert {"+@read", "+@write", "-@dangerous", "+evalsha", "+script|load"} <= set(writer)
    # -@dangerous comes after +@write: ACL rules apply left to right.
    assert writer.index("-@dangerous") > writer.index("+@write")


def test_a_line_carries_the_password_hashed_or_the_user_off() -> None:
    digest = hashlib.sha256(b"s3cret").hexdigest()
    assert acl_line("matchmaker", "mm", "ss", "s3cret").startswith(f"user mm reset on #{digest} ")
    off = acl_line("matchmaker", "mm", "ss", None)
    assert off.startswith("user mm reset off resetkeys")
    assert "s3cret" not in acl_line("matchmaker", "mm", "ss", "s3cret")
