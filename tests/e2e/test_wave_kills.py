"""Issue 44's schedule on the real broker, with a worker started as an operator starts one:
only the broker's and Redis's addresses and the deployment's names in its environment, so 8
partitions, the default session timeout, the memory store, and nothing the local stack would
add. Waves of 15 disjoint 1v1 matches among 30 players, each match's start and finish at one
event time, one wave per hour of event time (as far apart as the match side's retention); every
start, then every finish, then half of the finishes again, from librdkafka; the worker
SIGKILLed within half a second of every third wave's publication and a new one started at once,
without waiting for anything. Every wave's ratings come, none twice with different values, and
every player's last rating equals ``skillstream replay`` of the same matches.

Before the changelogs' ends were read whatever the broker (issue 44), this failed on every seed:
the successor restored its tables a flush behind their offsets (stuck waves, or every rating
off the replay). About two minutes on two cores, most of it the group waiting out the killed
member's session.
"""

from __future__ import annotations

import os
import random
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
from librdkafka_clients import Reader, default_producer

from stream.config.modes import Modes
from stream.history import read_history
from stream.local.stack import LocalStack
from stream.local.workers import WorkerProcess
from stream.offline.replayer import Replayer, in_play_order

pytestmark = pytest.mark.slow

PLAYERS, WAVES, MODE = 30, 12, "ranked-1v1"
T0 = datetime(2026, 3, 1, tzinfo=UTC)  # far from the wall clock, as a backlog's
# A wave waits this long for its ratings (the outside check's bound).
WAIT = 120.0


@pytest.fixture
def operator_env(stack: LocalStack) -> Iterator[dict[str, str]]:
    """What an operator gives a worker: the servers and the deployment's names, nothing else
    of skillstream's (none of the developer's SKILLSTREAM_* variables either)."""
    tag = uuid.uuid4().hex[:8]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SKILLSTREAM_")}
    env.update(
        {
            "KAFKA_BOOTSTRAP_SERVERS": stack.bootstrap_servers,
            "REDIS_URL": stack.redis_url,
            "SKILLSTREAM_APP_ID": f"w{tag}",
            "SKILLSTREAM_TOPIC_MATCH_STARTED": f"started-{tag}",
            "SKILLSTREAM_TOPIC_MATCH_FINISHED": f"finished-{tag}",
            "SKILLSTREAM_TOPIC_RATING_CHANGED": f"rating-{tag}",
            "SKILLSTREAM_TOPIC_DLQ": f"dlq-{tag}",
            "SKILLSTREAM_CACHE_PREFIX": f"w{tag}",
        }
    )
    yield env


def test_a_worker_killed_after_every_third_wave_rates_every_wave_as_replay_does(
    operator_env: dict[str, str], tmp_path: Path
) -> None:
    env = operator_env
    workers: list[WorkerProcess] = []

    def launch() -> WorkerProcess:
        worker = WorkerProcess(env, f"waves{len(workers)}")
        workers.append(worker)
        worker.launch()
        return worker

    rng = random.Random(44)
    current = launch()
    current.wait_ready(90.0)  # the topics exist once the first worker made them
    fleet = Fleet(env)
    reader = Reader(env["KAFKA_BOOTSTRAP_SERVERS"], env["SKILLSTREAM_TOPIC_RATING_CHANGED"], 8)
    players = [f"pl{i}" for i in range(PLAYERS)]
    history: list[dict[str, object]] = []
    rated: dict[tuple[str, str], float] = {}
    last: dict[str, dict[str, object]] = {}
    try:
        for w in range(WAVES):
            rng.shuffle(players)
            at = (T0 + timedelta(hours=w)).isoformat().replace("+00:00", "Z")
            wave = [
                (f"w{w}-m{k // 2}", [[players[k]], [players[k + 1]]], rng.random() < 0.55)
                for k in range(0, PLAYERS, 2)
            ]
            history.extend(fleet.publish(wave, at, rng))
            if w % 3 == 2:
                time.sleep(rng.random() * 0.5)  # within half a second of the wave
                current.kill()
                current = launch()  # at once, waiting for nothing
            want = {(m, team[0]) for m, teams, _ in wave for team in teams}
            for record in reader.read_until(_covering(want), WAIT):
                event = orjson.loads(record.value())
                pair = (event["match_id"], event["player_id"])
                assert rated.setdefault(pair, event["rating"]) == event["rating"], f"{pair} twice"
                kept = last.get(event["player_id"])
                if kept is None or int(event["version"]) > int(str(kept["version"])):
                    last[event["player_id"]] = event
            missing = want - set(rated)
            assert not missing, f"wave {w}: {len(missing)} missing, e.g. {sorted(missing)[:3]}"
    finally:
        for worker in workers:
            worker.kill()
        reader.close()
        logs = "".join(w.log_path.read_text(errors="replace") for w in workers)
        for worker in workers:
            worker.cleanup()
    assert "Traceback" not in logs
    path = tmp_path / "history.jsonl"
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in history))
    replayer = Replayer(Modes())
    for match, fates in in_play_order(read_history(path), replayer):
        replayer.apply_settled(match, fates)
    replayed = replayer.tables["ranked-1v1"]
    assert len(last) == PLAYERS
    off = [
        p
        for p, event in last.items()
        if abs(float(str(event["rating"])) - replayed[p].rating) > 1e-6
        or abs(float(str(event["deviation"])) - replayed[p].deviation) > 1e-6
    ]
    assert off == [], f"{len(off)} players off the replay: {off[:3]}"


class Fleet:
    """The game servers: librdkafka's default partitioner (most events off their match's home
    partition, forwarded there), every start, then every finish, then half the finishes again."""

    def __init__(self, env: dict[str, str]) -> None:
        self.producer = default_producer(env["KAFKA_BOOTSTRAP_SERVERS"])
        self.started = env["SKILLSTREAM_TOPIC_MATCH_STARTED"]
        self.finished = env["SKILLSTREAM_TOPIC_MATCH_FINISHED"]

    def publish(
        self, wave: list[tuple[str, list[list[str]], bool]], at: str, rng: random.Random
    ) -> list[dict[str, object]]:
        """Publish the wave at event time ``at``; its history lines (finish events with their
        start)."""
        lines: list[dict[str, object]] = []
        for match_id, teams, _ in wave:
            start = {"match_id": match_id, "mode": MODE, "started_at": at, "teams": teams}
            self.producer.produce(self.started, orjson.dumps(start), match_id)
        assert self.producer.flush(10) == 0
        ends: list[tuple[str, bytes]] = []
        for match_id, teams, first_wins in wave:
            end = {
                "match_id": match_id,
                "mode": MODE,
                "finished_at": at,
                "teams": teams,
                "ranks": [0, 1] if first_wins else [1, 0],
            }
            ends.append((match_id, orjson.dumps(end)))
            lines.append({**end, "started_at": at})
        for match_id, value in ends + ends[: len(ends) // 2]:
            self.producer.produce(self.finished, value, match_id)
        assert self.producer.flush(10) == 0
        return lines


def _covering(want: set[tuple[str, str]]) -> Callable[[list[Any]], bool]:
    """Whether the records read so far rate every (match, player) of ``want``."""
    return lambda records: want <= {_pair(r) for r in records}


def _pair(record: object) -> tuple[str, str]:
    event = orjson.loads(record.value())  # type: ignore[attr-defined]
    return (event["match_id"], event["player_id"])
