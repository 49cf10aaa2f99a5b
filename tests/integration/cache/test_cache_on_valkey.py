"""The rating cache against a real Valkey server: versioned writes, exact floats, reads, boards,
probabilities, both clients, and cluster safety of the key layout. No mocks."""

from __future__ import annotations

import asyncio
import os
import re
from dataclasses import replace

import pytest
import redis
from cache_support import ValkeyServer, running_valkey
from redis import Redis
from redis.asyncio import Redis as AsyncRedis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from stream.cache import (
    Board,
    CachedRating,
    CacheFormatError,
    CacheWriter,
    KeyLayout,
    LeaderboardEntry,
    RatingCache,
    SyncRatingCache,
    UnknownModeError,
    WriteResult,
    key_slot,
)
from stream.cache.slots import hash_tag
from stream.cache.writer import CALL_ENTRIES
from stream.config.modes import Modes, parse_modes
from stream.local.stack import free_port
from stream.ratings import probability
from stream.ratings.engine import initial_state
from stream.ratings.population import Population

LAYOUT = KeyLayout()
MODES = parse_modes({"modes": {"elo-duel": {"algorithm": "elo"}}})
MODE = "ranked-1v1"


def rating(
    player_id: str,
    version: int,
    *,
    mode: str = MODE,
    value: float | None = None,
    deviation: float | None = None,
    rank_points: int | None = None,
    volatility: float | None = 0.06,
) -> CachedRating:
    """An entry whose every field follows from the version unless given."""
    return CachedRating(
        player_id=player_id,
        mode=mode,
        rating=1500.0 + 10.0 * version if value is None else value,
        deviation=200.0 - version if deviation is None else deviation,
        volatility=volatility,
        rank_points=100 * version if rank_points is None else rank_points,
        games=version,
        version=version,
        updated_at_ms=1_767_323_045_000 + version,
        match_id=f"match-{version}",
    )


async def snapshot(client: AsyncRedis, mode: str, player_id: str) -> tuple[object, ...]:
    """Everything the cache holds about one player: the hash and the three scores."""
    return (
        await client.hgetall(LAYOUT.player(mode, player_id)),
        await client.zscore(LAYOUT.by_rating(mode), player_id),
        await client.zscore(LAYOUT.by_rank_points(mode), player_id),
        await client.zscore(LAYOUT.by_conservative(mode), player_id),
    )


# --- versioned writes ----------------------------------------------------------------------


async def test_newer_version_replaces_everything(aredis: AsyncRedis) -> None:
    writer = CacheWriter(aredis, LAYOUT, conservative_k=2.0)
    assert await writer.write([rating("p", 1)]) == WriteResult(applied=1, stale=0)
    assert await writer.write([rating("p", 2, volatility=None)]) == WriteResult(1, 0)
    fields, by_rating, by_points, by_conservative = await snapshot(aredis, MODE, "p")
    assert fields == {
        b"rating": b"1520.0",
        b"deviation": b"198.0",
        b"volatility": b"",
        b"rank_points": b"200",
        b"games": b"2",
        b"version": b"2",
        b"updated_at": b"1767323045002",
        b"match_id": b"match-2",
        b"schema": b"1",
    }
    assert (by_rating, by_points, by_conservative) == (1520.0, 200.0, 1520.0 - 2.0 * 198.0)


@pytest.mark.parametrize("version", [5, 3, 1])
async def test_equal_or_older_version_changes_nothing(aredis: AsyncRedis, version: int) -> None:
    writer = CacheWriter(aredis, LAYOUT)
    await writer.write([rating("p", 5)])
    before = await snapshot(aredis, MODE, "p")
    # Different values under an equal or older version: nothing, not even a score, moves.
    late = rating("p", version, value=9999.0, deviation=1.0, rank_points=-7)
    assert await writer.write([late]) == WriteResult(applied=0, stale=1)
    assert await snapshot(aredis, MODE, "p") == before


async def test_batch_keeps_the_newest_version_of_each_player(aredis: AsyncRedis) -> None:
    writer = CacheWriter(aredis, LAYOUT)
    batch = [
        rating("p", 2),
        rating("p", 7),
        rating("q", 1),
        rating("p", 3),
        rating("p", 7, value=1.0),  # equal version later in the batch: the first one wins
        rating("p", 1),
    ]
    assert await writer.write(batch) == WriteResult(applied=2, stale=4)
    cache = RatingCache(aredis, MODES)
    found = await cache.get_many(MODE, ["p", "q"])
    assert found == {"p": rating("p", 7), "q": rating("q", 1)}
    # Replaying the whole batch is harmless.
    assert await writer.write(batch) == WriteResult(applied=0, stale=6)
    assert await cache.get_many(MODE, ["p", "q"]) == found


async def test_a_batch_larger_than_one_script_call_over_two_modes(aredis: AsyncRedis) -> None:
    # Several calls per mode (CALL_ENTRIES each), ids that JSON escapes or that are not ASCII.
    players = [f"p{i}" for i in range(2 * CALL_ENTRIES + 7)] + ['q"\\', "joueur-é", "玩家"]
    await CacheWriter(aredis, LAYOUT).write([rating(players[5], 9)])
    batch = [rating(p, 3, mode=mode) for mode in (MODE, "elo-duel") for p in players]
    writer = CacheWriter(aredis, LAYOUT)
    assert await writer.write(batch) == WriteResult(applied=len(batch) - 1, stale=1)
    cache = RatingCache(aredis, MODES)
    found = await cache.get_many(MODE, players)
    assert found == {p: rating(p, 9 if p == players[5] else 3) for p in players}
    duel = await cache.get_many("elo-duel", players)
    assert duel == {p: rating(p, 3, mode="elo-duel") for p in players}
    assert await writer.write(batch) == WriteResult(applied=0, stale=len(batch))


async def test_a_stored_version_that_is_not_a_number_is_an_error(aredis: AsyncRedis) -> None:
    writer = CacheWriter(aredis, LAYOUT)
    await writer.write([rating("p", 1)])
    await aredis.hset(LAYOUT.player(MODE, "p"), "version", "abc")
    with pytest.raises(redis.ResponseError, match="stored version is not a number"):
        await writer.write([rating("p", 2)])


async def test_empty_batch_and_refused_entries(aredis: AsyncRedis) -> None:
    writer = CacheWriter(aredis, LAYOUT)
    assert await writer.write([]) == WriteResult(0, 0)
    unknown = CachedRating.unknown_default(MODE, "p", initial_state(MODES.get(MODE)))
    with pytest.raises(ValueError, match="only real rating changes"):
        await writer.write([rating("q", 1), unknown])
    with pytest.raises(ValueError, match="rating nan is outside"):
        await writer.write([rating("q", 1, value=float("nan"))])
    with pytest.raises(ValueError, match=re.escape("rating 1e+308 is outside")):
        await writer.write([rating("q", 1, value=1e308)])
    with pytest.raises(ValueError, match="version 9223372036854775813 is outside"):
        await writer.write([replace(rating("q", 1), version=2**63 + 5)])
    assert await aredis.dbsize() == 0


async def test_a_key_poisoned_by_a_forged_version_is_replaced(aredis: AsyncRedis) -> None:
    # Written before the writer refused such records: with the highest version wins, nothing
    # could ever replace it.
    writer = CacheWriter(aredis, LAYOUT)
    await writer.write([rating("p", 3)])
    await aredis.hset(LAYOUT.player(MODE, "p"), "version", str(2**63 + 5))
    assert await writer.write([rating("p", 4)]) == WriteResult(applied=1, stale=0)
    assert (await RatingCache(aredis, MODES).get_many(MODE, ["p"]))["p"] == rating("p", 4)
    # Sane versions keep their order.
    assert await writer.write([rating("p", 2)]) == WriteResult(applied=0, stale=1)


async def test_writes_survive_a_script_flush(aredis: AsyncRedis) -> None:
    writer = CacheWriter(aredis, LAYOUT)
    await writer.write([rating("p", 1)])
    await aredis.script_flush()
    assert await writer.write([rating("p", 2)]) == WriteResult(1, 0)
    assert (await RatingCache(aredis, MODES).get_many(MODE, ["p"]))["p"].version == 2


async def test_redis_errors_reach_the_caller() -> None:
    # No retries: redis-py's default backoff would only make the test slow.
    unreachable = AsyncRedis(
        port=free_port(), socket_connect_timeout=1, retry=Retry(NoBackoff(), 0)
    )
    try:
        with pytest.raises(redis.ConnectionError):
            await CacheWriter(unreachable, LAYOUT).write([rating("p", 1)])
        with pytest.raises(redis.ConnectionError):
            await RatingCache(unreachable, MODES).get_many(MODE, ["p"])
    finally:
        await unreachable.aclose()


async def test_concurrent_writers_keep_the_newest(aredis: AsyncRedis) -> None:
    writers = [CacheWriter(aredis, LAYOUT) for _ in range(4)]
    versions = list(range(1, 41))
    await asyncio.gather(
        *(writers[v % 4].write([rating("p", v)]) for v in reversed(versions)),
    )
    assert (await RatingCache(aredis, MODES).get_many(MODE, ["p"]))["p"] == rating("p", 40)


# --- exact floats ---------------------------------------------------------------------------

TRICKY = [
    0.1 + 0.2,
    1500.0000000000002,
    4500.0 / 7.0,
    -0.0,
    5e-324,
    # The largest magnitudes the writer accepts (stream/cache/entry.py), and one with the
    # last bit of its mantissa set.
    1e7,
    9_999_999.999999998,
    2.0**23 + 2.0**-29,
    1662.3108939062977,
]


async def test_floats_round_trip_exactly(aredis: AsyncRedis) -> None:
    k = 3.0
    writer = CacheWriter(aredis, LAYOUT, conservative_k=k)
    entries = [
        rating(f"p{i}", 1, value=value, deviation=abs(value) / 3.0, volatility=value)
        for i, value in enumerate(TRICKY)
    ]
    await writer.write(entries)
    found = await RatingCache(aredis, MODES).get_many(MODE, [e.player_id for e in entries])
    for entry in entries:
        got = found[entry.player_id]
        assert got == entry
        # Bit for bit, sign of zero included.
        assert got.rating.hex() == entry.rating.hex()
        assert got.deviation.hex() == entry.deviation.hex()
        assert got.volatility is not None and entry.volatility is not None
        assert got.volatility.hex() == entry.volatility.hex()
        score = await aredis.zscore(LAYOUT.by_rating(MODE), entry.player_id)
        assert score == entry.rating
        conservative = await aredis.zscore(LAYOUT.by_conservative(MODE), entry.player_id)
        assert conservative == entry.rating - k * entry.deviation


# --- reads ----------------------------------------------------------------------------------


async def test_unknown_players_read_as_unknown_defaults(aredis: AsyncRedis) -> None:
    await CacheWriter(aredis, LAYOUT).write([rating("known", 3, mode="elo-duel")])
    cache = RatingCache(aredis, MODES)
    found = await cache.get_many("elo-duel", ["new", "known", "new"])
    assert list(found) == ["new", "known"]
    assert found["known"] == rating("known", 3, mode="elo-duel")
    default = initial_state(MODES.get("elo-duel"))
    new = found["new"]
    assert new.unknown and new.version == 0 and new.games == 0
    assert (new.rating, new.deviation, new.volatility, new.rank_points) == (
        default.rating,
        default.deviation,
        default.volatility,
        default.rank_points,
    )
    glicko = (await cache.get_many(MODE, ["new"]))["new"]
    assert glicko.deviation == initial_state(MODES.get(MODE)).deviation > 0
    assert await cache.get_many(MODE, []) == {}


async def test_rejected_mode(aredis: AsyncRedis) -> None:
    strict = parse_modes({"default": {"unlisted": "reject"}, "modes": {"listed": {}}})
    cache = RatingCache(aredis, strict)
    assert (await cache.get_many("listed", ["p"]))["p"].unknown
    with pytest.raises(UnknownModeError, match="not configured"):
        await cache.get_many("other", ["p"])


async def test_another_schema_is_refused(aredis: AsyncRedis) -> None:
    await CacheWriter(aredis, LAYOUT).write([rating("p", 1)])
    await aredis.hset(LAYOUT.player(MODE, "p"), "schema", "99")
    with pytest.raises(CacheFormatError, match="schema '99'"):
        await RatingCache(aredis, MODES).get_many(MODE, ["p"])


async def test_window_nearest_first(aredis: AsyncRedis) -> None:
    values = {"a": 1300.0, "b": 1390.0, "c": 1400.0, "d": 1450.0, "e": 1500.0, "f": 1540.0}
    values |= {"g": 1600.0, "h": 1601.0, "i": 1460.0}
    await CacheWriter(aredis, LAYOUT).write([rating(p, 1, value=v) for p, v in values.items()])
    cache = RatingCache(aredis, MODES)
    # Bounds are inclusive; nearest first, ties by lower rating.
    assert await cache.window(MODE, 1500.0, 100.0) == [
        ("e", 1500.0),
        ("i", 1460.0),
        ("f", 1540.0),
        ("d", 1450.0),
        ("c", 1400.0),
        ("g", 1600.0),
    ]
    # With a limit, the nearest are kept, not the lowest.
    assert await cache.window(MODE, 1500.0, 100.0, limit=3) == [
        ("e", 1500.0),
        ("i", 1460.0),
        ("f", 1540.0),
    ]
    assert await cache.window(MODE, 1395.0, 5.0) == [("b", 1390.0), ("c", 1400.0)]
    assert await cache.window(MODE, 1000.0, 50.0) == []
    assert await cache.window("empty-mode", 1500.0, 1e9) == []


def expected_board(entries: list[CachedRating], board: Board, k: float) -> list[LeaderboardEntry]:
    def score(e: CachedRating) -> float:
        if board is Board.RANK_POINTS:
            return float(e.rank_points)
        if board is Board.CONSERVATIVE:
            return e.conservative(k)
        return e.rating

    # Highest first; Redis orders equal scores by member, reversed.
    ordered = sorted(entries, key=lambda e: (score(e), e.player_id.encode()), reverse=True)
    return [LeaderboardEntry(i + 1, e.player_id, score(e)) for i, e in enumerate(ordered)]


@pytest.mark.parametrize("board", list(Board))
async def test_top_and_around_on_every_board(aredis: AsyncRedis, board: Board) -> None:
    k = 2.5
    entries = [
        rating(f"p{i:02d}", 1, value=1400.0 + (i * 37) % 300, deviation=30.0 + (i * 53) % 200)
        for i in range(20)
    ]
    # Two equal rank-point totals: ties are ordered as Redis orders them.
    entries += [rating("tie-a", 1, rank_points=500), rating("tie-b", 1, rank_points=500)]
    await CacheWriter(aredis, LAYOUT, conservative_k=k).write(entries)
    cache = RatingCache(aredis, MODES)
    full = expected_board(entries, board, k)

    assert await cache.top(MODE, 5, board) == full[:5]
    assert await cache.top(MODE, 100, board.value) == full

    for position in (0, 1, 10, len(full) - 1):
        player = full[position].player_id
        got = await cache.around(MODE, player, 3, board)
        assert got == full[max(position - 3, 0) : position + 4]
        assert player in [e.player_id for e in got]
    assert await cache.around(MODE, full[5].player_id, 0, board) == [full[5]]
    assert await cache.around(MODE, "nobody", 3, board) == []
    assert await cache.top("empty-mode", 3, board) == []


async def test_probabilities_equal_the_pure_functions(aredis: AsyncRedis) -> None:
    for mode in (MODE, "elo-duel"):
        await CacheWriter(aredis, LAYOUT).write(
            [
                rating("a", 4, mode=mode, value=1712.5, deviation=61.0),
                rating("b", 2, mode=mode, value=1480.25, deviation=120.0),
                rating("c", 9, mode=mode, value=1550.0, deviation=45.5),
            ]
        )
        cache = RatingCache(aredis, MODES)
        algorithm, experience = MODES.get(mode).algorithm, MODES.get(mode).experience
        found = await cache.get_many(mode, ["a", "b", "c", "new"])
        # Every player as the engine plays them: rating plus the experience offset.
        a, b, c, new = (found[p].effective_skill(experience) for p in ("a", "b", "c", "new"))
        assert new.rating < found["new"].rating

        assert await cache.win_probability(mode, "a", "b") == probability.win_probability(
            algorithm, a, b
        )
        assert await cache.win_probability(mode, "new", "c") == probability.win_probability(
            algorithm, new, c
        )
        team_a, team_b = [a, new], [b, c]
        assert await cache.team_win_probability(
            mode, ["a", "new"], ["b", "c"]
        ) == probability.team_win_probability(algorithm, team_a, team_b)
        assert await cache.match_quality(
            mode, ["a", "new"], ["b", "c"]
        ) == probability.match_quality(algorithm, team_a, team_b)


# --- both clients, every reply shape ------------------------------------------------------


async def every_answer_async(cache: RatingCache) -> list[object]:
    return [
        await cache.get_many(MODE, ["p1", "p2", "ghost"]),
        await cache.window(MODE, 1510.0, 30.0, limit=2),
        await cache.win_probability(MODE, "p1", "ghost"),
        await cache.team_win_probability(MODE, ["p1", "p2"], ["p3"]),
        await cache.match_quality(MODE, ["p1"], ["p2", "p3"]),
        *[await cache.top(MODE, 2, board) for board in Board],
        *[await cache.around(MODE, "p2", 1, board) for board in Board],
    ]


def every_answer_sync(cache: SyncRatingCache) -> list[object]:
    return [
        cache.get_many(MODE, ["p1", "p2", "ghost"]),
        cache.window(MODE, 1510.0, 30.0, limit=2),
        cache.win_probability(MODE, "p1", "ghost"),
        cache.team_win_probability(MODE, ["p1", "p2"], ["p3"]),
        cache.match_quality(MODE, ["p1"], ["p2", "p3"]),
        *[cache.top(MODE, 2, board) for board in Board],
        *[cache.around(MODE, "p2", 1, board) for board in Board],
    ]


async def test_sync_and_async_clients_agree_in_every_configuration(
    aredis: AsyncRedis, sredis: Redis, valkey: ValkeyServer
) -> None:
    await CacheWriter(aredis, LAYOUT).write(
        [rating("p1", 1), rating("p2", 2, deviation=10.0), rating("p3", 3)]
    )
    reference = await every_answer_async(RatingCache(aredis, MODES))
    assert every_answer_sync(SyncRatingCache(sredis, MODES)) == reference
    # decode_responses and RESP3 change every reply's shape, not the answers.
    for options in ({"decode_responses": True}, {"protocol": 3}):
        async_client = AsyncRedis.from_url(valkey.url, **options)
        sync_client = Redis.from_url(valkey.url, **options)
        try:
            assert await every_answer_async(RatingCache(async_client, MODES)) == reference
            assert every_answer_sync(SyncRatingCache(sync_client, MODES)) == reference
        finally:
            await async_client.aclose()
            sync_client.close()


async def test_from_url_with_a_prefix(aredis: AsyncRedis, valkey: ValkeyServer) -> None:
    await CacheWriter(aredis, KeyLayout("other")).write([rating("p", 4)])
    cache = RatingCache.from_url(valkey.url, Modes(), prefix="other")
    try:
        assert (await cache.get_many(MODE, ["p"]))["p"].version == 4
    finally:
        await cache.aclose()
    sync_cache = SyncRatingCache.from_url(valkey.url, Modes(), prefix="other")
    try:
        assert sync_cache.get_many(MODE, ["p"])["p"].version == 4
        # The default prefix sees none of it.
        assert SyncRatingCache(sync_cache.redis, Modes()).get_many(MODE, ["p"])["p"].unknown
    finally:
        sync_cache.close()


# --- cluster safety -------------------------------------------------------------------------

MODES_WITH_BRACES = ["ranked-1v1", "casual-2v2", "a{b}", "}", "{", "%7D", "x{}y", "m" * 128]


async def test_every_key_of_a_mode_shares_one_slot(aredis: AsyncRedis) -> None:
    players = ["p", "{q}", "r}", "s{"]
    await CacheWriter(aredis, LAYOUT).write(
        [rating(p, 1, mode=m) for m in MODES_WITH_BRACES for p in players]
    )
    keys = [key.decode() async for key in aredis.scan_iter(count=1000)]
    # Per player a hash and a history; per mode three boards, by-last-played and the clock.
    assert len(keys) == len(MODES_WITH_BRACES) * (2 * len(players) + 5)
    slots_by_tag: dict[str, set[int]] = {}
    for key in keys:
        tag = hash_tag(key.encode()).decode()
        slots_by_tag.setdefault(tag, set()).add(key_slot(key))
    # One tag per mode, one slot per tag, and the modes do not all share a slot.
    assert len(slots_by_tag) == len(MODES_WITH_BRACES)
    assert all(len(slots) == 1 for slots in slots_by_tag.values())
    assert len({slot for slots in slots_by_tag.values() for slot in slots}) > 1
    for mode in MODES_WITH_BRACES:
        (slot,) = slots_by_tag[hash_tag(LAYOUT.by_rating(mode).encode()).decode()]
        assert slot == key_slot(LAYOUT.player(mode, "anyone"))


def test_slot_function_agrees_with_a_cluster_node(valkey_cluster_node: ValkeyServer) -> None:
    client = Redis.from_url(valkey_cluster_node.url)
    try:
        keys = ["somekey", "{user1000}.following", "{user1000}.followers", "foo{}{bar}"]
        keys += ["foo{{bar}}zap", "foo{bar}{zap}", "", "{", "}{", "ünïcødé{ø}"]
        keys += [LAYOUT.player(m, p) for m in MODES_WITH_BRACES for p in ("p", "{q}", "r}")]
        keys += [LAYOUT.board(m, b) for m in MODES_WITH_BRACES for b in Board]
        keys += [os.urandom(12).hex() for _ in range(50)]
        with client.pipeline(transaction=False) as pipe:
            for key in keys:
                pipe.execute_command("CLUSTER KEYSLOT", key)  # type: ignore[no-untyped-call]
            server_slots = pipe.execute()
        assert [key_slot(key) for key in keys] == server_slots
        assert server_slots[0] == 11058
    finally:
        client.close()


def test_plain_server_has_no_cluster_keyslot(sredis: Redis) -> None:
    # Why the test above needs its own cluster-enabled node.
    with pytest.raises(redis.ResponseError, match=re.compile("cluster", re.IGNORECASE)):
        sredis.execute_command("CLUSTER KEYSLOT", "somekey")  # type: ignore[no-untyped-call]


def test_the_fixture_stops_exactly_its_server() -> None:
    with running_valkey() as server:
        assert Redis(port=server.port).ping()
        os.kill(server.pid, 0)
    with pytest.raises(ProcessLookupError):
        os.kill(server.pid, 0)


# --- a learning mode's population -------------------------------------------------------------


async def test_the_population_of_the_latest_event_is_kept_and_read_back(aredis: AsyncRedis) -> None:
    """The writer keeps each learning mode's population of its latest event time; an older
    one, written after it, changes nothing; the readers predict with it."""
    writer = CacheWriter(aredis, LAYOUT)
    newer = Population(300.0, 40.0, 0.1, 1.25, 3.5, -120.0, 25.0)
    older = Population(150.0, 90.0, 0.9, 0.75)
    result = await writer.write([rating("p", 1)], {MODE: (2_000, newer)})
    assert result == WriteResult(applied=1, stale=0)
    assert await writer.write([], {MODE: (1_000, older)}) == WriteResult(0, 0)
    stored = await aredis.hgetall(LAYOUT.population(MODE))
    assert stored == {
        b"at": b"2000",
        b"deviation": b"300.0",
        b"size_edge": b"40.0",
        b"persistence": b"0.1",
        b"decisiveness": b"1.25",
        b"drift_period": b"3.5",
        b"debut_offset": b"-120.0",
        b"party_edge": b"25.0",
    }
    cache = RatingCache(aredis, Modes(), LAYOUT)
    unknown = (await cache.get_many(MODE, ["new"]))["new"]
    assert unknown.unknown and unknown.deviation == 300.0
    rules = newer.rules(Modes().get(MODE))
    known = (await cache.get_many(MODE, ["p"]))["p"]
    experience = rules.experience
    # The built-in table's experience term is on: the learned debut offset is in force.
    assert experience.debut_offset == -120.0
    assert await cache.win_probability(MODE, "new", "p") == probability.win_probability(
        rules.algorithm,
        unknown.effective_skill(experience),
        known.effective_skill(experience),
        1.25,
    )
    # A candidate match's pre-made duo plays at the learned party edge.
    teams = (["new", "p"], ["a", "b"])
    duo = await cache.team_win_probability(MODE, *teams, parties=[["new", "p"]])
    assert duo > await cache.team_win_probability(MODE, *teams)
