"""cache rebuild's reading of the ratings changelog: the worker's own records, decoded back."""

from __future__ import annotations

from dataclasses import replace

import orjson
import pytest

from stream.cache.entry import CachedRating
from stream.cache.rebuild import _in_season, entry_from_changelog
from stream.config.modes import parse_modes
from stream.pipeline.view import StateView
from stream.protocol import RATINGS, RatingRecord, rating_key
from stream.ratings.skill import PlayerState


def changelog_record(state: PlayerState, version: int, recent: list[str]) -> tuple[bytes, bytes]:
    """Key and value exactly as the player agent writes them (StateView.changes)."""
    view = StateView({}, RATINGS)
    view.put(rating_key("alice", "ranked"), RatingRecord(state, version, recent))
    ((key, value),) = view.changes().items()
    assert value is not None
    return key, value


def test_a_record_becomes_the_entry_the_feed_would_write() -> None:
    state = PlayerState(1612.5, 88.25, 0.0599, 4200, 31, 1_780_000_123.456)
    key, value = changelog_record(state, 31, ["m29", "m30", "m31"])
    entry = entry_from_changelog(key, value)
    assert entry is not None
    assert (entry.player_id, entry.mode, entry.version, entry.match_id) == (
        "alice",
        "ranked",
        31,
        "m31",
    )
    assert (entry.rating, entry.deviation, entry.volatility) == (1612.5, 88.25, 0.0599)
    assert (entry.rank_points, entry.games, entry.updated_at_ms) == (4200, 31, 1_780_000_123_456)
    assert not entry.unknown


def test_elo_states_have_no_volatility_and_tombstones_are_skipped() -> None:
    key, value = changelog_record(PlayerState(1016.0, 0.0, None, 12, 1, 5.0), 1, ["m"])
    entry = entry_from_changelog(key, value)
    assert entry is not None and entry.volatility is None
    assert entry_from_changelog(key, None) is None


@pytest.mark.parametrize(
    ("key", "value"),
    [
        (b"not json", b"{}"),
        (orjson.dumps(rating_key("a", "m")), b'{"s": [1, 2], "v": 1, "r": []}'),
        (orjson.dumps(rating_key("a", "m")), b'{"v": 1}'),
        (orjson.dumps("plain"), b'{"s": [1, 2, null, 3, 4, null], "v": 1, "r": []}'),
    ],
)
def test_malformed_records_are_a_value_error(key: bytes, value: bytes) -> None:
    with pytest.raises(ValueError, match="not a ratings-changelog record"):
        entry_from_changelog(key, value)


def test_a_rebuilt_entry_takes_the_season_of_its_last_match() -> None:
    modes = parse_modes({"modes": {"s": {"seasons": {"starts": ["2026-01-01"], "period_days": 1}}}})
    entry = CachedRating(
        "p", "s", 1500.0, 90.0, 0.06, 10, 3, 3, 1_767_225_600_000 + 86_400_500, "m"
    )
    assert _in_season(entry, modes).season == 2
    assert _in_season(replace(entry, mode="other"), modes).season is None
    assert _in_season(replace(entry, updated_at_ms=0), modes).season is None
    assert _in_season(entry, None).season is None
