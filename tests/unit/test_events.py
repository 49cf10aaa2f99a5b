"""Event validation, and agreement between the code and the published JSON Schemas."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from importlib.resources import files
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from stream.events import (
    DEFAULT_LIMITS,
    FINISHED_FIELDS,
    MAX_EPOCH_MS,
    MAX_UNKNOWN_NAME,
    MAX_UNKNOWN_NAMED,
    MIN_EPOCH_MS,
    STARTED_FIELDS,
    TIME_PATTERN,
    EventError,
    EventLimits,
    MatchFinished,
    MatchStarted,
    decode_match_finished,
    decode_match_started,
    format_time,
    parse_match_finished,
    parse_match_started,
    parse_time,
    unknown_fields_text,
)
from stream.ratings.skill import PlayerStats

T = "2026-01-02T03:04:05Z"
T_SECONDS = 1767323045.0


def load_schema(name: str) -> dict[str, Any]:
    text = files("stream").joinpath("schemas", f"{name}.schema.json").read_text()
    schema: dict[str, Any] = json.loads(text)
    return schema


SCHEMAS = {
    name: load_schema(name) for name in ("match-started", "match-finished", "rating-changed")
}


# --- parse_time --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("2026-01-02T03:04:05Z", T_SECONDS),
        ("2026-01-02T04:04:05+01:00", T_SECONDS),
        ("2026-01-01T22:04:05-05:00", T_SECONDS),
        ("2026-01-02 03:04:05Z", T_SECONDS),
        ("2026-01-02T03:04:05.250Z", T_SECONDS + 0.25),
        ("2026-01-02T03:04:05.123456789Z", T_SECONDS + 0.123456),  # Java/Go nanoseconds
        (1767323045000, T_SECONDS),
        (1767323045250, T_SECONDS + 0.25),
    ],
)
def test_parse_time_accepts(value: object, seconds: float) -> None:
    assert parse_time(value) == pytest.approx(seconds, abs=1e-6)


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        (
            "2026-01-02T03:04:05",
            "time '2026-01-02T03:04:05' has no zone; add Z or an offset such as +01:00",
        ),
        ("2026-01-02", "time '2026-01-02' has no zone; add Z or an offset such as +01:00"),
        ("1969-12-31T23:59:59Z", "time '1969-12-31T23:59:59Z' is before 1970"),
        (
            "20260102T030405Z",
            "time '20260102T030405Z' is not in RFC 3339 form (e.g. 2026-01-02T03:04:05+01:00)",
        ),
        (
            "2026-02-30T03:04:05Z",
            "invalid time '2026-02-30T03:04:05Z': day is out of range for month",
        ),
        (
            "yesterday",
            "expected an RFC 3339 time with a zone (e.g. 2026-01-02T03:04:05Z) "
            "or integer epoch milliseconds, got 'yesterday'",
        ),
        (
            1767323045.5,
            "expected integer epoch milliseconds or an RFC 3339 string, got the float 1767323045.5",
        ),
        (
            math.nan,
            "expected integer epoch milliseconds or an RFC 3339 string, got the float nan",
        ),
        (
            1767323045,
            "expected epoch milliseconds, got 1767323045, which is before March 1973 "
            "(epoch seconds? multiply by 1000)",
        ),
        (MAX_EPOCH_MS + 1, f"epoch milliseconds {MAX_EPOCH_MS + 1} is after the year 9999"),
        (
            True,
            "expected an RFC 3339 time with a zone (e.g. 2026-01-02T03:04:05Z) "
            "or integer epoch milliseconds, got true",
        ),
        (
            None,
            "expected an RFC 3339 time with a zone (e.g. 2026-01-02T03:04:05Z) "
            "or integer epoch milliseconds, got null",
        ),
    ],
)
def test_parse_time_rejects(value: object, reason: str) -> None:
    with pytest.raises(EventError) as caught:
        parse_time(value)
    assert str(caught.value) == reason


def test_parse_time_bounds() -> None:
    assert parse_time(MIN_EPOCH_MS) == MIN_EPOCH_MS / 1000
    assert parse_time(MAX_EPOCH_MS) == MAX_EPOCH_MS / 1000
    with pytest.raises(EventError):
        parse_time(MIN_EPOCH_MS - 1)


def test_rfc3339_times_obey_the_integer_range() -> None:
    # The live pipeline rated a finish at 1971 written as a string while refusing it as an
    # integer: both forms now share one range.
    assert format_time(MIN_EPOCH_MS / 1000) == "1973-03-03T09:46:40.000Z"
    assert parse_time("1973-03-03T09:46:40.000Z") == MIN_EPOCH_MS / 1000
    assert parse_time("9999-12-31T23:59:59.999Z") == MAX_EPOCH_MS / 1000
    for text in ("1971-01-01T00:00:00Z", "1973-03-03T09:46:39.999Z", "1973-03-03T10:46:39+01:00"):
        with pytest.raises(EventError, match="before March 1973"):
            parse_time(text)
    with pytest.raises(EventError, match="after the year 9999"):
        parse_time("9999-12-31T23:59:59-01:00")


@given(st.integers(MIN_EPOCH_MS - 10**9, MIN_EPOCH_MS + 10**9))
def test_a_moment_is_accepted_or_refused_the_same_in_both_forms(ms: int) -> None:
    text = format_time(ms / 1000)
    outcomes: list[float | None] = []
    for form in (ms, text):
        try:
            outcomes.append(parse_time(form))
        except EventError:
            outcomes.append(None)
    assert outcomes[0] == outcomes[1]


def test_format_time_round_trips_milliseconds() -> None:
    assert format_time(T_SECONDS) == "2026-01-02T03:04:05.000Z"
    for ms in (1767323045000, 1767323045001, 1767323045999, 100_000_000_123):
        text = format_time(ms / 1000)
        assert parse_time(text) == ms / 1000


# --- parsed values -----------------------------------------------------------------------------


def test_parse_full_match_finished() -> None:
    event = parse_match_finished(
        {
            "match_id": "m-1",
            "mode": "2v2",
            "finished_at": "2026-01-02T04:04:05+01:00",
            "teams": [["a", "b"], ["c", "d"]],
            "ranks": [1, 0],
            "quitters": ["c"],
            "stats": {"a": {"score": 10, "seconds": 600.5}, "c": {"score": -2.5, "seconds": 0}},
            "server": "eu-1",
        }
    )
    assert event == MatchFinished(
        match_id="m-1",
        mode="2v2",
        finished_at=T_SECONDS,
        teams=(("a", "b"), ("c", "d")),
        ranks=(1, 0),
        quitters=frozenset({"c"}),
        stats=event.stats,
        unknown_fields=("server",),
    )
    assert event.stats is not None
    assert dict(event.stats) == {"a": PlayerStats(10.0, 600.5), "c": PlayerStats(-2.5, 0.0)}
    assert isinstance(event.stats["a"].score, float)
    with pytest.raises(TypeError):
        event.stats["x"] = PlayerStats(1.0, 1.0)  # type: ignore[index]


def test_parse_match_finished_without_teams() -> None:
    event = decode_match_finished(
        b'{"match_id":"m","mode":"ffa","finished_at":1767323045000,"ranks":[2,0,1]}'
    )
    assert event.teams is None
    assert event.ranks == (2, 0, 1)
    assert event.quitters == frozenset()
    assert event.stats is None


def test_decode_match_started() -> None:
    event = decode_match_started(
        b'{"match_id":"m","mode":"1v1","started_at":"' + T.encode() + b'","teams":[["a"],["b"]]}'
    )
    assert event == MatchStarted("m", "1v1", T_SECONDS, (("a",), ("b",)))


def test_decode_accepts_str_and_bytearray() -> None:
    raw = '{"match_id":"m","mode":"1v1","finished_at":1767323045000,"ranks":[0,1]}'
    assert decode_match_finished(raw) == decode_match_finished(bytearray(raw.encode()))


def test_payload_over_max_bytes_is_rejected_before_decoding() -> None:
    limits = EventLimits(max_bytes=100)
    raw = b"{" + b" " * 200 + b"}"
    with pytest.raises(EventError) as caught:
        decode_match_finished(raw, limits)
    assert str(caught.value) == "event is 202 bytes, over the limit of 100 bytes"


def test_limits_players_teams_and_ids() -> None:
    limits = EventLimits(max_players=3, max_teams=3, max_id_length=5)
    base = {"match_id": "m", "mode": "x", "finished_at": 1767323045000}

    def reason(**fields: object) -> str:
        with pytest.raises(EventError) as caught:
            parse_match_finished({**base, **fields}, limits)
        return str(caught.value)

    assert reason(teams=[["a", "b"], ["c", "d"]], ranks=[0, 1]) == "teams: more than 3 players"
    assert (
        reason(teams=[["a"], ["b"], ["c"], ["d"]], ranks=[0, 1, 2, 3]) == "teams: more than 3 teams"
    )
    assert reason(ranks=[0, 1, 2, 3]) == "ranks: more than 3 ranks"
    assert reason(teams=[["abcdef"], ["b"]], ranks=[0, 1]) == (
        "teams[0][0]: player id is longer than 5 characters"
    )
    assert (
        reason(ranks=[0, 1], match_id="abcdef") == "match_id: match id is longer than 5 characters"
    )


def test_limits_validate_themselves() -> None:
    with pytest.raises(ValueError, match="max_teams must be at least 2"):
        EventLimits(max_teams=1)
    with pytest.raises(ValueError, match="max_bytes must be a positive integer"):
        EventLimits(max_bytes=0)


def test_python_callers_get_errors_for_non_finite_stats() -> None:
    # orjson cannot produce these, but Python callers (simulators, tests) can.
    event = {"match_id": "m", "mode": "x", "finished_at": 1767323045000, "ranks": [0, 1]}
    with pytest.raises(EventError) as caught:
        parse_match_finished({**event, "stats": {"a": {"score": math.inf, "seconds": 1}}})
    assert str(caught.value) == "stats['a'].score: must be between -1e+12 and 1e+12, got inf"


# --- samples: the code and the JSON Schemas must agree ------------------------------------------


@dataclass(frozen=True)
class Sample:
    name: str
    raw: bytes
    error: str | None  # None: valid; otherwise the exact reason (or its start, for JSON errors)
    # True for the few rules JSON Schema cannot state: the schema accepts, the code rejects.
    schema_gap: bool = False


def _json(obj: object) -> bytes:
    return orjson.dumps(obj)


def _event(time_field: str, changes: dict[str, object], **rest: object) -> bytes:
    """A valid 1v1 event, its time in ``time_field`` and then ``rest``, with ``changes`` made
    (a field changed to ``_DROP`` is removed)."""
    event: dict[str, object] = {
        "match_id": "m-1",
        "mode": "1v1",
        time_field: T,
        "teams": [["alice"], ["bob"]],
        **rest,
    }
    for key, value in changes.items():
        if value is _DROP:
            event.pop(key)
        else:
            event[key] = value
    return _json(event)


def finished(**changes: object) -> bytes:
    return _event("finished_at", changes, ranks=[0, 1])


def started(**changes: object) -> bytes:
    return _event("started_at", changes)


_DROP = object()
TIME_ERROR = (
    "expected an RFC 3339 time with a zone (e.g. 2026-01-02T03:04:05Z) or integer epoch "
    "milliseconds, got "
)

FINISHED_SAMPLES = [
    Sample("1v1", finished(), None),
    Sample("epoch ms", finished(finished_at=1767323045000), None),
    Sample("offset", finished(finished_at="2026-01-02T04:04:05.250+01:00"), None),
    Sample("space separator", finished(finished_at="2026-01-02 03:04:05Z"), None),
    Sample("no teams", finished(teams=_DROP), None),
    Sample("null teams", finished(teams=None, ranks=[1, 0, 2]), None),
    Sample("ffa with tie", finished(teams=[["a"], ["b"], ["c"], ["d"]], ranks=[0, 1, 1, 3]), None),
    Sample(
        "2v2 stats quitters",
        finished(
            teams=[["a", "b"], ["c", "d"]],
            ranks=[0, 1],
            quitters=["d"],
            stats={"a": {"score": 12.5, "seconds": 600}, "d": {"score": 0, "seconds": 0}},
        ),
        None,
    ),
    Sample("null optionals", finished(quitters=None, stats=None), None),
    Sample("unknown fields", finished(server="eu-1", extra={"x": [1, 2]}), None),
    Sample("broken json", b'{"match_id": "m-1",', "not valid JSON: "),
    Sample("nan literal", b'{"match_id": NaN}', "not valid JSON: "),
    Sample("not an object", b"[1, 2]", "expected a JSON object, got a list"),
    Sample("missing match_id", finished(match_id=_DROP), "match_id: required field is missing"),
    Sample("int match_id", finished(match_id=17), "match_id: expected a string match id, got 17"),
    Sample("empty match_id", finished(match_id=""), "match_id: match id is empty"),
    Sample(
        "long match_id",
        finished(match_id="x" * 129),
        "match_id: match id is longer than 128 characters",
    ),
    Sample("missing mode", finished(mode=_DROP), "mode: required field is missing"),
    Sample("null mode", finished(mode=None), "mode: expected a string mode, got null"),
    Sample("missing time", finished(finished_at=_DROP), "finished_at: required field is missing"),
    Sample(
        "naive time",
        finished(finished_at="2026-01-02T03:04:05"),
        "finished_at: time '2026-01-02T03:04:05' has no zone; add Z or an offset such as +01:00",
    ),
    Sample(
        "float time",
        finished(finished_at=1767323045.5),
        "finished_at: expected integer epoch milliseconds or an RFC 3339 string, "
        "got the float 1767323045.5",
    ),
    Sample(
        "seconds time",
        finished(finished_at=1767323045),
        "finished_at: expected epoch milliseconds, got 1767323045, which is before March 1973 "
        "(epoch seconds? multiply by 1000)",
    ),
    Sample(
        "year 1969",
        finished(finished_at="1969-12-31T23:59:59Z"),
        "finished_at: time '1969-12-31T23:59:59Z' is before 1970",
    ),
    Sample(
        "month 13",
        finished(finished_at="2026-13-02T03:04:05Z"),
        "finished_at: " + TIME_ERROR + "'2026-13-02T03:04:05Z'",
    ),
    Sample("bool time", finished(finished_at=True), "finished_at: " + TIME_ERROR + "true"),
    Sample("teams string", finished(teams="a,b"), "teams: expected a list of teams, got 'a,b'"),
    Sample(
        "one team",
        finished(teams=[["a", "b"]], ranks=[0]),
        "teams: expected at least 2 teams, got 1",
    ),
    Sample("empty team", finished(teams=[["a"], []]), "teams[1]: team is empty"),
    Sample(
        "team not a list",
        finished(teams=[["a"], "b"]),
        "teams[1]: expected a list of player ids, got 'b'",
    ),
    Sample(
        "int player",
        finished(teams=[["a"], [17]]),
        "teams[1][0]: expected a string player id, got 17",
    ),
    Sample("empty player", finished(teams=[[""], ["b"]]), "teams[0][0]: player id is empty"),
    Sample(
        "twice in a team",
        finished(teams=[["a", "a"], ["b", "c"]]),
        "teams[0][1]: player 'a' is twice in teams[0]",
    ),
    Sample(
        "on both teams",
        finished(teams=[["a"], ["a"]]),
        "teams[1][0]: player 'a' is also in teams[0]",
        schema_gap=True,
    ),
    Sample(
        "257 in one team",
        finished(teams=[[f"p{i}" for i in range(257)], ["b"]]),
        "teams: more than 256 players",
    ),
    Sample(
        "257 over two teams",
        finished(teams=[[f"p{i}" for i in range(200)], [f"q{i}" for i in range(57)]]),
        "teams: more than 256 players",
        schema_gap=True,
    ),
    Sample("missing ranks", finished(ranks=_DROP), "ranks: required field is missing"),
    Sample(
        "ranks object",
        finished(ranks={"a": 0}),
        "ranks: expected a list of integers, got an object",
    ),
    Sample(
        "string rank",
        finished(ranks=["1", 0]),
        "ranks[0]: expected a non-negative integer, got '1'",
    ),
    Sample(
        "float rank", finished(ranks=[0, 1.5]), "ranks[1]: expected a non-negative integer, got 1.5"
    ),
    Sample(
        "negative rank",
        finished(ranks=[-1, 0]),
        "ranks[0]: expected a non-negative integer, got -1",
    ),
    Sample(
        "bool rank",
        finished(ranks=[True, False]),
        "ranks[0]: expected a non-negative integer, got true",
    ),
    Sample(
        "rank count mismatch",
        finished(ranks=[0, 1, 2]),
        "ranks: expected one rank per team (2), got 3",
        schema_gap=True,
    ),
    Sample(
        "one rank without teams",
        finished(teams=_DROP, ranks=[0]),
        "ranks: expected at least 2 ranks, got 1",
    ),
    Sample(
        "quitters string",
        finished(quitters="alice"),
        "quitters: expected a list of player ids, got 'alice'",
    ),
    Sample(
        "quitter twice",
        finished(quitters=["alice", "alice"]),
        "quitters[1]: player 'alice' is listed twice",
    ),
    Sample(
        "int quitter",
        finished(quitters=[3]),
        "quitters[0]: expected a string player id, got 3",
    ),
    Sample(
        "stranger quits",
        finished(quitters=["carol"]),
        "quitters[0]: player 'carol' is not in teams",
        schema_gap=True,
    ),
    Sample(
        "stats list",
        finished(stats=[1]),
        "stats: expected an object mapping player id to {score, seconds}, got a list",
    ),
    Sample(
        "stats entry not object",
        finished(stats={"alice": 3}),
        "stats['alice']: expected an object with score and seconds, got 3",
    ),
    Sample(
        "stats missing seconds",
        finished(stats={"alice": {"score": 1}}),
        "stats['alice'].seconds: required field is missing",
    ),
    Sample(
        "stats string score",
        finished(stats={"alice": {"score": "10", "seconds": 1}}),
        "stats['alice'].score: expected a finite number, got '10'",
    ),
    Sample(
        "stats bool score",
        finished(stats={"alice": {"score": True, "seconds": 1}}),
        "stats['alice'].score: expected a finite number, got true",
    ),
    Sample(
        "stats negative seconds",
        finished(stats={"alice": {"score": 1, "seconds": -1}}),
        "stats['alice'].seconds: must not be negative, got -1",
    ),
    Sample(
        "stats huge score",
        finished(stats={"alice": {"score": 1e300, "seconds": 1}}),
        "stats['alice'].score: must be between -1e+12 and 1e+12, got 1e+300",
    ),
    Sample(
        "stats infinite score",
        b'{"match_id":"m","mode":"x","finished_at":1767323045000,"ranks":[0,1],'
        b'"stats":{"a":{"score":1e400,"seconds":1}}}',
        "not valid JSON: ",
    ),
    Sample(
        "stats empty player",
        finished(stats={"": {"score": 1, "seconds": 1}}),
        "stats['']: player id is empty",
    ),
    Sample(
        "stats stranger",
        finished(stats={"carol": {"score": 1, "seconds": 1}}),
        "stats['carol']: player is not in teams",
        schema_gap=True,
    ),
    Sample(
        "2v2 parties",
        finished(teams=[["a", "b"], ["c", "d"]], ranks=[0, 1], parties=[["a", "b"], ["c"]]),
        None,
    ),
    Sample("null parties", finished(parties=None), None),
    Sample("parties without teams", finished(teams=_DROP, parties=[["x", "y"]]), None),
    Sample(
        "parties not a list",
        finished(parties={"a": 1}),
        "parties: expected a list of parties, got an object",
    ),
    Sample(
        "empty party",
        finished(parties=[[]]),
        "parties[0]: expected a non-empty list of player ids, got a list",
    ),
    Sample(
        "party of a number",
        finished(parties=[["alice", 7]]),
        "parties[0][1]: expected a string player id, got 7",
    ),
    Sample(
        "party stranger",
        finished(parties=[["alice", "carol"]]),
        "parties[0][1]: player 'carol' is not in teams",
        schema_gap=True,
    ),
    Sample(
        "party across sides",
        finished(parties=[["alice", "bob"]]),
        "parties[0][1]: player 'bob' is not on the side of 'alice': a party plays on one side",
        schema_gap=True,
    ),
    Sample(
        "player in two parties",
        finished(teams=[["a", "b", "c"], ["d"]], ranks=[0, 1], parties=[["a", "b"], ["c", "a"]]),
        "parties[1][1]: player 'a' is in two parties",
        schema_gap=True,
    ),
]

STARTED_SAMPLES = [
    Sample("1v1", started(), None),
    Sample("3 teams of 2", started(teams=[["a", "b"], ["c", "d"], ["e", "f"]]), None),
    Sample("epoch ms", started(started_at=1767323045000, region="eu"), None),
    Sample("missing teams", started(teams=_DROP), "teams: required field is missing"),
    Sample("null teams", started(teams=None), "teams: expected a list of teams, got null"),
    Sample("one team", started(teams=[["a", "b"]]), "teams: expected at least 2 teams, got 1"),
    Sample("empty team", started(teams=[[], ["b"]]), "teams[0]: team is empty"),
    Sample(
        "on both teams",
        started(teams=[["a", "b"], ["c", "b"]]),
        "teams[1][1]: player 'b' is also in teams[0]",
        schema_gap=True,
    ),
    Sample(
        "naive time",
        started(started_at="2026-01-02T03:04:05.5"),
        "started_at: time '2026-01-02T03:04:05.5' has no zone; add Z or an offset such as +01:00",
    ),
    Sample("missing time", started(started_at=_DROP), "started_at: required field is missing"),
    Sample("not json", b"\xff\xfe", "not valid JSON: "),
]


def _strict_json(raw: bytes) -> object:
    def refuse(constant: str) -> object:
        raise ValueError(constant)

    return json.loads(raw, parse_constant=refuse)


def schema_accepts(schema_name: str, raw: bytes) -> bool:
    try:
        obj = _strict_json(raw)
    except ValueError:
        return False
    return bool(Draft202012Validator(SCHEMAS[schema_name]).is_valid(obj))


def code_error(decode: Any, raw: bytes) -> str | None:
    try:
        decode(raw)
    except EventError as exc:
        return str(exc)
    return None


def _check(sample: Sample, schema_name: str, decode: Any) -> None:
    error = code_error(decode, raw=sample.raw)
    if sample.error is None:
        assert error is None
    elif sample.error.endswith(": "):
        assert error is not None
        assert error.startswith(sample.error)
    else:
        assert error == sample.error
    expected_by_schema = sample.error is None or sample.schema_gap
    assert schema_accepts(schema_name, sample.raw) is expected_by_schema


@pytest.mark.parametrize("sample", FINISHED_SAMPLES, ids=lambda s: s.name)
def test_match_finished_code_and_schema_agree(sample: Sample) -> None:
    _check(sample, "match-finished", decode_match_finished)


@pytest.mark.parametrize("sample", STARTED_SAMPLES, ids=lambda s: s.name)
def test_match_started_code_and_schema_agree(sample: Sample) -> None:
    _check(sample, "match-started", decode_match_started)


def test_schema_gaps_are_documented_in_the_schemas() -> None:
    finished_comment = SCHEMAS["match-finished"]["$comment"]
    rules = ("no player on two teams", "one rank per team", "quitters, stats keys", "256")
    for rule in (*rules, "on one side", "no player in two parties"):
        assert rule in finished_comment
    assert "no player on two teams" in SCHEMAS["match-started"]["$comment"]


def test_schemas_share_definitions_and_limits() -> None:
    for schema in SCHEMAS.values():
        Draft202012Validator.check_schema(schema)
        assert schema["$defs"]["time"]["anyOf"][0]["pattern"] == TIME_PATTERN
        assert schema["$defs"]["time"]["anyOf"][1]["minimum"] == MIN_EPOCH_MS
        assert schema["$defs"]["time"]["anyOf"][1]["maximum"] == MAX_EPOCH_MS
        assert schema["$defs"]["id"]["maxLength"] == DEFAULT_LIMITS.max_id_length
    teams = SCHEMAS["match-finished"]["$defs"]["teams"]
    assert teams == SCHEMAS["match-started"]["$defs"]["teams"]
    assert teams["maxItems"] == DEFAULT_LIMITS.max_teams
    assert teams["items"]["maxItems"] == DEFAULT_LIMITS.max_players


def rating_changed(**changes: object) -> dict[str, object]:
    event: dict[str, object] = {
        "player_id": "alice",
        "mode": "1v1",
        "match_id": "m-1",
        "outcome": "win",
        "rating": 1662.3,
        "deviation": 290.3,
        "volatility": 0.06,
        "rank_points": 1081,
        "games": 1,
        "version": 1,
        "previous": {"rating": 1500.0, "deviation": 350.0, "volatility": 0.06, "rank_points": 800},
        "expected_score": 0.5,
        "algorithm": "glicko2",
        "at": "2026-01-02T03:04:05.000Z",
    }
    for key, value in changes.items():
        if value is _DROP:
            event.pop(key)
        else:
            event[key] = value
    return event


@pytest.mark.parametrize(
    ("event", "valid"),
    [
        (rating_changed(), True),
        (rating_changed(at=1767323045000, outcome="abandoned"), True),
        (
            rating_changed(
                algorithm="elo",
                deviation=0,
                volatility=None,
                previous={"rating": 1500, "deviation": 0, "volatility": None, "rank_points": 0},
            ),
            True,
        ),
        (rating_changed(outcome="timeout", games=0, extra="ignored"), True),
        (rating_changed(effective_rating=1362.3, provisional=True), True),
        (rating_changed(effective_rating="1362.3"), False),
        (rating_changed(provisional=1), False),
        (rating_changed(outcome="won"), False),
        (rating_changed(version=0), False),
        (rating_changed(previous=_DROP), False),
        (rating_changed(previous={"rating": 1500}), False),
        (rating_changed(volatility="0.06"), False),
        (rating_changed(rank_points=10.5), False),
        (rating_changed(expected_score=1.5), False),
        (rating_changed(deviation=-1), False),
        (rating_changed(at="2026-01-02T03:04:05"), False),
        (rating_changed(player_id=""), False),
    ],
)
def test_rating_changed_schema(event: dict[str, object], valid: bool) -> None:
    assert Draft202012Validator(SCHEMAS["rating-changed"]).is_valid(event) is valid


# --- fields skillstream does not read --------------------------------------------------------


def test_the_fields_read_are_the_schemas_properties() -> None:
    for name, known in (("match-started", STARTED_FIELDS), ("match-finished", FINISHED_FIELDS)):
        assert set(SCHEMAS[name]["properties"]) == known


def test_a_misspelt_field_is_named_with_the_one_it_may_mean() -> None:
    event = decode_match_finished(
        b'{"match_id":"m","mode":"1v1","finished_at":1767323045000,"teams":[["a"],["b"]],'
        b'"ranks":[0,1],"quiters":["b"]}'
    )
    assert event.quitters == frozenset()  # read as if absent
    assert event.unknown_fields == ("quiters",)
    text = unknown_fields_text(event.unknown_fields, FINISHED_FIELDS)
    assert text == "'quiters' (did you mean 'quitters'?)"


def test_a_known_event_carries_no_unknown_fields() -> None:
    raw = b'{"match_id":"m","mode":"1v1","started_at":1767323045000,"teams":[["a"],["b"]]}'
    assert decode_match_started(raw).unknown_fields == ()


def test_unknown_names_kept_are_few_and_short() -> None:
    event: dict[str, object] = {
        "match_id": "m",
        "mode": "1v1",
        "started_at": 1767323045000,
        "teams": [["a"], ["b"]],
    }
    event.update({f"x{i:03d}" + "y" * 500: i for i in range(100)})
    names = parse_match_started(event).unknown_fields
    assert len(names) == MAX_UNKNOWN_NAMED
    assert all(len(name) == MAX_UNKNOWN_NAME for name in names)
