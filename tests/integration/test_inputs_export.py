"""`skillstream inputs export` on the real broker: the retained inputs become a history replay
rates as the live pipeline would (starts joined to finishes, times as sent), and what a history
cannot hold is counted. (Inputs that retention has cut are refused: tested in
tests/unit/history/test_retained_inputs.py, since Tansu 0.6.0 closes the connection on DeleteRecords
and keeps every record, so no partition here can start above offset 0.)"""

from __future__ import annotations

import uuid
from pathlib import Path

import orjson
from aiokafka import AIOKafkaProducer
from builders import skillstream
from pipeline_env import create_topics

from stream.config.modes import Modes
from stream.config.settings import Settings
from stream.history import HistoryMatch
from stream.history.retained import read_inputs
from stream.local.stack import LocalStack, environment
from stream.offline.replayer import Replayer, in_play_order

T = 1_780_000_000_000  # epoch ms


def start(match_id: str, at: int, a: str, b: str) -> dict[str, object]:
    """A 1v1 match-started event (``at`` in epoch ms)."""
    return {"match_id": match_id, "mode": "1v1", "started_at": at, "teams": [[a], [b]]}


def finish(
    match_id: str, at: int | str, ranks: list[int], line_up: tuple[str, str] | None = None
) -> dict[str, object]:
    """A 1v1 match-finished event (``at`` in epoch ms or RFC 3339), with its ``line_up`` or
    without teams."""
    event: dict[str, object] = {"match_id": match_id, "mode": "1v1", "finished_at": at}
    if line_up is not None:
        event["teams"] = [[line_up[0]], [line_up[1]]]
    event["ranks"] = ranks
    return event


def played(
    row: int,
    match_id: str,
    at: int,
    line_up: tuple[str, str],
    ranks: tuple[int, int],
    started_at: int | None,
) -> HistoryMatch:
    """A 1v1 match as a history holds it (times in epoch ms, made seconds)."""
    teams = ((line_up[0],), (line_up[1],))
    started = None if started_at is None else started_at / 1000
    return HistoryMatch(row, match_id, "1v1", at / 1000, teams, ranks, None, frozenset(), started)


async def test_the_retained_inputs_replay_as_played(stack: LocalStack, tmp_path: Path) -> None:
    tag = uuid.uuid4().hex[:8]
    started, finished = f"started-{tag}", f"finished-{tag}"
    await create_topics(stack, started, finished, partitions=2)
    env = {
        **environment(stack),
        "SKILLSTREAM_TOPIC_MATCH_STARTED": started,
        "SKILLSTREAM_TOPIC_MATCH_FINISHED": finished,
    }
    sends: list[tuple[str, dict[str, object] | bytes]] = [
        # m1: a finish without teams, which its start gives; an RFC 3339 time with a fraction.
        (started, start("m1", T, "a", "b")),
        (finished, finish("m1", "2026-05-28T20:30:00.5Z", [0, 1])),
        # m2 overlaps m3 for b: started before m1 ended, so the order of play matters.
        (started, start("m2", T + 600_000, "b", "c")),
        (started, start("m3", T + 900_000, "c", "a")),
        (finished, finish("m3", T + 1_000_000, [1, 0], ("c", "a"))),
        (finished, finish("m2", T + 1_100_000, [0, 0], ("b", "c"))),
        # m4: a finish without a start, with its line-up; m5: a start that never finished.
        (finished, finish("m4", T + 2_000_000, [1, 0], ("a", "d"))),
        (started, start("m5", T + 2_100_000, "d", "b")),
        # A repeated finish and an event no worker accepts.
        (finished, finish("m3", T + 1_000_000, [0, 1], ("c", "a"))),
        (finished, b'{"match_id": "m9"'),
    ]
    producer = AIOKafkaProducer(bootstrap_servers=stack.bootstrap_servers)
    await producer.start()
    try:
        for topic, value in sends:
            raw = value if isinstance(value, bytes) else orjson.dumps(value)
            await producer.send_and_wait(topic, raw, key=b"m-key")
    finally:
        await producer.stop()
    out = tmp_path / "h.jsonl"
    done = skillstream(env, "inputs", "export", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        f"skillstream inputs export: wrote 4 matches to {out}",
        "skillstream inputs export: 4 finished matches from 10 input records",
        "skillstream inputs export: 1 started and never finished (live settles them; left out)",
        "skillstream inputs export: 1 unreadable events (the workers dead-letter them; left out)",
        "skillstream inputs export: 1 repeated finishes (live rates the first; left out)",
    ]
    # The reader counts what it reads against the end offsets, for the terminal's bar.
    counted: list[tuple[int, int]] = []
    await read_inputs(Settings.from_env(env), lambda done, total: counted.append((done, total)))
    assert counted[-1] == (10, 10) and all(done <= total for done, total in counted)
    lines = [orjson.loads(line) for line in out.read_text().splitlines()]
    assert lines[0]["teams"] == [["a"], ["b"]] and lines[0]["started_at"] == T
    assert lines[0]["finished_at"] == "2026-05-28T20:30:00.5Z"
    # What replay makes of the export is what it makes of the same matches given by hand.
    replayed = skillstream(env, "replay", str(out), "--in-play-order")
    assert replayed.returncode == 0, replayed.stderr
    by_hand = [
        played(0, "m1", T + 200_500, ("a", "b"), (0, 1), T),  # 2026-05-28T20:30:00.5Z
        played(1, "m3", T + 1_000_000, ("c", "a"), (1, 0), T + 900_000),
        played(2, "m2", T + 1_100_000, ("b", "c"), (0, 0), T + 600_000),
        played(3, "m4", T + 2_000_000, ("a", "d"), (1, 0), None),
    ]
    replayer = Replayer(Modes())
    for match, fates in in_play_order(by_hand, replayer):
        replayer.apply_settled(match, fates)
    expected = b"".join(
        orjson.dumps(r.to_json(), option=orjson.OPT_APPEND_NEWLINE) for r in replayer.ratings()
    )
    assert replayed.stdout.encode() == expected
