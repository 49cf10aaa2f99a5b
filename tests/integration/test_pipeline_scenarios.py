"""Every rule of the live pipeline against the real broker: one worker process on Tansu, the
fleet's events produced and the outputs read with librdkafka (confluent-kafka).

All scenarios share one worker and run side by side with their own players and matches, in
two phases: phase 1 publishes everything that must be settled before event time moves on;
phase 2 pushes every partition's event time past the grace period, which abandons the match
left pending by a newer start and dead-letters the finish whose start never came.
"""

from __future__ import annotations

import math
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from builders import T0, epoch_ms
from librdkafka_clients import Reader, fleet_producer
from pipeline_env import FINISHED, STARTED, worker_env
from prometheus_client.parser import text_string_to_metric_families

from stream.config.modes import Modes, load_modes
from stream.local.stack import LocalStack, free_port
from stream.local.workers import WorkerProcess
from stream.pipeline.partitioning import partition_for
from stream.quality import PredictionQuality
from stream.ratings.engine import MatchView, rate_match

PARTITIONS = 4
FIN = T0 + 60  # when phase-1 matches finish
PUSHED = T0 + 1000  # event time after phase 2: past every grace period

MODES_TOML = """
[default]
unlisted = "reject"

# A long grace period: phase 1 must not abandon anything however slowly the worker starts.
[default.pending]
grace_seconds = 600

[modes.1v1]
[modes.2v2]
[modes.ffa]

[modes.casual.pending]
quit_policy = "normal"

[modes.quick.pending]
timeout_seconds = 5
"""


def start(match_id: str, teams: list[list[str]], at: float, mode: str = "1v1") -> bytes:
    event = {"match_id": match_id, "mode": mode, "started_at": epoch_ms(at), "teams": teams}
    return orjson.dumps(event)


def finish(match_id: str, ranks: list[int], at: float, mode: str = "1v1", **extra: Any) -> bytes:
    event = {
        "match_id": match_id,
        "mode": mode,
        "finished_at": epoch_ms(at),
        "ranks": ranks,
        **extra,
    }
    return orjson.dumps(event)


class Fleet:
    def __init__(self, env: dict[str, str], workers: list[WorkerProcess]) -> None:
        self.env = env
        self.workers = workers  # the running one last
        servers = env["KAFKA_BOOTSTRAP_SERVERS"]
        self.producer = fleet_producer(servers)
        self.ratings = Reader(servers, env["SKILLSTREAM_TOPIC_RATING_CHANGED"], PARTITIONS)
        self.dlq = Reader(servers, env["SKILLSTREAM_TOPIC_DLQ"], PARTITIONS)
        self.modes: Modes = load_modes(Path(env["SKILLSTREAM_MODES_FILE"]))

    def send(self, topic: str, key: str | None, value: bytes, partition: int | None = None) -> None:
        name = self.env[
            "SKILLSTREAM_TOPIC_MATCH_STARTED"
            if topic == STARTED
            else "SKILLSTREAM_TOPIC_MATCH_FINISHED"
        ]
        kwargs: dict[str, Any] = {} if partition is None else {"partition": partition}
        self.producer.produce(name, value, None if key is None else key.encode(), **kwargs)

    def flush(self) -> None:
        assert self.producer.flush(30) == 0

    def events(self) -> list[dict[str, Any]]:
        return [orjson.loads(m.value()) for m in self.ratings.records]

    def outcomes(self, match_id: str) -> dict[str, str]:
        return {e["player_id"]: e["outcome"] for e in self.events() if e["match_id"] == match_id}

    def wait_for(self, pairs: set[tuple[str, str]], timeout: float = 60.0) -> None:
        """Until every (player, match) in ``pairs`` has a rating-changed."""

        def done(records: list[Any]) -> bool:
            seen = {
                (e["player_id"], e["match_id"])
                for e in map(orjson.loads, (r.value() for r in records))
            }
            return pairs <= seen

        self.ratings.read_until(done, timeout)
        missing = pairs - {(e["player_id"], e["match_id"]) for e in self.events()}
        assert not missing, f"no rating-changed for {sorted(missing)}"

    def expected(
        self, mode: str, teams: list[list[str]], ranks: list[int], at: float
    ) -> dict[str, float]:
        match = MatchView(tuple(tuple(t) for t in teams), tuple(ranks), epoch_ms(at) / 1000)
        return {
            pid: u.state.rating for pid, u in rate_match(self.modes.get(mode), match, {}).items()
        }


@pytest.fixture(scope="module", params=["memory", "rocksdb"])
def fleet(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Fleet]:
    """Every scenario once per table store."""
    modes_file = tmp_path_factory.mktemp("modes") / "modes.toml"
    modes_file.write_text(MODES_TOML)
    with LocalStack() as stack:
        data_dir = tmp_path_factory.mktemp("data")
        env = {
            **worker_env(stack, partitions=PARTITIONS, modes_file=modes_file, data_dir=data_dir),
            "SKILLSTREAM_STORE": request.param,
            "SKILLSTREAM_MAX_PLAYERS": "8",
            "SKILLSTREAM_MAX_EVENT_BYTES": "4096",
            "SKILLSTREAM_WEB_PORT": str(free_port()),
        }
        workers = [WorkerProcess(env)]
        try:
            workers[0].start()
            f = Fleet(env, workers)
            publish_phase_one(f)
            yield f
            f.ratings.consumer.close()
            f.dlq.consumer.close()
        finally:
            for worker in workers:
                worker.cleanup()


# Bad input: (topic, key, bytes, words the reason must contain). Each goes to the DLQ as is.
BAD_INPUT: list[tuple[str, str | None, bytes, str]] = [
    (STARTED, "bad-json", b"{not json", "not valid JSON"),
    (FINISHED, "bad-missing", b'{"match_id": "bad-missing", "mode": "1v1"}', "finished_at"),
    (
        STARTED,
        "bad-type",
        b'{"match_id": "bad-type", "mode": "1v1", "started_at": true, "teams": [["x"], ["y"]]}',
        "started_at",
    ),
    (STARTED, "bad-both", start("bad-both", [["bb1"], ["bb1"]], T0), "also in teams[0]"),
    (STARTED, "bad-empty", start("bad-empty", [[], ["be1"]], T0), "teams[0]"),
    (
        FINISHED,
        "bad-inf",
        (
            b'{"match_id": "bad-inf", "mode": "1v1", "finished_at": 1780000000000,'
            b' "teams": [["x"], ["y"]], "ranks": [0, 1],'
            b' "stats": {"x": {"score": Infinity, "seconds": 1}}}'
        ),
        "not valid JSON",
    ),
    (
        STARTED,
        "bad-mode",
        start("bad-mode", [["bm1"], ["bm2"]], T0, mode="no-such-mode"),
        "not in the modes file",
    ),
    (
        STARTED,
        "bad-big",
        orjson.dumps(
            {
                "match_id": "bad-big",
                "mode": "1v1",
                "started_at": epoch_ms(T0),
                "teams": [["bg1"], ["bg2"]],
                "pad": "x" * 5000,
            }
        ),
        "bytes",
    ),
    (
        STARTED,
        "bad-crowd",
        start(
            "bad-crowd", [[f"c{i}" for i in range(5)], [f"d{i}" for i in range(5)]], T0, mode="2v2"
        ),
        "players",
    ),
    (FINISHED, "bad-ranks", finish("bad-ranks", [0], T0, teams=[["br1"], ["br2"]]), "ranks"),
    (STARTED, None, start("bad-nokey", [["bn1"], ["bn2"]], T0) + b"]", "not valid JSON"),
]


def publish_phase_one(f: Fleet) -> None:
    # 1v1, 2v2 and free-for-all with their finish 10 minutes after the start.
    f.send(STARTED, "duel", start("duel", [["d-a"], ["d-b"]], T0))
    f.send(FINISHED, "duel", finish("duel", [0, 1], FIN))
    teams = [["t-a", "t-b"], ["t-c", "t-d"]]
    f.send(STARTED, "team", start("team", teams, T0, mode="2v2"))
    f.send(FINISHED, "team", finish("team", [1, 0], FIN, mode="2v2"))
    ffa = [["f-a"], ["f-b"], ["f-c"]]
    f.send(STARTED, "ffa", start("ffa", ffa, T0, mode="ffa"))
    f.send(FINISHED, "ffa", finish("ffa", [2, 0, 1], FIN, mode="ffa"))
    # A draw.
    f.send(STARTED, "draw", start("draw", [["r-a"], ["r-b"]], T0))
    f.send(FINISHED, "draw", finish("draw", [0, 0], FIN))
    # Quits: the INVERSUS policy (cancel) and the normal policy.
    f.send(STARTED, "quit", start("quit", [["q-a"], ["q-b"]], T0))
    f.send(FINISHED, "quit", finish("quit", [1, 0], T0 + 60, quitters=["q-a"]))
    f.send(STARTED, "quit-normal", start("quit-normal", [["n-a"], ["n-b"]], T0, mode="casual"))
    f.send(
        FINISHED,
        "quit-normal",
        finish("quit-normal", [1, 0], T0 + 60, mode="casual", quitters=["n-a"]),
    )
    # Every event twice, and the finish (with its teams) before the start.
    for _ in range(2):
        f.send(FINISHED, "dup", finish("dup", [0, 1], FIN, teams=[["u-a"], ["u-b"]]))
        f.send(STARTED, "dup", start("dup", [["u-a"], ["u-b"]], T0))
    # A finish without teams before its start: it waits for the start.
    f.send(FINISHED, "late-start", finish("late-start", [1, 0], FIN))
    f.send(STARTED, "late-start", start("late-start", [["l-a"], ["l-b"]], T0))
    # The grace-period race: g-a starts a newer match, but the older one's result arrives
    # within the grace period, so it is rated normally.
    f.send(STARTED, "race-1", start("race-1", [["g-a"], ["g-b"]], T0))
    f.send(STARTED, "race-2", start("race-2", [["g-a"], ["g-c"]], T0 + 100))
    f.send(FINISHED, "race-1", finish("race-1", [1, 0], T0 + 130))
    # Abandonment: a-a starts a newer match and the older one never finishes.
    f.send(STARTED, "old", start("old", [["a-a"], ["a-b"]], T0))
    f.send(STARTED, "new", start("new", [["a-a"], ["a-c"]], T0 + 100))
    # Timeout: mode quick times out after 5 s of event time; the tick moves it with the clock.
    f.send(STARTED, "stuck", start("stuck", [["s-a"], ["s-b"]], T0, mode="quick"))
    # A finish without teams whose start never comes.
    f.send(FINISHED, "orphan", finish("orphan", [0, 1], T0))
    # Bad input of every kind, interleaved with a valid match on the same partitions.
    for topic, key, value, _ in BAD_INPUT:
        f.send(topic, key, value)
    f.send(STARTED, "between", start("between", [["w-a"], ["w-b"]], T0))
    f.send(FINISHED, "between", finish("between", [0, 1], FIN))
    f.flush()


def push_event_time(f: Fleet) -> None:
    """A started match at PUSHED on every partition moves its event time past the grace."""
    homes: set[int] = set()
    i = 0
    while len(homes) < PARTITIONS:
        mid = f"clock-{i}"
        home = partition_for(mid, PARTITIONS)
        if home not in homes:
            homes.add(home)
            f.send(STARTED, mid, start(mid, [[f"k{i}a"], [f"k{i}b"]], PUSHED))
        i += 1
    f.flush()


@pytest.mark.parametrize(
    ("match_id", "mode", "teams", "ranks"),
    [
        ("duel", "1v1", [["d-a"], ["d-b"]], [0, 1]),
        ("team", "2v2", [["t-a", "t-b"], ["t-c", "t-d"]], [1, 0]),
        ("ffa", "ffa", [["f-a"], ["f-b"], ["f-c"]], [2, 0, 1]),
        ("draw", "1v1", [["r-a"], ["r-b"]], [0, 0]),
        ("between", "1v1", [["w-a"], ["w-b"]], [0, 1]),
    ],
)
def test_matches_are_rated_exactly_as_the_engine_rates_them(
    fleet: Fleet, match_id: str, mode: str, teams: list[list[str]], ranks: list[int]
) -> None:
    players = {pid for team in teams for pid in team}
    fleet.wait_for({(pid, match_id) for pid in players})
    expected = fleet.expected(mode, teams, ranks, FIN)
    got = {e["player_id"]: e for e in fleet.events() if e["match_id"] == match_id}
    assert {pid: e["rating"] for pid, e in got.items()} == expected
    for e in got.values():
        assert e["mode"] == mode and e["version"] == 1 and e["games"] == 1
    if match_id == "draw":
        assert {e["outcome"] for e in got.values()} == {"draw"}


def test_a_quitter_loses_and_the_opponents_match_is_cancelled(fleet: Fleet) -> None:
    fleet.wait_for({("q-a", "quit"), ("n-a", "quit-normal"), ("n-b", "quit-normal")})
    assert fleet.outcomes("quit") == {"q-a": "loss"}
    assert fleet.outcomes("quit-normal") == {"n-a": "loss", "n-b": "win"}


def test_duplicates_and_a_finish_before_its_start_are_rated_once(fleet: Fleet) -> None:
    fleet.wait_for({("u-a", "dup"), ("u-b", "dup"), ("l-a", "late-start"), ("l-b", "late-start")})
    dup = [(e["player_id"], e["version"]) for e in fleet.events() if e["match_id"] == "dup"]
    assert sorted(dup) == [("u-a", 1), ("u-b", 1)]
    assert fleet.outcomes("late-start") == {"l-a": "loss", "l-b": "win"}


def test_a_result_within_the_grace_period_is_rated_normally(fleet: Fleet) -> None:
    fleet.wait_for({("g-a", "race-1"), ("g-b", "race-1")})
    assert fleet.outcomes("race-1") == {"g-a": "loss", "g-b": "win"}


def test_a_match_without_a_finish_times_out(fleet: Fleet) -> None:
    fleet.wait_for({("s-a", "stuck"), ("s-b", "stuck")}, timeout=30.0)
    assert fleet.outcomes("stuck") == {"s-a": "timeout", "s-b": "timeout"}


def test_every_kind_of_bad_input_is_dead_lettered_with_its_bytes(fleet: Fleet) -> None:
    records = fleet.dlq.read_until(lambda r: len(r) >= len(BAD_INPUT))
    by_value = {m.value(): m for m in records}
    for topic, key, value, reason in BAD_INPUT:
        assert value in by_value, f"{key} was not dead-lettered"
        message = by_value[value]
        headers = {k: v.decode() for k, v in message.headers() or []}
        assert reason in headers["skillstream.error.reason"], (key, headers)
        assert headers["skillstream.source.topic"] == topic
        assert int(headers["skillstream.source.offset"]) >= 0
        assert message.key() == (None if key is None else key.encode())
    # Nothing from the bad events was rated.
    assert not {e["match_id"] for e in fleet.events()} & {k for _, k, _, _ in BAD_INPUT}


def test_moving_event_time_abandons_the_older_match_and_drops_the_orphan(fleet: Fleet) -> None:
    # Phase 2: only once phase 1 has settled, or the push would race the grace-period test.
    fleet.wait_for({("g-a", "race-1"), ("w-a", "between")})
    assert "old" not in {e["match_id"] for e in fleet.events()}
    push_event_time(fleet)
    fleet.wait_for({("a-a", "old")})
    assert fleet.outcomes("old") == {"a-a": "abandoned"}
    records = fleet.dlq.read_until(
        lambda r: any(b'"orphan"' in (m.value() or b"") for m in r), timeout=30.0
    )
    (orphan,) = [m for m in records if b'"orphan"' in (m.value() or b"")]
    reason = dict(orphan.headers() or [])["skillstream.error.reason"].decode()
    assert "no match-started arrived" in reason
    # The newer match goes ahead once the older one is settled.
    fleet.send(FINISHED, "new", finish("new", [0, 1], PUSHED + 60))
    fleet.flush()
    fleet.wait_for({("a-a", "new"), ("a-c", "new")})
    assert fleet.outcomes("new") == {"a-a": "win", "a-c": "loss"}
    by_player = {e["player_id"]: e for e in fleet.events() if e["match_id"] == "new"}
    assert by_player["a-a"]["version"] == 2 and by_player["a-a"]["games"] == 2


def scrape(env: dict[str, str], path: str) -> tuple[int, bytes]:
    url = f"http://127.0.0.1:{env['SKILLSTREAM_WEB_PORT']}{path}"
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def samples(text: bytes) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(text.decode())
        for s in family.samples
    }


def test_the_worker_serves_its_metrics_and_readiness(fleet: Fleet) -> None:
    # Runs before the restart test: one worker process has done everything so far.
    fleet.wait_for({("d-a", "duel"), ("a-a", "new")})
    status, body = scrape(fleet.env, "/ready")
    assert status == 200, body
    assert orjson.loads(body)["ready"] is True
    assert scrape(fleet.env, "/health")[0] == 200

    def counts() -> tuple[dict[str, float], dict[str, int]]:
        fleet.ratings.read_until(lambda records: False, timeout=0.5)
        metrics = samples(scrape(fleet.env, "/metrics")[1])
        applied = {
            dict(labels)["outcome"]: value
            for (name, labels), value in metrics.items()
            if name == "skillstream_ratings_applied_total"
        }
        seen: dict[str, int] = {}
        for e in fleet.events():
            seen[e["outcome"]] = seen.get(e["outcome"], 0) + 1
        return applied, seen

    deadline = time.monotonic() + 20
    applied, seen = counts()
    while applied != seen and time.monotonic() < deadline:
        applied, seen = counts()
    # Every rating-changed the analytics side read was counted once, by outcome.
    assert applied == seen
    metrics = samples(scrape(fleet.env, "/metrics")[1])
    dead = sum(v for (n, _), v in metrics.items() if n == "skillstream_dead_lettered_total")
    letters = fleet.dlq.read_until(lambda records: False, timeout=1.0)
    assert dead == len(letters) > 0
    assert metrics[("skillstream_rating_latency_seconds_count", ())] > 0
    assert metrics[("skillstream_ready", ())] == 1
    assert metrics[("skillstream_events_in_total", (("topic", STARTED),))] > 0

    def cache_caught_up() -> bool:
        m = samples(scrape(fleet.env, "/metrics")[1])
        return (
            m[("skillstream_cache_lag_records", ())] == 0
            and m[("skillstream_cache_written_total", ())] > 0
        )

    deadline = time.monotonic() + 20
    while not cache_caught_up() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert cache_caught_up()

    # The prediction-quality gauges score every rating change the cache feed wrote: the
    # figures of the same events read by the analytics side.
    expected = PredictionQuality()
    for event in fleet.events():
        expected.observe_event(event)
    metrics = samples(scrape(fleet.env, "/metrics")[1])
    assert expected.summaries()
    for mode, quality in expected.summaries().items():
        label = (("mode", mode),)
        assert metrics[("skillstream_prediction_observations", label)] == quality.observations
        assert math.isclose(metrics[("skillstream_prediction_log_loss", label)], quality.log_loss)
        assert math.isclose(metrics[("skillstream_prediction_brier", label)], quality.brier)


def test_a_restarted_worker_recovers_its_tables_and_applies_nothing_twice(fleet: Fleet) -> None:
    fleet.wait_for({("d-a", "duel"), ("a-a", "new")})
    fleet.workers[-1].kill()  # SIGKILL: nothing flushed, committed or handed over
    # A restarted worker recovers the tables (changelogs; RocksDB: its files plus the tail)
    # and reads again everything after the last committed offsets.
    fleet.workers.append(WorkerProcess(fleet.env, "restarted").start())
    fleet.send(STARTED, "rematch", start("rematch", [["d-a"], ["d-b"]], FIN + 100))
    fleet.send(FINISHED, "rematch", finish("rematch", [1, 0], FIN + 200))
    fleet.flush()
    fleet.wait_for({("d-a", "rematch"), ("d-b", "rematch")})
    mode = fleet.modes.get("1v1")
    duel = rate_match(mode, MatchView((("d-a",), ("d-b",)), (0, 1), epoch_ms(FIN) / 1000), {})
    states = {pid: update.state for pid, update in duel.items()}
    rematch = MatchView((("d-a",), ("d-b",)), (1, 0), epoch_ms(FIN + 200) / 1000)
    expected = {pid: u.state for pid, u in rate_match(mode, rematch, states).items()}
    got = {e["player_id"]: e for e in fleet.events() if e["match_id"] == "rematch"}
    assert {pid: (e["rating"], e["games"], e["version"]) for pid, e in got.items()} == {
        pid: (state.rating, 2, 2) for pid, state in expected.items()
    }


def test_every_player_and_match_has_exactly_one_rating_changed(fleet: Fleet) -> None:
    # At least once: the SIGKILL above may make the restarted worker send again what its
    # predecessor sent after its last commit, but only as copies of the same event
    # (docs/guarantees.md, "What a crash can interrupt"); never two different ones.
    fleet.wait_for({("a-a", "new")})
    first: dict[tuple[str, str], dict[str, object]] = {}
    for e in fleet.events():
        key = (e["player_id"], e["match_id"])
        assert first.setdefault(key, e) == e, key
    assert first
