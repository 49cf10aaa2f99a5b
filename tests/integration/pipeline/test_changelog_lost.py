"""A table whose changelog comes back with less than the committed offsets imply is found before
anything is rated from it, and brought up by reading its inputs again (stream/pipeline/
checkpoints.py), on the real broker: the ratings changelog deleted and made again while the
worker was down, as an operator's mistake or a broker that lost the topic would leave it.

Before the checkpoints, the next worker restored an empty ratings table under committed
offsets and rated the second wave from nothing: every player's rating off the replay.
"""

from __future__ import annotations

import asyncio

import orjson
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.admin import AIOKafkaAdminClient

from stream.chaos.soakplan import MODE, SoakMatch
from stream.chaos.workerfleet import ChaosWorker, harness_env
from stream.config.modes import Modes
from stream.config.settings import Settings
from stream.history import HistoryMatch
from stream.local.stack import LocalStack
from stream.offline.replayer import Replayer, in_play_order
from stream.pipeline.topics import ensure_topics

T0 = 1_780_000_000.0
PLAYERS = [f"p{i}" for i in range(8)]


async def test_a_ratings_changelog_lost_while_the_worker_was_down_is_read_again(
    stack: LocalStack,
) -> None:
    env = harness_env(
        stack, "lostlog", session_timeout=4.0, store="memory", partitions=2, cache_writer="off"
    )
    settings = Settings.from_env(env)
    await ensure_topics(settings)
    first = [_match(f"a{k}", PLAYERS[2 * k], PLAYERS[2 * k + 1], T0) for k in range(4)]
    second = [_match(f"b{k}", PLAYERS[k], PLAYERS[7 - k], T0 + 600) for k in range(4)]
    worker = ChaosWorker(env, "lost-log-1")
    worker.launch()
    try:
        await worker.ready(60.0)
        await _publish(stack.bootstrap_servers, settings, first)
        assert len(await _ratings(stack.bootstrap_servers, settings, 8)) == 8, worker.tail(40)
        await asyncio.to_thread(worker.stop)  # flushes and commits on its way out
    finally:
        worker.kill()
    # The ratings changelog is gone, and made again empty (the next worker creates it).
    admin = AIOKafkaAdminClient(bootstrap_servers=stack.bootstrap_servers)
    await admin.start()
    try:
        await admin.delete_topics([settings.ratings_changelog_topic])
    finally:
        await admin.close()
    again = ChaosWorker(env, "lost-log-2")
    again.launch()
    try:
        await again.ready(60.0)
        await _publish(stack.bootstrap_servers, settings, second)
        events = await _ratings(stack.bootstrap_servers, settings, 16)
        log = again.tail(400)
    finally:
        again.kill()
    last: dict[str, dict[str, object]] = {}
    for event in events:
        player = str(event["player_id"])
        if player not in last or int(str(event["version"])) > int(str(last[player]["version"])):
            last[player] = event
    replayer = Replayer(Modes())
    for match, fates in in_play_order([_history(m) for m in first + second], replayer):
        replayer.apply_settled(match, fates)
    replayed = replayer.tables[MODE]
    assert {p: (e["rating"], e["games"]) for p, e in last.items()} == {
        p: (s.rating, s.games) for p, s in replayed.items()
    }
    # Found, said and read again: not by chance.
    assert "restored behind the committed offsets" in log and "came back empty" in log, log


def _history(match: SoakMatch) -> HistoryMatch:
    return HistoryMatch(
        0,
        match.match_id,
        MODE,
        match.finished_at,
        match.teams,
        match.ranks,
        None,
        frozenset(),
        match.started_at,
    )


def _match(match_id: str, a: str, b: str, at: float) -> SoakMatch:
    return SoakMatch(match_id, ((a,), (b,)), (0, 1), at, at + 60)


async def _publish(servers: str, settings: Settings, matches: list[SoakMatch]) -> None:
    producer = AIOKafkaProducer(bootstrap_servers=servers)
    await producer.start()
    try:
        for match in matches:
            start, finish = match.events()
            key = match.match_id.encode()
            await producer.send_and_wait(
                settings.topics.match_started, orjson.dumps(start), key=key
            )
            await producer.send_and_wait(
                settings.topics.match_finished, orjson.dumps(finish), key=key
            )
    finally:
        await producer.stop()


async def _ratings(servers: str, settings: Settings, count: int) -> list[dict[str, object]]:
    """The rating-changed events, once ``count`` distinct (player, match) pairs are in (60 s)."""
    consumer = AIOKafkaConsumer(bootstrap_servers=servers, enable_auto_commit=False)
    await consumer.start()
    try:
        tps = [
            TopicPartition(settings.topics.rating_changed, p) for p in range(settings.partitions)
        ]
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        events: list[dict[str, object]] = []
        deadline = asyncio.get_running_loop().time() + 60.0
        while asyncio.get_running_loop().time() < deadline:
            batches = await consumer.getmany(timeout_ms=500)
            events.extend(orjson.loads(r.value) for rs in batches.values() for r in rs)
            if len({(e["player_id"], e["match_id"]) for e in events}) >= count:
                break
        return events
    finally:
        await consumer.stop()
