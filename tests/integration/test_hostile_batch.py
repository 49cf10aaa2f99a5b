"""Issue 12's proof on the real broker: hostile events of every size and shape in the same
partition and the same batch as valid matches. Every valid match is rated exactly once, every
bad event reaches the dead-letter topic with its reason (cut and marked when it cannot fit),
and the agent never crashes or restarts (its log is read).

The events go to one partition of each input topic and are produced in one flush while the
worker runs, so they arrive in a few large batches mixed together.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from builders import T0, epoch_ms
from confluent_kafka import Producer
from librdkafka_clients import Reader
from pipeline_env import DEAD_LETTERS, FINISHED, RATING_CHANGED, STARTED, worker_env

from stream.config.modes import load_modes
from stream.config.settings import Settings
from stream.deadletters import SOURCE_KEY_SIZE, SOURCE_SIZE, TRUNCATED, record_bytes
from stream.local.stack import LocalStack
from stream.local.workers import WorkerProcess
from stream.pipeline.partitioning import partition_for
from stream.ratings.engine import MatchView, rate_match

PARTITIONS = 2
LIMIT = Settings().kafka.max_request_bytes  # the worker's producer limit (default)
MODES_TOML = '[default]\nunlisted = "reject"\n[modes.1v1]\n'


def finish_event(match_id: str, **over: Any) -> dict[str, Any]:
    return {
        "match_id": match_id,
        "mode": "1v1",
        "finished_at": epoch_ms(T0 + 60),
        "teams": [[f"{match_id}-a"], [f"{match_id}-b"]],
        "ranks": [0, 1],
        **over,
    }


def padded(match_id: str, record_size: int, key: bytes) -> bytes:
    """A finish whose record (key and value, no headers) is exactly ``record_size`` bytes."""
    base = orjson.dumps(finish_event(match_id, pad=""))
    value = base.replace(b'"pad":""', b'"pad":"' + b"x" * (record_size - len(base)) + b'"')
    while record_bytes(key, value, []) > record_size:
        value = value.replace(b'"pad":"x', b'"pad":"', 1)
    return value


def non_finite(match_id: str, field: bytes, literal: bytes = b"1e999") -> bytes:
    """A finish with ``literal`` in place of one numeric field (JSON has no infinity)."""
    event = finish_event(match_id, stats={f"{match_id}-a": {"score": 7, "seconds": 8}})
    text = orjson.dumps(event)
    return text.replace(field, field.split(b":")[0] + b":" + literal, 1)


LONG = "L" * 5000

# (topic, key, value, words the reason must contain)
HOSTILE: list[tuple[str, bytes | None, bytes | None, str]] = [
    # The event: 1,048,000 bytes, under a real broker's limit.
    (FINISHED, b"huge-1", padded("huge-1", 1_048_000, b"huge-1"), "over the limit"),
    # Exactly the producer's limit, and over it (a default Apache Kafka broker takes 1,048,588).
    (FINISHED, b"huge-2", padded("huge-2", LIMIT, b"huge-2"), "over the limit"),
    (FINISHED, b"huge-3", padded("huge-3", LIMIT + 12, b"huge-3"), "over the limit"),
    # Non-finite numbers in every numeric field.
    (FINISHED, b"nf-1", non_finite("nf-1", b'"finished_at":1780000060000'), "not valid JSON"),
    (FINISHED, b"nf-2", non_finite("nf-2", b'"ranks":[0', b"[1e999"), "not valid JSON"),
    (FINISHED, b"nf-3", non_finite("nf-3", b'"score":7'), "not valid JSON"),
    (FINISHED, b"nf-4", non_finite("nf-4", b'"seconds":8', b"-1e999"), "not valid JSON"),
    (FINISHED, b"nf-5", non_finite("nf-5", b'"score":7', b"NaN"), "not valid JSON"),
    (FINISHED, b"nf-6", non_finite("nf-6", b'"score":7', b"1e308"), "stats"),
    (
        STARTED,
        b"nf-7",
        b'{"match_id":"nf-7","mode":"1v1","started_at":1e999,"teams":[["a"],["b"]]}',
        "not valid JSON",
    ),
    (FINISHED, b"nf-8", orjson.dumps(finish_event("nf-8", finished_at=1.78e12)), "float"),
    # Ids of thousands of characters: match, player, stats entry, and the key alone.
    (FINISHED, LONG.encode(), orjson.dumps(finish_event(LONG)), "match_id"),
    (FINISHED, b"id-2", orjson.dumps(finish_event("id-2", teams=[[LONG], ["x"]])), "teams[0][0]"),
    (
        FINISHED,
        b"id-3",
        orjson.dumps(finish_event("id-3", stats={LONG: {"score": 1, "seconds": 1}})),
        "stats",
    ),
    (FINISHED, b"k" * 70_000, orjson.dumps(finish_event("id-4")), "over the limit"),
    # Broken bytes.
    (FINISHED, b"raw-1", b"\xff\xfe\x00\x01garbage", "not valid JSON"),
    (FINISHED, b"raw-2", b'{"match_id": "\xff\xfe", "mode": "1v1"}', "not valid JSON"),
    (FINISHED, b"raw-3", b"", "not valid JSON"),
    (FINISHED, b"raw-4", None, "not valid JSON"),
    (STARTED, b"raw-5", b"[1, 2, 3]", "expected a JSON object"),
    # A time before 1973 written as a string (as an integer it was already refused).
    (
        FINISHED,
        b"old-1",
        orjson.dumps(finish_event("old-1", finished_at="1971-01-01T00:00:00Z")),
        "before March 1973",
    ),
]


MATCH_COMMANDS, PLAYER_COMMANDS = "skillstream-match-commands", "skillstream-player-commands"
# Forged messages on the worker's own command topics: (topic, bytes, how many dead letters,
# words of their reasons). A message that is not an array goes whole; in an array each command
# that cannot be carried out goes alone, and the others are carried out.
FORGED_COMMANDS: list[tuple[str, bytes, int, str]] = [
    (MATCH_COMMANDS, b"5", 1, "expected a JSON array of commands"),
    (MATCH_COMMANDS, b'{"snap": 1}', 1, "expected a JSON array of commands"),
    (MATCH_COMMANDS, b"\xff[", 1, "not valid JSON"),
    (MATCH_COMMANDS, b'[["snap"], ["tick", 1], ["bogus", 2], 7]', 3, "malformed command"),
    (PLAYER_COMMANDS, b"null", 1, "expected a JSON array of commands"),
    (PLAYER_COMMANDS, b'[["rate"], ["join", 1], ["cancel", "m", []]]', 2, "malformed command"),
]


def valid_ids(n: int) -> list[str]:
    """Match ids whose home is partition 0, where every hostile event goes too."""
    ids: list[str] = []
    i = 0
    while len(ids) < n:
        if partition_for(f"ok-{i}", PARTITIONS) == 0:
            ids.append(f"ok-{i}")
        i += 1
    return ids


VALID = valid_ids(12)


class Run:
    def __init__(self, env: dict[str, str], worker: WorkerProcess) -> None:
        self.env = env
        self.worker = worker
        servers = env["KAFKA_BOOTSTRAP_SERVERS"]
        # Raised client limits: the test must be able to produce what a real broker accepts.
        self.producer = Producer(
            {"bootstrap.servers": servers, "message.max.bytes": 4_000_000, "linger.ms": 50}
        )
        self.ratings = Reader(servers, RATING_CHANGED, PARTITIONS)
        self.dlq = Reader(servers, DEAD_LETTERS, PARTITIONS)
        # (topic, key, value) -> offset, from the producer's delivery reports
        self.offsets: dict[int, tuple[str, int]] = {}

    def produce(self, index: int, topic: str, key: bytes | None, value: bytes | None) -> None:
        def delivered(error: Any, message: Any) -> None:
            assert error is None, error
            self.offsets[index] = (message.topic(), message.offset())

        self.producer.produce(topic, value, key, partition=0, on_delivery=delivered)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    modes_file = tmp_path_factory.mktemp("modes") / "modes.toml"
    modes_file.write_text(MODES_TOML)
    with LocalStack() as stack:
        data_dir = tmp_path_factory.mktemp("data")
        env = worker_env(stack, partitions=PARTITIONS, modes_file=modes_file, data_dir=data_dir)
        worker = WorkerProcess(env, "hostile")
        try:
            worker.start()
            r = Run(env, worker)
            valid = iter(VALID)
            for i, (topic, key, value, _) in enumerate(HOSTILE):
                # A valid match before every second hostile event, in the same stream.
                if i % 2 == 0:
                    mid = next(valid, None)
                    if mid is not None:
                        start = {
                            "match_id": mid,
                            "mode": "1v1",
                            "started_at": epoch_ms(T0),
                            "teams": [[f"{mid}-a"], [f"{mid}-b"]],
                        }
                        r.producer.produce(STARTED, orjson.dumps(start), mid.encode(), partition=0)
                        finish = orjson.dumps(finish_event(mid, teams=None))
                        r.producer.produce(FINISHED, finish, mid.encode(), partition=0)
                r.produce(i, topic, key, value)
            for j, (topic, value, _, _) in enumerate(FORGED_COMMANDS):
                r.produce(len(HOSTILE) + j, topic, None, value)
            for mid in valid:
                r.producer.produce(FINISHED, orjson.dumps(finish_event(mid)), mid.encode(), 0)
            assert r.producer.flush(60) == 0
            assert len(r.offsets) == len(HOSTILE) + len(FORGED_COMMANDS)
            yield r
            r.ratings.close()
            r.dlq.close()
        finally:
            worker.cleanup()


def test_every_valid_match_is_rated_exactly_once(run: Run) -> None:
    expected = {(f"{mid}-{side}", mid) for mid in VALID for side in "ab"}

    def seen(records: list[Any]) -> set[tuple[str, str]]:
        events = [orjson.loads(r.value()) for r in records]
        return {(e["player_id"], e["match_id"]) for e in events}

    records = run.ratings.read_until(lambda r: expected <= seen(r), timeout=90)
    assert seen(records) == expected
    # Exactly once: no (player, match) twice, and the engine's numbers.
    assert len(records) == len(expected)
    modes = load_modes(Path(run.env["SKILLSTREAM_MODES_FILE"]))
    for mid in VALID:
        teams = [[f"{mid}-a"], [f"{mid}-b"]]
        match = MatchView((tuple(teams[0]), tuple(teams[1])), (0, 1), epoch_ms(T0 + 60) / 1000)
        want = {p: u.state.rating for p, u in rate_match(modes.get("1v1"), match, {}).items()}
        got = {
            e["player_id"]: e["rating"]
            for e in (orjson.loads(r.value()) for r in records)
            if e["match_id"] == mid
        }
        assert got == want


def test_every_hostile_event_is_dead_lettered_with_its_reason(run: Run) -> None:
    # How many letters each input makes: one per hostile event, one per forged command that
    # cannot be carried out. Reading stops once all are in (the letters of one packed message
    # can arrive in separate fetches).
    wanted = Counter({run.offsets[i]: 1 for i in range(len(HOSTILE))})
    for j, (_, _, count, _) in enumerate(FORGED_COMMANDS):
        if count:
            wanted[run.offsets[len(HOSTILE) + j]] = count

    def origins(records: list[Any]) -> Counter[tuple[str, int]]:
        found: Counter[tuple[str, int]] = Counter()
        for m in records:
            h = dict(m.headers() or [])
            found[
                (h["skillstream.source.topic"].decode(), int(h["skillstream.source.offset"]))
            ] += 1
        return found

    def complete(records: list[Any]) -> bool:
        found = origins(records)
        return all(found[where] >= n for where, n in wanted.items())

    records = run.dlq.read_until(complete, timeout=90)
    by_origin: dict[tuple[str, int], list[Any]] = {}
    for m in records:
        h = dict(m.headers() or [])
        where = (h["skillstream.source.topic"].decode(), int(h["skillstream.source.offset"]))
        by_origin.setdefault(where, []).append(m)
    for i, (topic, key, value, words) in enumerate(HOSTILE):
        letters = by_origin.get(run.offsets[i])
        assert letters, f"hostile event {i} ({(key or b'')[:20]!r}) was not dead-lettered"
        (letter,) = letters  # no worker crash: nothing redone, nothing dead-lettered twice
        headers = dict(letter.headers() or [])
        assert headers["skillstream.source.topic"].decode() == topic
        assert words in headers["skillstream.error.reason"].decode(), (i, headers)
        if TRUNCATED in headers:
            # Cut to fit: a prefix of the original, with the original sizes.
            assert int(headers[SOURCE_SIZE]) == len(value or b"")
            assert int(headers[SOURCE_KEY_SIZE]) == len(key or b"")
            assert (value or b"").startswith(letter.value() or b"")
            assert (key or b"").startswith(letter.key() or b"")
        else:
            assert letter.value() == value and letter.key() == key
    # The ones over the producer's limit with their headers had to be cut; the others not.
    cut = {
        i
        for i in range(len(HOSTILE))
        if TRUNCATED in dict(by_origin[run.offsets[i]][0].headers() or [])
    }
    assert cut == {1, 2}
    # Forged commands: each one that cannot be carried out, alone.
    for j, (_, value, count, words) in enumerate(FORGED_COMMANDS):
        letters = by_origin.get(run.offsets[len(HOSTILE) + j], [])
        assert len(letters) == count, (value, [m.value() for m in letters])
        for letter in letters:
            assert words in dict(letter.headers() or [])["skillstream.error.reason"].decode()
    # Nothing else went there.
    assert len(records) == len(HOSTILE) + sum(c for _, _, c, _ in FORGED_COMMANDS)


def test_the_agents_never_crashed_or_restarted(run: Run) -> None:
    # Runs last: by now every batch of the run has been handled.
    run.ratings.read_until(lambda r: len(r) >= 2 * len(VALID), timeout=60)
    log = run.worker.output()
    assert run.worker.process is not None and run.worker.process.poll() is None
    # A forged command is refused as malformed, with its reason and no traceback: a traceback
    # would mean an unexpected error ("internal error").
    assert log.count("Traceback") == 0
    for sign in ("Crashed reason", "Restarting", "ProducerSendError", "to redo", "failed:"):
        assert sign not in log, f"{sign!r} in the worker's log:\n{log[-3000:]}"
