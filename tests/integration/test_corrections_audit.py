"""The audit topic on the real broker (stream/corrections/audit.py): corrections published by
`skillstream corrections ... --publish` come back from `corrections log` in the order they
were made, as a corrections file replay applies; a record that is not a correction, or a
missing topic, is one line and exit 2."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import orjson
from aiokafka import AIOKafkaProducer
from builders import Duel, duel_lines, skillstream
from redis.asyncio import Redis as AsyncRedis

from stream.cache import CachedRating, CacheWriter, KeyLayout
from stream.config.settings import Settings
from stream.local.stack import LocalStack
from stream.pipeline.topics import ensure_topics, topic_specs

HISTORY: list[Duel] = [
    ("m1", "2026-03-01T10:00:00Z", "alice", "bob", [0, 1]),
    ("m2", "2026-03-01T11:00:00Z", "bob", "carol", [1, 0]),
    ("m3", "2026-03-02T10:00:00Z", "alice", "carol", [0, 1]),
]


async def test_published_corrections_come_back_in_order_and_replay_applies_them(
    stack: LocalStack, tmp_path: Path
) -> None:
    tag = uuid.uuid4().hex[:8]
    env = await audited(stack, tag)
    missing = skillstream(env, "corrections", "log")
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1
    assert f"topic 'audit-{tag}' does not exist" in missing.stderr
    settings = Settings.from_env(env)
    created = await ensure_topics(
        settings, [s for s in topic_specs(settings) if s.name == settings.topics.audit]
    )
    assert created == [f"audit-{tag}"]
    made = []
    for args in (
        ["void", "--matches", "m3", "--reason", "cheater banned"],
        [
            "adjust",
            "duel",
            "bob",
            "--shift",
            "-40",
            "--effective",
            "2026-03-01T10:30:00Z",
            "--reason",
            "refund",
        ],
        ["erase", "carol", "--reason", "GDPR art. 17"],
    ):
        done = skillstream(env, "corrections", *args, "--by", "ops", "--publish")
        assert done.returncode == 0, done.stderr
        made.append(done.stdout)
    log = tmp_path / "log.jsonl"
    listed = skillstream(env, "corrections", "log", "--out", str(log))
    assert listed.returncode == 0, listed.stderr
    assert log.read_text() == "".join(made)
    assert "carol" not in log.read_text()
    history = tmp_path / "h.jsonl"
    history.write_text(duel_lines(HISTORY))
    from_log = skillstream(env, "replay", str(history), "--corrections", str(log))
    printed = tmp_path / "printed.jsonl"
    printed.write_text("".join(made))
    from_file = skillstream(env, "replay", str(history), "--corrections", str(printed))
    assert from_log.returncode == 0, from_log.stderr
    assert from_log.stdout == from_file.stdout and "carol" not in from_log.stdout
    # Anything else on the topic stops the log at its offset: a log with a hole would apply
    # other corrections than were made.
    producer = AIOKafkaProducer(bootstrap_servers=stack.bootstrap_servers)
    await producer.start()
    try:
        await producer.send_and_wait(f"audit-{tag}", b'{"id": "x"}')
    finally:
        await producer.stop()
    broken = skillstream(env, "corrections", "log")
    assert broken.returncode == 2 and broken.stderr.count("\n") == 1, broken.stderr
    assert f"audit topic 'audit-{tag}' offset 3: missing 'by'" in broken.stderr


async def audited(stack: LocalStack, tag: str) -> dict[str, str]:
    """The environment of an operator of a deployment with its own audit topic and cache
    prefix, whose cache holds bob and carol in mode duel (what a live adjust or erase is
    checked against)."""
    env = {
        **os.environ,
        "KAFKA_BOOTSTRAP_SERVERS": stack.bootstrap_servers,
        "REDIS_URL": stack.redis_url,
        "SKILLSTREAM_CACHE_PREFIX": f"audit-{tag}",
        "SKILLSTREAM_TOPIC_AUDIT": f"audit-{tag}",
        "SKILLSTREAM_PSEUDONYM_KEY": "a key of at least sixteen",
    }
    client = AsyncRedis.from_url(stack.redis_url)
    try:
        cached = [
            CachedRating("bob", "duel", 1500.0, 200.0, 0.06, 0, 1, 1, 1_780_000_000_000, "m1"),
            CachedRating("carol", "duel", 1500.0, 200.0, 0.06, 0, 1, 1, 1_780_000_000_000, "m2"),
        ]
        await CacheWriter(client, KeyLayout(f"audit-{tag}")).write(cached)
    finally:
        await client.aclose()
    return env


async def test_a_live_adjust_ban_or_erase_of_someone_the_cache_does_not_hold_is_refused(
    stack: LocalStack,
) -> None:
    tag = uuid.uuid4().hex[:8]
    env = await audited(stack, tag)
    settings = Settings.from_env(env)
    await ensure_topics(
        settings, [s for s in topic_specs(settings) if s.name == settings.topics.audit]
    )
    publish = ["--reason", "r", "--publish"]
    for args, said in (
        (
            ["adjust", "duel", "nobody-here", "--shift", "25"],
            "holds no rating of 'nobody-here' in 'duel'",
        ),
        (["adjust", "dual", "bob", "--shift", "25"], "mode 'dual'"),
        (["erase", "nobody-here"], "holds no rating of 'nobody-here' in any mode"),
        (
            ["ban", "duel", "nobody-here", "--since", "2026-01-01"],
            "ban: the cache holds no rating of 'nobody-here' in 'duel': the ban would refund",
        ),
        (["ban", "dual", "bob", "--since", "2026-01-01"], "mode 'dual'"),
    ):
        done = skillstream(env, "corrections", *args, *publish)
        assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
        assert said in done.stderr and done.stdout == ""
    known = skillstream(env, "corrections", "adjust", "duel", "bob", "--shift", "25", *publish)
    assert known.returncode == 0 and known.stderr == "", known.stderr
    ban = ["ban", "duel", "carol", "--since", "2026-01-01", *publish]
    banned = skillstream(env, "corrections", *ban)
    assert banned.returncode == 0 and banned.stderr == "", banned.stderr
    anyway = ["erase", "nobody-here", *publish, "--may-match-nothing"]
    assert skillstream(env, "corrections", *anyway).returncode == 0
    # A cache that cannot be read is said; the record goes out, checked again by replay.
    away = {**env, "REDIS_URL": "redis://127.0.0.1:1/0", "SKILLSTREAM_CONNECT_TIMEOUT_SECONDS": "1"}
    unchecked = skillstream(away, "corrections", "erase", "nobody-else", *publish)
    assert unchecked.returncode == 0
    assert "could not read the cache at REDIS_URL to check 'nobody-else'" in unchecked.stderr
    listed = skillstream(env, "corrections", "log")
    assert [orjson.loads(line)["kind"] for line in listed.stdout.splitlines()] == [
        "adjust",
        "ban",
        "erase",
        "erase",
    ]
