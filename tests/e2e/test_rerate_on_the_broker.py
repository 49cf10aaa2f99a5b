"""Correcting the past live, on the real broker (docs/operations.md#correcting-the-past-live):
while matches keep coming, a second deployment re-rates the retained inputs with three matches
voided, one player erased and three ratings adjusted (or with a new modes file), and is
SIGKILLed while it catches up and started again; the first deployment is SIGKILLed, and
`skillstream corrections cutover` (itself SIGKILLed once and started again) hands
rating-changed over and records the re-rate on the audit topic once. rating-changed, read as a
consumer is told to (per player and match the highest version, retractions applied), then
equals replay of the corrected history, nothing is published twice, the cache holds the
corrected ratings, and the erased id is in none of the new deployment's topics or the
cache."""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
import redis
from builders import T0
from librdkafka_clients import Reader, fleet_producer
from pipeline_env import own_topics_env
from replay_1v1 import Match, as_history, replayed_history, timed_events

from stream.cache.history import counted, decode_history
from stream.cache.keys import KeyLayout
from stream.config.modes import load_modes
from stream.corrections.corrections_file import read_corrections
from stream.corrections.ledger import Ledger
from stream.corrections.pseudonyms import pseudonym
from stream.events import format_time
from stream.local.stack import LocalStack
from stream.local.workers import WorkerProcess

# Five-minute learning windows: a void changes the evidence of its window, so the populations
# after it, so nearly every later rating (the widest cascade a void can have).
MODES_TOML = """
[default.population]
window_days = 0.003472222222222222
"""
PLAYERS = 60
KEY = "a-test-pseudonym-key-0123456789"
ERASED = "p007"


def timeline(seed: int, count: int, pauses: dict[int, float]) -> list[Match]:
    """1v1 matches, a new one every 5 s, each 90 s long, no player in two at once; the event
    time jumps by ``pauses[i]`` before match i. A pause in publishing is a pause in event time
    (each partition's clock moves on with wall time while nothing arrives), so the test's
    pauses (workers starting, the hand-over: seconds) are in the timeline too, longer than they
    last and shorter than a learning window."""
    rng = random.Random(seed)
    free_at = {f"p{i:03d}": 0.0 for i in range(PLAYERS)}
    matches: list[Match] = []
    shift = 0.0
    for i in range(count):
        shift += pauses.get(i, 0.0)
        start = T0 + shift + i * 5.0
        idle = sorted(pid for pid, at in free_at.items() if at < start)
        a, b = rng.sample(idle, 2)
        free_at[a] = free_at[b] = start + 90.0
        matches.append((f"m{i:04d}", start, start + 90.0, [[a], [b]], rng.choice([[0, 1], [1, 0]])))
    return matches


def generation_two(records: list[Any]) -> int:
    return sum(1 for r in records if b'"generation":2' in r.value())


def consumed(records: list[Any]) -> dict[tuple[str, str], tuple[Any, ...]]:
    """rating-changed as a consumer reads it: per (player, match) the change of the highest
    version; a retraction drops the matches it names (all of the player's when ``removed``)."""
    best: dict[tuple[str, str], tuple[int, tuple[Any, ...]]] = {}
    for record in records:
        e = orjson.loads(record.value())
        if "retracted" in e:
            for key in list(best):
                named = e["removed"] or key[1] in e["retracted"]
                if key[0] == e["player_id"] and named and best[key][0] < e["version"]:
                    del best[key]
            continue
        key = (e["player_id"], e["match_id"])
        fields = (e["rating"], e["deviation"], e["volatility"], e["rank_points"], e["games"])
        if key not in best or best[key][0] < e["version"]:
            best[key] = (e["version"], fields)
    return {key: fields for key, (_, fields) in best.items()}


# Ten-minute windows instead of five: every population, so nearly every rating, changes.
NEW_MODES_TOML = """
[default.population]
window_days = 0.006944444444444444
"""


@pytest.mark.parametrize("change", ["corrections", "modes file"])
def test_a_rerate_live_hands_over_exactly(stack: LocalStack, tmp_path: Path, change: str) -> None:
    """``corrections``: three matches voided, a player erased, three ratings adjusted and a
    player banned (their results and those of the players they beat refunded); ``modes
    file``: the whole history rated with new settings."""
    modes_file = tmp_path / "modes.toml"
    modes_file.write_text(MODES_TOML, encoding="utf-8")
    own = own_topics_env(stack, "v")
    old = {
        **own,
        "SKILLSTREAM_MODES_FILE": str(modes_file),
        "SKILLSTREAM_CACHE_WRITER": "off",
        "SKILLSTREAM_TOPIC_AUDIT": "audit-" + own["SKILLSTREAM_APP_ID"],
    }
    servers = old["KAFKA_BOOTSTRAP_SERVERS"]
    matches = timeline(seed=30, count=240, pauses={120: 240.0, 200: 240.0})
    before, during, after = matches[:120], matches[120:200], matches[200:]
    voided = {"m0010", "m0050", "m0100"}
    # The busiest player of the middle of the history (not otherwise corrected), banned there.
    played: dict[str, int] = {}
    for m in matches[30:170]:
        for team in m[3]:
            for p in team:
                if p not in (ERASED, "p020", "p031"):
                    played[p] = played.get(p, 0) + 1
    banned = max(sorted(played), key=lambda p: played[p])
    ban = {
        "id": "c-3",
        "kind": "ban",
        "by": "ops",
        "at": "2026-11-28T00:00:00Z",
        "reason": "aimbot",
        "mode": "1v1",
        "player": banned,
        "from": format_time(matches[30][2]),
        "until": format_time(matches[170][2]),
        "policy": "refund",
    }
    corrections = tmp_path / "corrections.jsonl"
    corrections.write_text(
        orjson.dumps(
            {
                "id": "c-1",
                "kind": "void",
                "by": "ops",
                "at": "2026-11-28T00:00:00Z",
                "reason": "cheater banned",
                "matches": sorted(voided),
            }
        ).decode()
        + "\n"
        + orjson.dumps(
            {
                "id": "c-2",
                "kind": "erase",
                "by": "ops",
                "at": "2026-11-28T00:00:00Z",
                "reason": "GDPR request",
                "pseudonym": pseudonym(KEY.encode(), ERASED),
            }
        ).decode()
        + "\n"
        + "".join(
            orjson.dumps(
                {
                    "id": f"adj-{n}",
                    "kind": "adjust",
                    "by": "support",
                    "at": "2026-11-28T00:00:00Z",
                    "reason": "refund",
                    "mode": "1v1",
                    "player": player,
                    how: value,
                    # Within the first deployment's matches, during the catch-up, and the
                    # erased player's (applied to their pseudonym).
                    "effective": format_time(matches[index][1]),
                }
            ).decode()
            + "\n"
            for n, (player, how, value, index) in enumerate(
                [
                    ("p020", "set", 1700.0, 60),
                    ("p031", "shift", -50.0, 150),
                    (ERASED, "shift", 30.0, 90),
                ]
            )
        )
        + orjson.dumps(ban).decode()
        + "\n",
        encoding="utf-8",
    )
    new_modes = tmp_path / "new-modes.toml"
    new_modes.write_text(NEW_MODES_TOML, encoding="utf-8")
    if change != "corrections":
        voided = set()
    new = {
        **old,
        "SKILLSTREAM_APP_ID": old["SKILLSTREAM_APP_ID"] + "-g2",
        "SKILLSTREAM_TOPIC_RATING_CHANGED": old["SKILLSTREAM_TOPIC_RATING_CHANGED"] + "-g2",
        **(
            {"SKILLSTREAM_CORRECTIONS_FILE": str(corrections), "SKILLSTREAM_PSEUDONYM_KEY": KEY}
            if change == "corrections"
            else {"SKILLSTREAM_MODES_FILE": str(new_modes)}
        ),
    }
    producer = fleet_producer(servers)

    def publish(part: list[Match]) -> None:
        """The part's events in time order, all at once: a fleet that buffered them. Each
        part spans several minutes of event time, more than the grace period (60 s), so the
        workers may read one topic's records of it ahead of the other's
        (docs/event-time.md#a-burst-read-one-topic-ahead-of-the-other)."""
        for _at, topic, match_id, event in timed_events(old, part):
            producer.produce(topic, orjson.dumps(event), match_id.encode())
        assert producer.flush(30) == 0

    cutover_command = [
        "-m",
        "stream",
        "corrections",
        "cutover",
        "--shadow",
        new["SKILLSTREAM_TOPIC_RATING_CHANGED"],
        "--group",
        new["SKILLSTREAM_APP_ID"],
        "--generation",
        "2",
        "--reason",
        "cheater banned; GDPR request",
    ]
    reader = Reader(servers, old["SKILLSTREAM_TOPIC_RATING_CHANGED"], 4)
    processes: list[WorkerProcess] = []
    try:
        publish(before)  # a backlog the first deployment starts on
        first = WorkerProcess(old, "rerate-old").start()
        processes.append(first)
        cache = WorkerProcess(old, "rerate-cache", ["-m", "stream", "cache", "writer"])
        cache.launch()
        processes.append(cache)
        reader.until(2 * 100, timeout=180.0)
        second = WorkerProcess(new, "rerate-new").start()
        processes.append(second)
        # The re-rating deployment SIGKILLed while it catches up, and started again.
        shadow_reader = Reader(servers, new["SKILLSTREAM_TOPIC_RATING_CHANGED"], 4)
        try:
            shadow_reader.until(20, timeout=120.0)
        finally:
            shadow_reader.close()
        second.kill()
        second = WorkerProcess(new, "rerate-new-2").start()
        processes.append(second)
        publish(during)  # matches keep coming while the re-rate catches up
        reader.until(2 * 150, timeout=180.0)
        first.kill()  # the old deployment goes, mid-flow
        handing = WorkerProcess(old, "rerate-cutover", cutover_command)
        handing.launch()
        processes.append(handing)
        # Killed once it has published part of the hand-over, then started again.
        reader.read_until(lambda r: generation_two(r) >= 40, timeout=180.0)
        assert generation_two(reader.records) >= 40, handing.output()[-2000:]
        handing.kill()
        again = WorkerProcess(old, "rerate-cutover-2", cutover_command)
        again.launch()
        processes.append(again)
        deadline = time.monotonic() + 120.0
        while "took over" not in again.output() and time.monotonic() < deadline:
            time.sleep(0.5)
        assert "took over" in again.output(), again.output()[-2000:]
        publish(after)  # rated by the new generation alone, through the cut-over
        if change == "corrections":
            ledger = Ledger(read_corrections(corrections), KEY.encode())
            want = replayed_history(as_history(matches), load_modes(modes_file), ledger)
        else:
            want = replayed_history(as_history(matches), load_modes(new_modes))

        def complete(records: list[Any]) -> bool:
            return consumed(records) == want

        records = reader.read_until(complete, timeout=240.0)
        records = reader.read_until(lambda _: False, timeout=3.0)
        got = consumed(records)
        diagnosis = ""
        if got != want:
            bad = sorted(k for k in want if got.get(k) != want[k])[:3]
            shadow = Reader(servers, new["SKILLSTREAM_TOPIC_RATING_CHANGED"], 4)
            found = shadow.read_until(lambda _: False, timeout=5.0)
            shadow.close()
            keys = [
                (orjson.loads(r.value())["player_id"], orjson.loads(r.value())["match_id"])
                for r in found
            ]
            diagnosis = (
                f"bad {bad}; want {[want[k] for k in bad]}; got {[got.get(k) for k in bad]}; "
                f"shadow: {[r.value()[:400] for r, k in zip(found, keys, strict=True) if k in bad]}"
                f"; cutover: {again.output()[-1500:]}; new worker's counts: "
                f"{[line for line in second.output().splitlines() if 'counts:' in line][-1:]}"
                f"; dead letters: {dead_letters(servers, old['SKILLSTREAM_TOPIC_DLQ'])}"
            )
        audit = Reader(servers, old["SKILLSTREAM_TOPIC_AUDIT"], 1)
        try:
            recorded = [orjson.loads(r.value()) for r in audit.read_until(lambda _: False, 3.0)]
        finally:
            audit.close()
        cached = cached_ratings(old, want, got)
        histories = cached_histories(old, want)
        erased_in_cache = erased_keys(old)
        shadow_and_tables = topics_naming(servers, new, ERASED)
    finally:
        reader.close()
        for process in processes:
            process.cleanup()
    assert got.keys() == want.keys(), diagnosis
    differ = sorted(key for key in want if got[key] != want[key])
    if differ:
        player, match = differ[0]
        shown = [
            r.value()[:300]
            for r in records
            if orjson.loads(r.value())["player_id"] == player
            and orjson.loads(r.value()).get("match_id") == match
        ]
        raise AssertionError(
            f"{diagnosis} {len(differ)} of {len(want)} differ from replay: {differ[:5]}; "
            f"first: got "
            f"{got[differ[0]]}, want {want[differ[0]]}; its records: {shown}"
        )
    # Each record of the new generation once: the crash of the hand-over repeated nothing.
    marks: dict[tuple[str, int], bytes] = {}
    for record in records:
        e = orjson.loads(record.value())
        if e.get("generation") == 2:
            mark = (e["player_id"], e["version"])
            assert mark not in marks, f"{mark} published twice"
            marks[mark] = record.value()
            if "retracted" not in e and "correction" in e:
                assert e["correction"]["reason"] == "cheater banned; GDPR request"
    # The re-rate on the audit topic once, though its hand-over ran twice.
    assert [(r["kind"], r["generation"], r["shadow"]) for r in recorded] == [
        ("rerate", 2, new["SKILLSTREAM_TOPIC_RATING_CHANGED"])
    ]
    # The cache's history reads as re-rated: each match once, at its corrected value, and no
    # voided match (issue 45).
    assert histories == {}, f"cached histories differ from replay: {sorted(histories.items())[:3]}"
    if change != "corrections":
        return
    assert any("retracted" in orjson.loads(r.value()) for r in records)
    adjusted = {k: v for k, v in got.items() if k[1].startswith("adj-")}
    assert len(adjusted) == 3 and adjusted[("p020", "adj-0")][0] == 1700.0
    refunds = [
        e
        for e in (orjson.loads(r.value()) for r in records)
        if e.get("generation") == 2 and e.get("outcome") == "refunded"
    ]
    assert {e["refund"]["banned"] for e in refunds} == {banned}
    assert any(e["player_id"] != banned for e in refunds)
    assert cached == {}, f"cache differs from replay for {sorted(cached)[:5]}"
    assert erased_in_cache == [], erased_in_cache
    assert shadow_and_tables == [], shadow_and_tables


def cached_ratings(
    env: dict[str, str], want: dict[tuple[str, str], tuple[Any, ...]], got: dict[Any, Any]
) -> dict[str, tuple[Any, Any]]:
    """Players whose cached rating is not their last replayed one, once the cache converged
    (or after 60 s)."""
    final: dict[str, tuple[int, float]] = {}
    for (player, _match), fields in want.items():
        games, rating = fields[4], fields[0]
        # An adjustment adds no game: of equal games, the later applied (want is in order).
        if player not in final or final[player][0] <= games:
            final[player] = (games, rating)
    client = redis.Redis.from_url(env["REDIS_URL"], decode_responses=True)
    layout = KeyLayout(env["SKILLSTREAM_CACHE_PREFIX"])
    deadline = time.monotonic() + 60.0
    wrong: dict[str, tuple[Any, Any]] = {}
    while time.monotonic() < deadline:
        wrong = {}
        for player, (_games, rating) in final.items():
            stored = client.hget(layout.player_keys("1v1", player)[0], "rating")
            if stored is None or float(stored) != rating:
                wrong[player] = (stored, rating)
        if not wrong:
            break
        time.sleep(0.5)
    return wrong


def cached_histories(
    env: dict[str, str], want: dict[tuple[str, str], tuple[Any, ...]]
) -> dict[str, tuple[Any, Any]]:
    """Players whose cached history (the matches it counts, with their ratings) is not the
    last SKILLSTREAM_CACHE_HISTORY_LENGTH (20) changes of their replay, or lists a match
    twice."""
    replayed: dict[str, list[tuple[str, float]]] = {}
    for (player, match), fields in want.items():  # in the order replay applied them
        replayed.setdefault(player, []).append((match, fields[0]))
    client = redis.Redis.from_url(env["REDIS_URL"])
    layout = KeyLayout(env["SKILLSTREAM_CACHE_PREFIX"])
    wrong: dict[str, tuple[Any, Any]] = {}
    for player, changes in replayed.items():
        listed = counted(decode_history(client.lrange(layout.history("1v1", player), 0, -1)))
        shown = [(e.match_id, e.rating) for e in listed]
        if len(shown) != len({m for m, _ in shown}) or set(shown) != set(changes[-20:]):
            wrong[player] = (shown, changes[-20:])
    return wrong


def erased_keys(env: dict[str, str]) -> list[str]:
    """Cache keys that name the erased id (after the cut-over's removal reached the cache)."""
    client = redis.Redis.from_url(env["REDIS_URL"], decode_responses=True)
    prefix = env["SKILLSTREAM_CACHE_PREFIX"]
    deadline = time.monotonic() + 30.0
    found: list[str] = []
    while time.monotonic() < deadline:
        found = [k for k in client.scan_iter(f"*{prefix}*") if k.endswith(f":{ERASED}")]
        boards = [
            k for k in client.scan_iter(f"*{prefix}*:by-*") if client.zscore(k, ERASED) is not None
        ]
        found += boards
        if not found:
            break
        time.sleep(0.5)
    return found


def topics_naming(servers: str, env: dict[str, str], needle: str) -> list[str]:
    """The new deployment's topics (its output, commands and changelogs) holding ``needle``."""
    from confluent_kafka import Consumer, TopicPartition
    from confluent_kafka.admin import AdminClient

    app = env["SKILLSTREAM_APP_ID"]
    names = [
        t
        for t in AdminClient({"bootstrap.servers": servers}).list_topics(timeout=10).topics
        if t.startswith(app) or t == env["SKILLSTREAM_TOPIC_RATING_CHANGED"]
    ]
    consumer = Consumer(
        {"bootstrap.servers": servers, "group.id": "scan", "enable.auto.commit": False}
    )
    found = []
    try:
        for name in names:
            metadata = consumer.list_topics(name, timeout=10).topics[name]
            for p in metadata.partitions:
                # Up to the end as of now: the command topics never go quiet (ticks).
                _, high = consumer.get_watermark_offsets(TopicPartition(name, p), timeout=10)
                if high <= 0:
                    continue
                consumer.assign([TopicPartition(name, p, 0)])
                deadline = time.monotonic() + 30.0
                while time.monotonic() < deadline:
                    message = consumer.poll(0.2)
                    if message is None or message.error() is not None:
                        continue
                    blob = (message.key() or b"") + (message.value() or b"")
                    if f'"{needle}"'.encode() in blob or needle.encode() == message.key():
                        found.append(name)
                    if (message.offset() or 0) + 1 >= high:
                        break
    finally:
        consumer.close()
    return sorted(set(found))


def dead_letters(servers: str, topic: str) -> list[str]:
    """Each dead letter's reason header and the first bytes of its value (diagnosis)."""
    reader = Reader(servers, topic, 4)
    try:
        found = reader.read_until(lambda _: False, timeout=3.0)
    finally:
        reader.close()
    return [f"{dict(r.headers() or [])} {r.value()[:120]!r}" for r in found]
