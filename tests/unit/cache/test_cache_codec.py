"""The player hash's fields and reply decoding, for every shape redis-py can hand back."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stream.cache.codec import (
    FIELDS,
    SCHEMA_VERSION,
    CacheFormatError,
    decode_entry,
    encode_fields,
    hash_mapping,
    score_pairs,
)
from stream.cache.entry import CachedRating

finite = st.floats(allow_nan=False, allow_infinity=False)
entries = st.builds(
    CachedRating,
    player_id=st.just("p"),
    mode=st.just("m"),
    rating=finite,
    deviation=st.floats(0.0, 1e6),
    volatility=st.none() | finite,
    rank_points=st.integers(-(10**9), 10**9),
    games=st.integers(0, 10**6),
    version=st.integers(1, 2**53),
    updated_at_ms=st.integers(0, 253_402_300_799_999),
    match_id=st.none() | st.text(min_size=1, max_size=128),
)


def as_hash_reply(entry: CachedRating) -> dict[bytes, bytes]:
    pairs = encode_fields(entry)
    return {pairs[i].encode(): pairs[i + 1].encode() for i in range(0, len(pairs), 2)}


def test_fields_and_schema_marker() -> None:
    entry = CachedRating("p", "m", 1500.0, 0.0, None, -3, 2, 7, 1_700_000_000_000, "x")
    assert encode_fields(entry) == [
        *("rating", "1500.0", "deviation", "0.0", "volatility", ""),
        *("rank_points", "-3", "games", "2", "version", "7"),
        *("updated_at", "1700000000000", "match_id", "x", "schema", str(SCHEMA_VERSION)),
    ]
    assert encode_fields(entry)[::2] == list(FIELDS)


@given(entries)
def test_every_entry_round_trips_exactly(entry: CachedRating) -> None:
    reply = as_hash_reply(entry)
    decoded = decode_entry("m", "p", reply)
    assert decoded == entry
    assert decoded is not None and math.copysign(1.0, decoded.rating) == math.copysign(
        1.0, entry.rating
    )
    # decode_responses=True and a raw RESP2 flat list read the same.
    as_text = {k.decode(): v.decode() for k, v in reply.items()}
    assert decode_entry("m", "p", as_text) == entry
    assert decode_entry("m", "p", [x for kv in reply.items() for x in kv]) == entry


def test_absent_hash_is_none() -> None:
    assert decode_entry("m", "p", {}) is None
    assert decode_entry("m", "p", []) is None
    assert decode_entry("m", "p", None) is None


def test_unknown_schema_is_refused() -> None:
    reply = as_hash_reply(CachedRating("p", "m", 1.0, 0.0, None, 0, 1, 1, 0, "x"))
    reply[b"schema"] = b"2"
    with pytest.raises(CacheFormatError, match="has schema '2'; this reader knows schema 1"):
        decode_entry("m", "p", reply)
    del reply[b"schema"]
    with pytest.raises(CacheFormatError, match="has schema None"):
        decode_entry("m", "p", reply)


def test_damaged_hash_is_refused() -> None:
    reply = as_hash_reply(CachedRating("p", "m", 1.0, 0.0, None, 0, 1, 1, 0, "x"))
    del reply[b"games"]
    with pytest.raises(CacheFormatError, match="lacks field 'games'"):
        decode_entry("m", "p", reply)
    reply[b"games"] = b"many"
    with pytest.raises(CacheFormatError, match="unreadable"):
        decode_entry("m", "p", reply)


def test_score_pairs_in_every_shape() -> None:
    expected = [("a", 1.5), ("b", -2.0)]
    assert score_pairs([(b"a", 1.5), (b"b", -2.0)]) == expected  # redis-py RESP2 parsing
    assert score_pairs([[b"a", 1.5], [b"b", -2.0]]) == expected  # RESP3
    assert score_pairs([b"a", b"1.5", b"b", b"-2"]) == expected  # raw RESP2 / Lua table
    assert score_pairs(["a", "1.5", "b", "-2"]) == expected  # decode_responses=True
    assert score_pairs([]) == [] and score_pairs(None) == []
    with pytest.raises(CacheFormatError):
        score_pairs(b"oops")


def test_hash_mapping_refuses_other_replies() -> None:
    with pytest.raises(CacheFormatError):
        hash_mapping(42)
