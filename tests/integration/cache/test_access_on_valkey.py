"""The Redis access model on a real Valkey: the users `skillstream cache acl` writes, each doing
its job with its rules alone, and refused the rest (stream/access/redis.py).

The matchmaker user reads everything a matchmaker reads (every read of SyncRatingCache and
RatingCache, `ratings get`, `ratings history`, `ratings explain`, `leaderboard` with
`--around`) and cannot write, delete or run a script that writes; the writer user writes what
the feed writes, and a writer started with the matchmaker's user stops at once with one line.
"""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cache_support import ValkeyServer, cache_command
from redis import Redis
from redis.asyncio import Redis as AsyncRedis
from redis.exceptions import AuthenticationError, NoPermissionError, ResponseError

from stream.access.redis import acl_line
from stream.cache import CachedRating, CacheWriter, KeyLayout, RatingCache, SyncRatingCache
from stream.cache.access import check_writer_access
from stream.config.modes import Modes
from stream.config.settings import CacheSettings, RedisSettings, Settings
from stream.reachability import AccessDeniedError

PREFIX = "acl.test"
WRITER, MATCHMAKER = ("writer", "w-secret"), ("mm", "m-secret")


def url(valkey: ValkeyServer, user: tuple[str, str]) -> str:
    return f"redis://{user[0]}:{user[1]}@127.0.0.1:{valkey.port}/0"


def change(player: str, rating: float, version: int) -> CachedRating:
    return CachedRating(
        player_id=player,
        mode="1v1",
        rating=rating,
        deviation=60.0,
        volatility=0.06,
        rank_points=int(rating) * 3,
        games=version,
        version=version,
        updated_at_ms=1_780_000_000_000 + version,
        match_id=f"m{version}",
    )


@pytest.fixture
def users(sredis: Redis, valkey: ValkeyServer) -> Iterator[None]:
    """The two users, set from the lines the command prints (ACL SETUSER takes the same rules
    as an ACL file's line), and keys outside the prefix that neither may touch."""
    for role, (name, password) in (("cache-writer", WRITER), ("matchmaker", MATCHMAKER)):
        words = acl_line(role, name, PREFIX, password).split()
        assert words[:2] == ["user", name]
        sredis.execute_command("ACL", "SETUSER", *words[1:])  # type: ignore[no-untyped-call]
    sredis.set("other:secret", "x")
    yield
    sredis.execute_command("ACL", "DELUSER", WRITER[0], MATCHMAKER[0])  # type: ignore[no-untyped-call]


def write_as_writer(valkey: ValkeyServer) -> None:
    async def write() -> None:
        client = AsyncRedis.from_url(url(valkey, WRITER))
        writer = CacheWriter(client, KeyLayout(PREFIX))
        await writer.write([change("ann", 1600.0, 1), change("bob", 1500.0, 1)])
        await writer.write([change("ann", 1620.0, 2), change("cat", 1400.0, 1)])
        await writer.remove([("1v1", "cat", 2)])
        await client.aclose()

    asyncio.run(write())


@pytest.mark.usefixtures("users")
def test_the_writer_user_writes_and_a_matchmaker_reads_everything(valkey: ValkeyServer) -> None:
    write_as_writer(valkey)
    cache = SyncRatingCache(Redis.from_url(url(valkey, MATCHMAKER)), Modes(), KeyLayout(PREFIX))
    try:
        found = cache.get_many("1v1", ["ann", "bob", "cat"])
        assert (found["ann"].rating, found["ann"].version) == (1620.0, 2)
        assert found["cat"].games == 0  # removed by the writer: unknown again
        assert [p for p, _ in cache.window("1v1", 1550.0, 100.0)] == ["bob", "ann"]  # nearest first
        assert 0.5 < cache.win_probability("1v1", "ann", "bob") < 1.0
        assert 0.0 < cache.match_quality("1v1", ["ann"], ["bob"]) <= 1.0
        assert [e.player_id for e in cache.top("1v1", 5)] == ["ann", "bob"]
        assert [e.player_id for e in cache.around("1v1", "bob", 1)] == ["ann", "bob"]
        assert cache.seasons("1v1").past == []
        assert [h.match_id for h in cache.history("1v1", "ann")] == ["m2", "m1"]
        assert cache.explanation("1v1", "ann") is not None
        assert cache.modes_held() == ["1v1"]
    finally:
        cache.close()

    async def read_async() -> list[str]:
        reader = RatingCache(
            AsyncRedis.from_url(url(valkey, MATCHMAKER)), Modes(), KeyLayout(PREFIX)
        )
        try:
            return [e.player_id for e in await reader.around("1v1", "ann", 1)]
        finally:
            await reader.aclose()

    assert asyncio.run(read_async()) == ["ann", "bob"]


@pytest.mark.usefixtures("users")
def test_the_matchmaker_user_cannot_write_delete_or_run_a_writing_script(
    valkey: ValkeyServer,
) -> None:
    write_as_writer(valkey)
    key = KeyLayout(PREFIX).player("1v1", "ann")
    mm = Redis.from_url(url(valkey, MATCHMAKER))
    refused: list[Callable[[], object]] = [
        lambda: mm.hset(key, "rating", "3000"),
        lambda: mm.delete(key),
        lambda: mm.zadd(KeyLayout(PREFIX).by_rating("1v1"), {"ann": 3000.0}),
        lambda: mm.eval("return redis.call('DEL', KEYS[1])", 1, key),
        lambda: mm.script_load("return 1"),
        mm.flushdb,
        lambda: mm.get("other:secret"),  # outside the prefix
    ]
    for attempt in refused:
        with pytest.raises(NoPermissionError):
            attempt()
    # Another database: the client selects it on connect, and the user may.
    other_db = Redis.from_url(url(valkey, MATCHMAKER).removesuffix("/0") + "/1")
    assert other_db.ping()
    other_db.close()
    # The read-only script call runs, but not a write inside it.
    with pytest.raises(ResponseError, match="no permissions to run the 'del' command"):
        mm.eval_ro("return redis.call('DEL', KEYS[1])", 1, key)
    mm.close()
    admin = Redis.from_url(valkey.url)
    assert admin.hget(key, "rating") == b"1620.0" or float(admin.hget(key, "rating") or 0) == 1620.0
    admin.close()


@pytest.mark.usefixtures("users")
def test_the_writer_user_cannot_flush_or_leave_its_prefix(valkey: ValkeyServer) -> None:
    writer = Redis.from_url(url(valkey, WRITER))
    for attempt in (writer.flushall, lambda: writer.set("other:secret", "y"), writer.keys):
        with pytest.raises(NoPermissionError):
            attempt()
    writer.close()


def settings_for(valkey: ValkeyServer, user: tuple[str, str]) -> Settings:
    return Settings(redis=RedisSettings(url=url(valkey, user)), cache=CacheSettings(prefix=PREFIX))


@pytest.mark.usefixtures("users")
def test_the_writer_check_passes_for_the_writer_and_names_what_a_reader_lacks(
    valkey: ValkeyServer,
) -> None:
    check_writer_access(settings_for(valkey, WRITER))
    with pytest.raises(AccessDeniedError) as refused:
        check_writer_access(settings_for(valkey, MATCHMAKER))
    assert str(refused.value) == (
        f"REDIS_URL: Redis at 127.0.0.1:{valkey.port} refused user 'mm': User mm has no"
        " permissions to run the 'script|load' command (its ACL rules for the keys under"
        f" {PREFIX!r}: `skillstream cache acl`, docs/operations.md#access-who-may-do-what)"
    )


def command(
    valkey: ValkeyServer, user: tuple[str, str], *args: str, prefix: str = PREFIX
) -> subprocess.CompletedProcess[str]:
    # Kafka is never reached: the Redis check comes first.
    kafka = "127.0.0.1:1"
    return cache_command(
        url(valkey, user), *args, SKILLSTREAM_CACHE_PREFIX=prefix, KAFKA_BOOTSTRAP_SERVERS=kafka
    )


@pytest.mark.usefixtures("users")
def test_the_commands_run_as_the_matchmaker_and_a_writer_with_its_user_refuses_to_start(
    valkey: ValkeyServer,
) -> None:
    write_as_writer(valkey)
    for args in (
        ("ratings", "get", "1v1", "ann", "bob", "--wait", "5"),  # the README's read
        ("ratings", "history", "1v1", "ann"),
        ("ratings", "explain", "1v1", "ann"),
        ("leaderboard", "1v1", "--around", "bob", "--top", "1"),
    ):
        done = command(valkey, MATCHMAKER, *args)
        assert done.returncode == 0, (args, done.stderr)
        assert "ann" in done.stdout or "m2" in done.stdout
    elsewhere = command(valkey, MATCHMAKER, "ratings", "get", "1v1", "ann", prefix="other")
    assert elsewhere.returncode == 2
    assert elsewhere.stderr.splitlines() == [
        f"skillstream ratings get: error: REDIS_URL: Redis at 127.0.0.1:{valkey.port} refused"
        " user 'mm': No permissions to access a key (its ACL rules for the keys under 'other':"
        " `skillstream cache acl`, docs/operations.md#access-who-may-do-what)"
    ]
    refused = command(valkey, MATCHMAKER, "cache", "writer")
    assert refused.returncode == 2
    assert refused.stderr.splitlines() == [
        f"skillstream cache writer: error: REDIS_URL: Redis at 127.0.0.1:{valkey.port} refused"
        " user 'mm': User mm has no permissions to run the 'script|load' command (its ACL rules"
        f" for the keys under {PREFIX!r}: `skillstream cache acl`,"
        " docs/operations.md#access-who-may-do-what)"
    ]


def test_the_compose_acl_file_starts_a_server_whose_users_work() -> None:
    """deploy/compose/users.acl as Redis reads it at start: the default user is off, the
    writer passes the writer's check, the matchmaker pings and may not write."""
    from cache_support import running_valkey

    acl = Path(__file__).resolve().parents[3] / "deploy" / "compose" / "users.acl"
    with running_valkey("--aclfile", str(acl)) as server:
        writer = ("skillstream-writer", "writer-local")
        settings = Settings(redis=RedisSettings(url=url(server, writer)))
        check_writer_access(settings)
        mm = Redis.from_url(url(server, ("matchmaker", "matchmaker-local")))
        assert mm.ping()
        with pytest.raises(NoPermissionError):
            mm.set("skillstream:x", "1")
        mm.close()
        with pytest.raises(AuthenticationError):
            Redis.from_url(server.url).ping()
