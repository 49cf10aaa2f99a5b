"""Hostile input, generated: every malformed event is dead-lettered with its bytes and a reason,
nothing raises, and valid matches interleaved with the garbage are rated exactly as without it.

On the processors wired in memory (harness.py); the same rules on the real broker are
in tests/integration/test_pipeline_scenarios.py.
"""

from __future__ import annotations

from typing import Any

import harness
import orjson
import pytest
from builders import T0
from harness import FINISHED, STARTED, Cluster, epoch_ms
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stream.config.modes import parse_modes
from stream.deadletters import reason_kind
from stream.events import EventLimits
from stream.pipeline.matches import MatchProcessor
from stream.pipeline.partitioning import partition_for
from stream.simulation import SimulationConfig, simulate

# Every test with one message per runner call and with batches (tests/conftest.py, batched).
pytestmark = pytest.mark.usefixtures("batched")

LIMITS = EventLimits(max_bytes=4096, max_players=8, max_teams=4, max_id_length=32)
MODES = parse_modes({"default": {"unlisted": "reject"}, "modes": {"1v1": {}, "2v2": {}}})
HISTORY = list(simulate(SimulationConfig(seed=3, matches=40, players=30)))
# The worker's clock during the test: a little after the last valid match.
WALL = T0 + 86_400.0


def valid_start(match_id: str = "bad-1", **over: Any) -> dict[str, Any]:
    return {
        "match_id": match_id,
        "mode": "1v1",
        "started_at": epoch_ms(T0),
        "teams": [["x1"], ["x2"]],
        **over,
    }


def valid_finish(match_id: str = "bad-1", **over: Any) -> dict[str, Any]:
    return {
        "match_id": match_id,
        "mode": "1v1",
        "finished_at": epoch_ms(T0 + 60),
        "teams": [["x1"], ["x2"]],
        "ranks": [0, 1],
        **over,
    }


wrong_types: st.SearchStrategy[Any] = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-5, 5),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=5),
    st.lists(st.integers(-1000, 1000), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(-9, 9), max_size=2),
)


@st.composite
def hostile(draw: st.DrawFn) -> tuple[str, bytes]:
    """(topic, bytes) of one event the pipeline must refuse."""
    n = draw(st.integers(0, 10_000))
    mid = f"bad-{n}"
    topic = draw(st.sampled_from([STARTED, FINISHED]))
    base = valid_start(mid) if topic == STARTED else valid_finish(mid)
    kind = draw(
        st.sampled_from(
            [
                "bytes",
                "truncated",
                "not-object",
                "wrong-type",
                "missing",
                "huge",
                "non-finite",
                "both-teams",
                "empty-team",
                "unknown-mode",
                "too-old",
                "future",
                "too-many-players",
                "long-id",
            ]
        )
    )
    if kind == "bytes":
        raw = draw(st.binary(max_size=64))
        # Random bytes that happen to be a valid event are not hostile: make them unparsable.
        return topic, b"\xff" + raw
    if kind == "truncated":
        encoded = orjson.dumps(base)
        return topic, encoded[: draw(st.integers(0, len(encoded) - 1))]
    if kind == "not-object":
        small = st.integers(-9, 9)
        return topic, orjson.dumps(draw(st.one_of(st.lists(small), small)))
    if kind == "wrong-type":
        field = draw(st.sampled_from(sorted(set(base) - {"mode"})))
        value = draw(wrong_types.filter(lambda v: type(v) is not type(base[field])))
        if value is None and field == "teams" and topic == FINISHED:
            # A finish's teams may be left out (null is "left out"): it then waits for its
            # start, which is another rule (test_processors.py).
            value = "x1,x2"
        return topic, orjson.dumps({**base, field: value})
    if kind == "missing":
        required = (
            ["match_id", "mode", "started_at", "teams"]
            if topic == STARTED
            else [
                "match_id",
                "mode",
                "finished_at",
                "ranks",
            ]
        )
        field = draw(st.sampled_from(required))
        return topic, orjson.dumps({k: v for k, v in base.items() if k != field})
    if kind == "huge":
        return topic, orjson.dumps({**base, "padding": "x" * LIMITS.max_bytes})
    if kind == "non-finite":
        # JSON has no infinity; 1e999 is how one arrives.
        text = orjson.dumps({**base, "stats": {"x1": {"score": 1, "seconds": 5}}}).decode()
        return topic, text.replace('"score":1', '"score":1e999').encode()
    if kind == "both-teams":
        return topic, orjson.dumps({**base, "teams": [["x1"], ["x1"]]})
    if kind == "empty-team":
        return topic, orjson.dumps({**base, "teams": [[], ["x2"]]})
    if kind == "unknown-mode":
        return topic, orjson.dumps({**base, "mode": draw(st.sampled_from(["ffa", "3v3", "x"]))})
    if kind == "too-old":
        field = "started_at" if topic == STARTED else "finished_at"
        return topic, orjson.dumps({**base, field: draw(st.integers(0, 10**9))})
    if kind == "future":
        field = "started_at" if topic == STARTED else "finished_at"
        ahead = draw(st.floats(400.0, 1e9))
        return topic, orjson.dumps({**base, field: epoch_ms(WALL + ahead)})
    if kind == "too-many-players":
        team = [f"p{i}" for i in range(LIMITS.max_players)]
        return topic, orjson.dumps({**base, "teams": [team, ["y"]]})
    return topic, orjson.dumps({**base, "match_id": "m" * (LIMITS.max_id_length + 1)})


def valid_messages() -> list[tuple[str, bytes]]:
    out = []
    for m in HISTORY:
        teams = [list(t) for t in m.teams]
        start = {"match_id": m.match_id, "mode": m.mode, "started_at": epoch_ms(m.at - 30)}
        finish = {"match_id": m.match_id, "mode": m.mode, "finished_at": epoch_ms(m.at)}
        out.append((STARTED, orjson.dumps({**start, "teams": teams})))
        out.append((FINISHED, orjson.dumps({**finish, "ranks": list(m.ranks)})))
    return out


def run(messages: list[tuple[str, bytes]]) -> Cluster:
    c = Cluster(MODES, partitions=3)
    c.matches = MatchProcessor(MODES, partitions=3, limits=LIMITS, max_future_seconds=300.0)
    c.wall = WALL
    for topic, raw in messages:
        # Valid events go to their match's partition; garbage has no usable key, so it lands
        # on partition 0 (a real producer's random choice) and is forwarded or refused there.
        try:
            match_id = orjson.loads(raw)["match_id"]
            partition = partition_for(match_id, 3) if isinstance(match_id, str) else 0
        except (orjson.JSONDecodeError, KeyError, TypeError):
            partition = 0
        c.send(topic, raw, partition=partition)
    c.run()
    return c


# The valid matches alone, per batch size.
_CLEAN: dict[int, Cluster] = {}


def by_player(ratings: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """Each player's rating-changed events in the order they came out: what must not change.
    (Across players the order follows the batching, and with it when the event-time reports
    go out: garbage in a batch moves them.)"""
    players: dict[str, list[dict[str, Any]]] = {}
    for event in ratings:
        players.setdefault(event["player_id"], []).append(event)
    return players


def clean() -> Cluster:
    if harness.DEFAULT_BATCH not in _CLEAN:
        _CLEAN[harness.DEFAULT_BATCH] = run(valid_messages())
    return _CLEAN[harness.DEFAULT_BATCH]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(hostile(), min_size=1, max_size=12), st.randoms(use_true_random=False))
def test_garbage_is_dead_lettered_and_changes_no_rating(
    garbage: list[tuple[str, bytes]], rng: Any
) -> None:
    messages = valid_messages()
    for item in garbage:
        messages.insert(rng.randrange(len(messages) + 1), item)
    c = run(messages)
    # Every hostile event, exactly once, with its original bytes and a reason.
    assert sorted(letter.value or b"" for letter in c.dead_letters) == sorted(
        raw for _, raw in garbage
    )
    assert all(letter.reason for letter in c.dead_letters)
    # The valid matches were rated exactly as without the garbage, each player's events in turn.
    assert by_player(c.ratings) == by_player(clean().ratings)
    assert c.rating_table == clean().rating_table


def test_the_clean_run_rates_every_match() -> None:
    assert len(clean().ratings) == 2 * len(HISTORY)
    assert clean().dead_letters == []


def test_a_million_players_in_one_match_is_refused_by_size_before_parsing() -> None:
    team = [f"p{i}" for i in range(1_000_000)]
    raw = orjson.dumps(valid_start(teams=[team, ["y"]]))
    c = run([(STARTED, raw), *valid_messages()])
    (letter,) = c.dead_letters
    assert letter.value == raw
    assert "bytes" in letter.reason
    assert by_player(c.ratings) == by_player(clean().ratings)


def test_an_event_time_far_ahead_of_the_clock_cannot_abandon_pending_matches() -> None:
    # Without the limit, one finish dated next year would move the partition's event time on
    # and every match still pending there would be abandoned.
    pending = [(STARTED, orjson.dumps(valid_start("pend", teams=[["a"], ["b"]])))]
    ahead = valid_finish("bad-9", finished_at=epoch_ms(WALL + 365 * 86_400))
    c = run([*pending, (FINISHED, orjson.dumps(ahead))])
    (letter,) = c.dead_letters
    assert "ahead of the worker's clock" in letter.reason
    assert "SKILLSTREAM_MAX_FUTURE_SECONDS" in letter.reason
    assert c.ratings == []
    assert set(c.pending("a")) == {"pend"}


@pytest.mark.parametrize(
    ("topic", "raw", "kind"),
    [
        (STARTED, b"\xff{", "not_json"),
        (FINISHED, b"[1, 2]", "not_json"),
        (STARTED, orjson.dumps({**valid_start(), "padding": "x" * 4096}), "too_large"),
        (
            FINISHED,
            orjson.dumps({k: v for k, v in valid_finish().items() if k != "ranks"}),
            "missing_field",
        ),
        (STARTED, orjson.dumps(valid_start(mode="3v3")), "unknown_mode"),
        (FINISHED, orjson.dumps(valid_finish(finished_at=epoch_ms(WALL + 86_400))), "future_time"),
        (STARTED, orjson.dumps(valid_start(teams=[["x1"], ["x1"]])), "invalid_field"),
        (FINISHED, orjson.dumps(valid_finish(ranks="first")), "invalid_field"),
    ],
)
def test_each_refusal_has_its_kind_of_reason(topic: str, raw: bytes, kind: str) -> None:
    # The metrics' reason label (skillstream_dead_lettered_total{reason}) from the real
    # processors' reasons: a reworded reason that no longer matches its kind fails here.
    (letter,) = run([(topic, raw)]).dead_letters
    assert reason_kind(letter.reason) == kind, letter.reason


@pytest.mark.parametrize(
    ("finish", "kind"),
    [({"mode": "2v2"}, "mismatch"), ({"teams": [["x1"], ["x3"]]}, "mismatch")],
)
def test_a_finish_that_contradicts_its_start_is_a_mismatch(
    finish: dict[str, Any], kind: str
) -> None:
    start = (STARTED, orjson.dumps(valid_start()))
    (letter,) = run([start, (FINISHED, orjson.dumps(valid_finish(**finish)))]).dead_letters
    assert reason_kind(letter.reason) == kind, letter.reason


def test_a_finish_whose_start_never_came_is_no_start() -> None:
    c = run([(FINISHED, orjson.dumps({k: v for k, v in valid_finish().items() if k != "teams"}))])
    c.tick(c.wall + 3600)
    c.run()
    (letter,) = c.dead_letters
    assert reason_kind(letter.reason) == "no_start", letter.reason


@pytest.mark.parametrize("finish_first", [False, True])
@pytest.mark.parametrize(
    ("parties", "reason"),
    [
        ([["x1", "x3"]], "parties: player 'x3' is not on the side of 'x1'"),
        ([["x1", "x9"]], "parties: player 'x9' is not in the match's teams"),
    ],
)
def test_a_finish_without_its_line_up_has_its_parties_checked_when_the_start_comes(
    parties: list[list[str]], reason: str, finish_first: bool
) -> None:
    # Without teams the finish's parties could only be checked for their shape: the sides
    # come with the start (read before or after it), and a party across them sends the
    # finish to the dead letters.
    start = valid_start(mode="2v2", teams=[["x1", "x2"], ["x3", "x4"]])
    finish = {k: v for k, v in valid_finish(mode="2v2", parties=parties).items() if k != "teams"}
    events = [(STARTED, orjson.dumps(start)), (FINISHED, orjson.dumps(finish))]
    c = run(events[::-1] if finish_first else events)
    (letter,) = c.dead_letters
    assert reason in letter.reason
    assert letter.value == orjson.dumps(finish)
