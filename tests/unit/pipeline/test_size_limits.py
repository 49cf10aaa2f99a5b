"""Size limits: a dead letter always fits the producer's record limit and says when it was cut;
the event limit and the record limit are consistent (settings refuse a pair that is not)."""

from __future__ import annotations

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from stream.config.modes import Modes
from stream.config.settings import EVENT_EXPANSION, Settings, SettingsError
from stream.deadletters import (
    MAX_REASON_BYTES,
    SOURCE_KEY_SIZE,
    SOURCE_SIZE,
    TRUNCATED,
    DeadLetter,
    Origin,
    record_bytes,
)
from stream.events import EventLimits
from stream.pipeline.matches import STARTED, MatchProcessor
from stream.pipeline.matchpartition import MatchContext
from stream.pipeline.outbox import Outbox
from stream.pipeline.packing import pack

ORIGIN = Origin("match-finished", 3, 12345, 1_780_000_000_000)
# Apache Kafka's default message.max.bytes: the largest record batch a default broker accepts.
BROKER_DEFAULT = 1_048_588


def test_the_default_record_limit_fits_a_default_broker_and_the_event_limit() -> None:
    s = Settings()
    assert s.kafka.max_request_bytes <= BROKER_DEFAULT
    assert s.worker.limits.max_bytes * EVENT_EXPANSION <= s.kafka.max_request_bytes


def test_a_dead_letter_that_fits_is_sent_whole() -> None:
    letter = DeadLetter(b"m-1", b'{"match_id": "m-1"}', ORIGIN, "ranks: required field is missing")
    key, value, headers = letter.fitted(Settings().kafka.max_request_bytes)
    assert (key, value, headers) == (letter.key, letter.value, letter.headers())
    assert TRUNCATED not in dict(headers)


def test_the_issue_event_of_1048000_bytes_now_fits_whole() -> None:
    # It crashed the agent: its dead letter was over Faust's default producer limit
    # (1,000,000 bytes). The worker's producer limit is now 1 MiB, set explicitly.
    raw = orjson.dumps({"match_id": "big", "pad": "x" * (1_048_000 - 30)})
    letter = DeadLetter(b"big", raw, ORIGIN, "match-finished: event is too big")
    assert record_bytes(letter.key, letter.value, letter.headers()) > 1_000_000
    assert letter.fitted(Settings().kafka.max_request_bytes) == (b"big", raw, letter.headers())


def test_an_event_at_the_broker_limit_is_cut_to_fit_and_says_so() -> None:
    # The largest record a default broker accepts, with its key: its dead letter's headers
    # push it over the producer's limit.
    raw = orjson.dumps({"match_id": "big", "pad": "x" * (BROKER_DEFAULT - 200)})
    assert record_bytes(b"big", raw, []) <= BROKER_DEFAULT
    limit = Settings().kafka.max_request_bytes
    key, value, headers = DeadLetter(b"big", raw, ORIGIN, "event is too big").fitted(limit)
    assert record_bytes(key, value, headers) <= limit
    fields = dict(headers)
    assert fields[TRUNCATED] == b"true"
    assert fields[SOURCE_SIZE] == str(len(raw)).encode()
    assert fields[SOURCE_KEY_SIZE] == b"3"
    assert fields["skillstream.error.reason"] == b"event is too big"
    assert fields["skillstream.source.offset"] == b"12345"
    assert key == b"big"
    assert value is not None and raw.startswith(value) and len(value) > limit - 2048


@given(
    key=st.one_of(st.none(), st.binary(max_size=3000)),
    value=st.one_of(st.none(), st.binary(max_size=40_000)),
    reason=st.text(max_size=3000),
    limit=st.integers(8192, 50_000),
)
def test_every_dead_letter_fits_and_keeps_a_prefix_of_its_bytes(
    key: bytes | None, value: bytes | None, reason: str, limit: int
) -> None:
    letter = DeadLetter(key, value, ORIGIN, reason)
    cut_key, cut_value, headers = letter.fitted(limit)
    assert record_bytes(cut_key, cut_value, headers) <= limit
    fields = dict(headers)
    assert len(fields["skillstream.error.reason"]) <= MAX_REASON_BYTES
    # None stays None, bytes stay a prefix of the original.
    assert (cut_key is None) == (key is None) and (cut_value is None) == (value is None)
    assert (key or b"").startswith(cut_key or b"")
    assert (value or b"").startswith(cut_value or b"")
    whole = cut_key == key and cut_value == value
    assert (TRUNCATED in fields) == (not whole)
    if TRUNCATED in fields:
        assert fields[SOURCE_SIZE] == str(len(value or b"")).encode()
        assert fields[SOURCE_KEY_SIZE] == str(len(key or b"")).encode()
        # The room is used: what was cut could not have been kept.
        assert len(cut_key or b"") + len(cut_value or b"") > limit - 2 * MAX_REASON_BYTES - 600


def test_a_cut_reason_stays_valid_utf8() -> None:
    letter = DeadLetter(None, b"", ORIGIN, "é" * 2000)
    reason = dict(letter.headers())["skillstream.error.reason"]
    assert len(reason) <= MAX_REASON_BYTES
    assert reason.decode().endswith("...")


def test_a_limit_below_the_headers_is_refused() -> None:
    with pytest.raises(ValueError, match="headers alone"):
        DeadLetter(None, b"x" * 1000, ORIGIN, "r" * 900).fitted(600)


@pytest.mark.parametrize("budget", [1000, 256 * 1024])
def test_pack_keeps_every_command_and_each_message_near_the_budget(budget: int) -> None:
    commands: list[list[object]] = [["join", f"m{i}", "p" * (i % 700)] for i in range(3000)]
    commands.append(["fwd", "finished", {"value": "x" * (3 * budget)}])
    messages = pack([orjson.dumps(c) for c in commands], budget)
    assert [c for m in messages for c in orjson.loads(m)] == commands
    for message in messages:
        # Over the budget only when one command alone is.
        assert len(message) <= budget + 800 or len(orjson.loads(message)) == 1


@pytest.mark.parametrize(
    ("env", "message"),
    [
        (
            {"SKILLSTREAM_MAX_EVENT_BYTES": "200000"},
            "SKILLSTREAM_MAX_EVENT_BYTES: 200000 is over 1/8 of SKILLSTREAM_MAX_REQUEST_BYTES",
        ),
        (
            {"SKILLSTREAM_MAX_REQUEST_BYTES": "100000"},
            "SKILLSTREAM_MAX_EVENT_BYTES: 65536 is over 1/8 of SKILLSTREAM_MAX_REQUEST_BYTES",
        ),
        (
            {"SKILLSTREAM_MAX_REQUEST_BYTES": "8000", "SKILLSTREAM_MAX_EVENT_BYTES": "1000"},
            "SKILLSTREAM_MAX_REQUEST_BYTES: must be at least 16384",
        ),
        ({"SKILLSTREAM_MAX_REQUEST_BYTES": "1MB"}, "SKILLSTREAM_MAX_REQUEST_BYTES: expected"),
    ],
)
def test_inconsistent_size_limits_name_the_variables(env: dict[str, str], message: str) -> None:
    with pytest.raises(SettingsError, match=message.replace("(", r"\(")):
        Settings.from_env(env)


def test_raising_both_limits_together_is_accepted() -> None:
    s = Settings.from_env(
        {"SKILLSTREAM_MAX_EVENT_BYTES": "262144", "SKILLSTREAM_MAX_REQUEST_BYTES": "2097152"}
    )
    assert (s.worker.limits.max_bytes, s.kafka.max_request_bytes) == (262_144, 2_097_152)


@pytest.mark.parametrize("over", [0, 1])
def test_the_key_counts_against_the_event_limit(over: int) -> None:
    # A forwarded event carries its key too: a small body under a huge key must not pass.
    limit = 1000
    value = orjson.dumps(
        {"match_id": "m", "mode": "1v1", "started_at": 1_780_000_000_000, "teams": [["a"], ["b"]]}
    )
    key = b"k" * (limit - len(value) + over)
    matches = MatchProcessor(Modes(), partitions=1, limits=EventLimits(max_bytes=limit))
    out = Outbox()
    wall = 1_780_000_000.0
    ctx = MatchContext.of(matches.restore(0, None, [], wall), {}, out, wall)
    matches.on_event(ctx, STARTED, key, value, ORIGIN)
    if over:
        (letter,) = out.dead_letters
        assert letter.key == key and letter.value == value
        assert f"event is {limit + 1} bytes (key {len(key)}, value {len(value)})" in letter.reason
        assert "SKILLSTREAM_MAX_EVENT_BYTES" in letter.reason
    else:
        assert out.dead_letters == [] and out.player_commands
