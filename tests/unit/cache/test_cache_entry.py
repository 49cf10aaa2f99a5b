"""CachedRating from rating-changed events, as the pipeline writes them."""

from __future__ import annotations

import re
from typing import Any

import orjson
import pytest

from stream.cache.entry import CachedRating
from stream.events import format_time
from stream.ratingchanged import rating_changed
from stream.ratings.explain import Explanation
from stream.ratings.modeconfig import ModeConfig
from stream.ratings.skill import PlayerState

AT = 1_767_323_045.25  # 2026-01-02T03:04:05.250Z
WHY = Explanation(score=1.0, expected=0.5, step=324.6217878125954, offset=-12.5)


def event(**changes: Any) -> dict[str, Any]:
    produced = rating_changed(
        player_id="p1",
        mode=ModeConfig("ranked-1v1"),
        match_id="m-9",
        outcome="win",
        before=PlayerState(1500.0, 350.0, 0.06),
        after=PlayerState(1662.3108939062977, 290.31896371798047, 0.059999, 24, 1, AT),
        version=1,
        expected_score=0.5,
        at=AT,
        why=WHY,
    )
    # Through JSON, as a consumer of the topic sees it.
    decoded: dict[str, Any] = orjson.loads(orjson.dumps(produced))
    decoded.update(changes)
    return decoded


def test_from_the_pipelines_event() -> None:
    entry = CachedRating.from_rating_changed(event())
    assert entry == CachedRating(
        player_id="p1",
        mode="ranked-1v1",
        rating=1662.3108939062977,
        deviation=290.31896371798047,
        volatility=0.059999,
        rank_points=24,
        games=1,
        version=1,
        updated_at_ms=1_767_323_045_250,
        match_id="m-9",
    )
    assert not entry.unknown
    # The explanation rides along for the history (not part of the cached state).
    assert (entry.why, entry.before) == (WHY, (1500.0, 350.0))
    assert entry.skill.rating == entry.rating and entry.skill.volatility == 0.059999
    assert entry.conservative(3.0) == 1662.3108939062977 - 3.0 * 290.31896371798047


def test_null_volatility_and_other_time_forms() -> None:
    entry = CachedRating.from_rating_changed(
        event(volatility=None, deviation=0, at="2026-01-02T04:04:05.250+01:00")
    )
    assert entry.volatility is None and entry.deviation == 0.0
    assert isinstance(entry.deviation, float)
    assert entry.updated_at_ms == 1_767_323_045_250
    assert CachedRating.from_rating_changed(event(at=1_767_323_045_251)).updated_at_ms == (
        1_767_323_045_251
    )
    assert format_time(AT) == event()["at"]


def test_fields_the_cache_does_not_use_are_optional() -> None:
    slim = event()
    for name in ("outcome", "previous", "expected_score", "algorithm"):
        del slim[name]
    slim["added-later"] = {"ignored": True}
    assert CachedRating.from_rating_changed(slim).version == 1


def test_missing_fields_are_all_named() -> None:
    broken = event()
    del broken["rating"], broken["version"]
    with pytest.raises(ValueError, match=r"missing field\(s\): rating, version"):
        CachedRating.from_rating_changed(broken)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"rating": "1500"}, "'rating': expected a number, got '1500'"),
        ({"rating": True}, "'rating': expected a number, got true"),
        ({"rating": float("nan")}, "'rating': nan is outside -1e+07..1e+07"),
        ({"deviation": -1.0}, "'deviation': -1.0 is outside 0..1e+07"),
        ({"version": 0}, "'version': 0 is outside 1..1000000000"),
        ({"version": 2.0}, "'version': expected an integer, got 2.0"),
        ({"games": -1}, "'games': -1 is outside 0..1000000000"),
        # Values no engine produces: cached, they would top a board or block a key for good.
        ({"rating": 1e308}, "'rating': 1e+308 is outside -1e+07..1e+07"),
        ({"rating": -float("inf")}, "'rating': -inf is outside"),
        ({"deviation": 1e300}, "'deviation': 1e+300 is outside"),
        ({"volatility": float("inf")}, "'volatility': inf is outside"),
        ({"rank_points": 2**63}, "'rank_points': 9223372036854775808 is outside"),
        ({"version": 2**63 + 5}, "'version': 9223372036854775813 is outside 1..1000000000"),
        ({"games": 10**12}, "'games': 1000000000000 is outside 0..1000000000"),
        ({"player_id": ""}, "'player_id': expected a string of 1 to 128"),
        ({"mode": "m" * 129}, "'mode': expected a string of 1 to 128"),
        ({"at": "2026-01-02T03:04:05"}, "'at': "),
        ({"at": 5}, "'at': expected epoch milliseconds"),
    ],
)
def test_bad_fields_are_refused(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        CachedRating.from_rating_changed(event(**changes))


def test_not_an_object() -> None:
    with pytest.raises(ValueError, match="must be an object"):
        CachedRating.from_rating_changed([1, 2])  # type: ignore[arg-type]


def test_unknown_default() -> None:
    state = PlayerState(1500.0, 350.0, 0.06, rank_points=7, games=3, last_played=5.0)
    entry = CachedRating.unknown_default("m", "p", state)
    assert entry.unknown and entry.version == 0 and entry.games == 0
    assert (entry.rating, entry.deviation, entry.volatility, entry.rank_points) == (
        1500.0,
        350.0,
        0.06,
        7,
    )


def test_an_event_from_before_explanations_is_cached_without_one() -> None:
    old = event()
    del old["why"]
    entry = CachedRating.from_rating_changed(old)
    assert entry.why is None and entry == CachedRating.from_rating_changed(event())


@pytest.mark.parametrize(
    ("why", "reason"),
    [
        ({"score": 1.0, "expected": 0.5, "step": 1e300}, "'why.step' is out of range"),
        ({"score": 2.0, "expected": 0.5, "step": 3.0}, "'why.score' must be within 0..1"),
        ({"expected": 0.5, "step": 3.0}, "'why' is missing 'score'"),
        ({"score": 1.0, "step": 3.0}, "'why' is missing 'expected'"),
        ({"score": 1.0, "expected": 0.5, "step": True}, "'why.step' must be a number"),
        ({"score": 1, "expected": 0.5, "bound": "up"}, "'why.bound' must be 'low' or 'high'"),
        ({"score": 1, "expected": 0, "reset": [1.0]}, "'why.reset' must be [rating, deviation]"),
        ([1, 2], "'why' must be an object"),
    ],
)
def test_a_forged_explanation_is_refused(why: object, reason: str) -> None:
    with pytest.raises(ValueError, match=re.escape(reason)):
        CachedRating.from_rating_changed(event(why=why))


def test_a_term_this_version_does_not_know_is_ignored_not_kept() -> None:
    newer = event(why={**WHY.to_json(), "momentum": 3.0})
    entry = CachedRating.from_rating_changed(newer)
    assert entry.why == WHY and "momentum" not in (entry.why.to_json() if entry.why else {})
