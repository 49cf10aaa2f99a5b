"""`skillstream ratings get` and `skillstream leaderboard` against a real Valkey, as a
matchmaker's operator runs them (subprocesses, settings from the environment)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from cache_support import ValkeyServer
from redis.asyncio import Redis as AsyncRedis

from stream.cache import CachedRating, CacheWriter, KeyLayout

PREFIX = "cmds"


def entry(player: str, rating: float, points: int, deviation: float = 50.0) -> CachedRating:
    return CachedRating(
        player_id=player,
        mode="1v1",
        rating=rating,
        deviation=deviation,
        volatility=0.06,
        rank_points=points,
        games=3,
        version=3,
        updated_at_ms=1_780_000_000_000,
        match_id="m3",
    )


def command(valkey: ValkeyServer, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "REDIS_URL": valkey.url, "SKILLSTREAM_CACHE_PREFIX": PREFIX}
    return subprocess.run(
        [sys.executable, "-m", "stream", *args],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def fill(valkey: ValkeyServer) -> None:
    async def write() -> None:
        client = AsyncRedis.from_url(valkey.url)
        await client.flushdb()
        entries = [
            entry("ann", 1700.0, 6000),
            entry("bob", 1600.0, 5000, deviation=10.0),
            entry("cat", 1500.0, 7000),
        ]
        await CacheWriter(client, KeyLayout(PREFIX)).write(entries)
        await client.aclose()

    asyncio.run(write())


def test_ratings_get_prints_cached_and_unknown_players(valkey: ValkeyServer) -> None:
    """``unknown``: not in the cache; ``provisional``: as rating-changed says it, fewer games
    than the mode's provisional_games (bob has 3 of the default's 5)."""
    fill(valkey)
    done = command(valkey, "ratings", "get", "1v1", "bob", "newcomer")
    assert done.returncode == 0, done.stderr
    lines = [orjson.loads(line) for line in done.stdout.splitlines()]
    assert [line["player_id"] for line in lines] == ["bob", "newcomer"]
    bob, newcomer = lines
    assert (bob["rating"], bob["version"], bob["unknown"], bob["provisional"]) == (
        1600.0,
        3,
        False,
        True,
    )
    assert (newcomer["rating"], newcomer["games"], newcomer["unknown"]) == (1500.0, 0, True)
    assert newcomer["provisional"] is True


def test_leaderboards_by_rank_points_and_conservative_rating(valkey: ValkeyServer) -> None:
    fill(valkey)
    done = command(valkey, "leaderboard", "1v1", "--json")
    assert done.returncode == 0, done.stderr
    board = [orjson.loads(line) for line in done.stdout.splitlines()]
    assert [(e["rank"], e["player_id"]) for e in board] == [(1, "cat"), (2, "ann"), (3, "bob")]
    # Conservative: rating - 3 deviations; bob's certainty puts him first (1570 vs 1550).
    done = command(valkey, "leaderboard", "1v1", "--board", "conservative", "--top", "1")
    assert done.returncode == 0, done.stderr
    assert "bob" in done.stdout.splitlines()[1]
    assert len(done.stdout.splitlines()) == 2
    around = command(valkey, "leaderboard", "1v1", "--around", "ann", "--top", "1")
    assert [line.split()[1] for line in around.stdout.splitlines()[1:]] == ["cat", "ann", "bob"]
    missing = command(valkey, "leaderboard", "1v1", "--around", "nobody")
    assert missing.returncode == 1
    assert "no entries around 'nobody'" in missing.stderr


def test_a_mode_the_configuration_rejects_is_a_clear_error(
    valkey: ValkeyServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    modes = tmp_path / "modes.toml"
    modes.write_text('[default]\nunlisted = "reject"\n[modes.1v1]\n')
    monkeypatch.setenv("SKILLSTREAM_MODES_FILE", str(modes))
    done = command(valkey, "ratings", "get", "2v2", "x")
    assert done.returncode == 2
    assert "2v2" in done.stderr and "Traceback" not in done.stderr


def test_a_mode_nothing_knows_is_refused_with_the_closest_held(valkey: ValkeyServer) -> None:
    fill(valkey)
    for args in (
        ("ratings", "get", "1vs1", "bob"),
        ("ratings", "history", "1vs1", "bob"),
        ("ratings", "explain", "1vs1", "bob"),
        ("leaderboard", "1vs1"),
    ):
        done = command(valkey, *args)
        assert done.returncode == 2, (args, done.stderr)
        assert done.stderr.splitlines() == [
            f"skillstream {' '.join(args[:2]) if args[0] == 'ratings' else 'leaderboard'}: error:"
            " MODE: the cache holds nothing of mode '1vs1' and no modes file (modes the cache"
            " holds: 1v1); did you mean '1v1'?"
        ]


def test_a_listed_mode_with_nothing_played_yet_is_answered(
    valkey: ValkeyServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fill(valkey)
    modes = tmp_path / "modes.toml"
    modes.write_text("[modes.new-mode]\n")
    monkeypatch.setenv("SKILLSTREAM_MODES_FILE", str(modes))
    done = command(valkey, "ratings", "get", "new-mode", "ann")
    assert done.returncode == 0, done.stderr
    assert orjson.loads(done.stdout)["unknown"] is True
    empty = command(valkey, "leaderboard", "new-mode")
    assert (empty.returncode, empty.stderr) == (
        1,
        "skillstream leaderboard: nothing found: no entries on the rank_points board of"
        " 'new-mode'\n",
    )


def test_nothing_found_is_one_line_and_exit_1_for_every_read(valkey: ValkeyServer) -> None:
    fill(valkey)
    for args, what in (
        (("ratings", "history", "1v1", "nobody"), "the cache keeps no rating change of"),
        (("ratings", "explain", "1v1", "nobody"), "the cache keeps no rating change of"),
        (("leaderboard", "1v1", "--season", "99"), "in season 99"),
        (("leaderboard", "1v1", "--around", "nobody"), "no entries around 'nobody'"),
    ):
        done = command(valkey, *args)
        assert done.returncode == 1, (args, done.stderr)
        (line,) = done.stderr.splitlines()
        assert ": nothing found: " in line and what in line, line
        assert done.stdout == ""
