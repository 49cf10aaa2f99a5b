"""Why a rating moved, read back from a real Valkey: the explanation a rating-changed event
carries reaches the player's history through the writer's script, the clients find it by
match, and `skillstream ratings explain` words it for a support agent. No mocks."""

from __future__ import annotations

import asyncio
import subprocess
from typing import Any

import orjson
from cache_support import ValkeyServer, cache_command
from redis import Redis
from redis.asyncio import Redis as AsyncRedis

from stream.cache import CachedRating, CacheWriter, KeyLayout, RatingCache, SyncRatingCache
from stream.cache.history import worded
from stream.config.modes import parse_modes
from stream.corrections.records import Adjust, Audit
from stream.ratingchanged import adjustment_changed, rating_changed
from stream.ratings.engine import MatchView, rate_match
from stream.ratings.explain import explain
from stream.ratings.modeconfig import ModeConfig
from stream.ratings.skill import PlayerState

LAYOUT = KeyLayout()
MODES = parse_modes({})
MODE = "ranked"
T0 = 1_767_225_600.0
RULES = ModeConfig(MODE)


def played(match_id: str, at: float, states: dict[str, PlayerState]) -> list[dict[str, Any]]:
    """The events the worker publishes for a duel a beats b, ``why`` included."""
    updates = rate_match(RULES, MatchView((("a",), ("b",)), (0, 1), at), states)
    events = []
    for pid, update in updates.items():
        before = states.get(pid)
        event = rating_changed(
            player_id=pid,
            mode=RULES,
            match_id=match_id,
            outcome="win" if pid == "a" else "loss",
            before=before or RULES.initial,
            after=update.state,
            version=update.state.games,
            expected_score=update.expected_score,
            at=at,
            why=explain(RULES, before, update, at),
        )
        events.append(orjson.loads(orjson.dumps(event)))
        states[pid] = update.state
    return events


def two_matches() -> list[dict[str, Any]]:
    states: dict[str, PlayerState] = {}
    # The second match 200 days later: inactivity is one of its terms.
    return played("m-1", T0, states) + played("m-2", T0 + 200 * 86_400.0, states)


async def test_the_explanation_reaches_the_history_and_is_found_by_match(
    aredis: AsyncRedis,
) -> None:
    events = two_matches()
    await CacheWriter(aredis, LAYOUT).write([CachedRating.from_rating_changed(e) for e in events])
    cache = RatingCache(aredis, MODES)
    latest = await cache.explanation(MODE, "a")
    first = await cache.explanation(MODE, "a", "m-1")
    assert latest is not None and first is not None
    assert (latest.match_id, first.match_id) == ("m-2", "m-1")
    a_m2 = next(e for e in events if e["player_id"] == "a" and e["match_id"] == "m-2")
    assert latest.why is not None and latest.why.to_json() == a_m2["why"]
    assert latest.why.inactive is not None
    assert latest.before == (a_m2["previous"]["rating"], a_m2["previous"]["deviation"])
    assert await cache.explanation(MODE, "a", "m-9") is None
    assert await cache.explanation(MODE, "nobody") is None


def test_the_command_words_a_change_for_a_support_agent(
    sredis: Redis, valkey: ValkeyServer
) -> None:
    events = two_matches()

    async def fill() -> None:
        client = AsyncRedis.from_url(valkey.url)
        try:
            await CacheWriter(client, LAYOUT).write(
                [CachedRating.from_rating_changed(e) for e in events]
            )
        finally:
            await client.aclose()

    asyncio.run(fill())

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return cache_command(valkey.url, "ratings", "explain", *args)

    entry = SyncRatingCache(sredis, MODES).explanation(MODE, "b", "m-2")
    assert entry is not None
    shown = run(MODE, "b", "m-2")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines() == worded(entry, "b")
    assert shown.stdout.startswith("Before match m-2 (a loss), b was rated ")
    assert "Time without playing raised the uncertainty" in shown.stdout
    as_json = run(MODE, "b", "--json")
    assert as_json.returncode == 0 and orjson.loads(as_json.stdout)["match_id"] == "m-2"
    missing = run(MODE, "b", "m-404")
    assert missing.returncode == 1 and missing.stderr.count("\n") == 1
    assert "nothing found: the cache keeps no change from match 'm-404' of 'b'" in missing.stderr
    empty = run("", "b")
    assert empty.returncode == 2 and empty.stderr.count("\n") == 1


def test_an_adjustment_is_cached_and_worded_with_who_and_why(
    sredis: Redis, valkey: ValkeyServer
) -> None:
    events = two_matches()
    a_m2 = next(e for e in events if e["player_id"] == "a" and e["match_id"] == "m-2")
    before = PlayerState(a_m2["rating"], a_m2["deviation"], a_m2["volatility"], games=2)
    audit = Audit("adj-7", "support-ana", T0, "refund: server crash in m-2")
    adjust = Adjust(audit, MODE, "a", 1650.0, False, T0 + 300 * 86_400.0)
    adjusted = adjustment_changed(
        player_id="a",
        mode=RULES,
        change=adjust,
        before=before,
        after=PlayerState(1650.0, before.deviation, before.volatility, games=2),
        version=3,
    )

    async def fill() -> None:
        client = AsyncRedis.from_url(valkey.url)
        try:
            changes = [orjson.loads(orjson.dumps(e)) for e in [*events, adjusted]]
            await CacheWriter(client, LAYOUT).write(
                [CachedRating.from_rating_changed(e) for e in changes]
            )
        finally:
            await client.aclose()

    asyncio.run(fill())
    entry = SyncRatingCache(sredis, MODES).explanation(MODE, "a")
    assert entry is not None and entry.match_id == "adj-7" and entry.outcome == "adjusted"
    shown = cache_command(valkey.url, "ratings", "explain", MODE, "a")
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.splitlines() == [
        "An operator (support-ana) adjusted a's rating (adj-7): refund: server crash in m-2.",
        f"Before it: {before.rating:.0f} (uncertainty {before.deviation:.0f}).",
        f"After it: 1650 (uncertainty {before.deviation:.0f}).",
    ]
    # The match before it is still explained as a match.
    earlier = cache_command(valkey.url, "ratings", "explain", MODE, "a", "m-2")
    assert earlier.stdout.startswith("Before match m-2 (a win), a was rated ")
