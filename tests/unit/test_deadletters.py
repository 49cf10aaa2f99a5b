"""A dead letter's kind of reason, the bounded ``reason`` label of the dead-letter metrics.
The processors' own reasons are checked in tests/unit/pipeline/test_hostile_input.py; here the
cache feed's and the batch runner's."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from stream.cache.entry import CachedRating
from stream.deadletters import OTHER_REASON, REASON_KINDS, reason_kind
from stream.protocol import ProtocolError, decode_commands


def cache_reason(event: Any) -> str:
    """The reason the cache feed gives for ``event`` (stream/cache/feed.py)."""
    with pytest.raises(ValueError) as caught:
        CachedRating.from_rating_changed(event)
    return f"cache: {caught.value}"


def test_the_cache_feeds_reasons() -> None:
    assert reason_kind(cache_reason({"player_id": "p"})) == "missing_field"
    assert reason_kind(cache_reason([1])) == "invalid_field"
    try:
        orjson.loads(b"{x")
    except orjson.JSONDecodeError as exc:
        assert reason_kind(f"cache: not valid JSON: {exc}") == "not_json"


def test_the_batch_runners_reasons() -> None:
    with pytest.raises(ProtocolError) as caught:
        decode_commands(b'{"not": "a list"}')
    assert reason_kind(str(caught.value)) == "not_json"
    # Built as batches.py and delivery.py build them.
    assert reason_kind(f"internal error: {KeyError('x')!r}") == "internal_error"
    assert reason_kind(f"output refused: {ValueError('too big')!r}") == "output_refused"


def test_the_kinds_are_few_and_distinct() -> None:
    names = [name for name, _ in REASON_KINDS]
    assert len(set(names)) == len(names) and OTHER_REASON not in names
    assert len(names) + 1 <= 10  # a label value per kind: keep the series count small
