"""The chaos harness's checks, on hand-made inputs: each must pass on agreement and fail on
the disagreement it exists for."""

from __future__ import annotations

from typing import Any

import orjson

from stream.chaos.verify import (
    RatingLog,
    cache_behind,
    cache_mismatches,
    check_crashes,
    check_exactly_once,
    check_games,
    check_replay,
    check_stores,
    event_fields,
    last_events,
    longest_wait,
)
from stream.ratings.skill import PlayerState


def event(
    player: str, match: str, version: int, rating: float = 1500.0, **extra: Any
) -> dict[str, Any]:
    return {
        "player_id": player,
        "mode": "1v1",
        "match_id": match,
        "outcome": "win",
        "rating": rating,
        "deviation": 200.0,
        "volatility": 0.06,
        "rank_points": 100 * version,
        "games": version,
        "version": version,
        "at": "2026-01-01T00:00:00Z",
        **extra,
    }


def raw(*events: dict[str, Any]) -> list[bytes]:
    return [orjson.dumps(e) for e in events]


def state(version: int, rating: float = 1500.0) -> PlayerState:
    return PlayerState(rating, 200.0, 0.06, 100 * version, version, None)


# --- exactly once -------------------------------------------------------------------------------


def test_one_event_per_pair_passes_and_identical_copies_are_counted() -> None:
    a1, a2, b1 = raw(event("a", "m1", 1), event("a", "m2", 2), event("b", "m1", 1))
    check, redeliveries = check_exactly_once(
        [a1, b1, a1, a2, bytes(a1)], {("a", "m1"), ("a", "m2"), ("b", "m1")}
    )
    assert check.passed, check.detail
    assert redeliveries == 2
    assert "2 byte-identical redeliveries" in check.detail


def test_two_different_events_for_one_pair_fail() -> None:
    first, second = raw(event("a", "m1", 1), event("a", "m1", 1, rating=1600.0))
    check, _ = check_exactly_once([first, second], {("a", "m1")})
    assert not check.passed
    assert "two different events" in check.detail
    assert "a@m1" in check.detail


def test_the_same_content_in_another_byte_order_is_a_different_event() -> None:
    # Redeliveries are byte-identical: the pipeline produces the same bytes for the same
    # input, so anything else means the match was rated twice.
    e = event("a", "m1", 1)
    reordered = orjson.dumps(dict(reversed(list(e.items()))))
    check, _ = check_exactly_once([orjson.dumps(e), reordered], {("a", "m1")})
    assert not check.passed


def test_missing_unexpected_and_undecodable_records_fail() -> None:
    (a1,) = raw(event("a", "m1", 1))
    missing, _ = check_exactly_once([a1], {("a", "m1"), ("b", "m1")})
    assert not missing.passed
    assert "1 never rated: b@m1" in missing.detail
    unexpected, _ = check_exactly_once([a1], set())
    assert not unexpected.passed
    assert "not expected" in unexpected.detail
    broken, _ = check_exactly_once([a1, b"{not json", b'{"player_id": "x"}'], {("a", "m1")})
    assert not broken.passed
    assert "2 records are not rating-changed events" in broken.detail


# --- replay -------------------------------------------------------------------------------------


def test_final_states_equal_to_the_replay_pass() -> None:
    last = last_events(raw(event("a", "m1", 1), event("a", "m2", 2, 1510.0), event("b", "m1", 1)))
    check = check_replay(last, {"1v1": {"a": state(2, 1510.0), "b": state(1)}})
    assert check.passed, check.detail


def test_last_event_is_the_highest_version_whatever_the_order() -> None:
    last = last_events([*raw(event("a", "m2", 2, 1510.0), event("a", "m1", 1)), b"junk"])
    assert last[("1v1", "a")]["version"] == 2


def test_a_rating_off_by_a_hair_fails() -> None:
    last = last_events(raw(event("a", "m1", 1, 1500.0000000001)))
    check = check_replay(last, {"1v1": {"a": state(1)}})
    assert not check.passed
    assert "1v1/a" in check.detail


def test_a_version_that_is_not_the_games_fails() -> None:
    e = event("a", "m1", 1)
    e["version"] = 2  # applied twice: the version moved, the state did not
    check = check_replay(last_events(raw(e)), {"1v1": {"a": state(1)}})
    assert not check.passed


def test_games_counted_as_replay_counts_them_pass_whatever_the_ratings() -> None:
    """A history with starts read late: applied out of the order of play, the ratings differ
    from replay's; every result applied once is what is checked."""
    last = last_events(raw(event("a", "m1", 1, 1490.0), event("a", "m2", 2, 1520.0)))
    check = check_games(last, {"1v1": {"a": state(2, 1510.0)}})
    assert check.passed, check.detail


def test_a_result_lost_or_applied_twice_fails_the_games_check() -> None:
    lost = check_games(last_events(raw(event("a", "m1", 1))), {"1v1": {"a": state(2)}})
    assert not lost.passed and "1v1/a" in lost.detail
    twice = event("a", "m1", 1)
    twice["version"] = 2
    assert not check_games(last_events(raw(twice)), {"1v1": {"a": state(1)}}).passed


def test_a_player_missing_on_either_side_fails() -> None:
    last = last_events(raw(event("a", "m1", 1)))
    check = check_replay(last, {"1v1": {"a": state(1), "b": state(1)}})
    assert not check.passed
    assert "1v1/b: missing from live" in check.detail
    check = check_replay(last, {"1v1": {}})
    assert not check.passed
    assert "missing from replay" in check.detail


# --- cache --------------------------------------------------------------------------------------


def test_cache_equal_to_the_last_events_has_no_mismatch() -> None:
    log = RatingLog()
    for value in raw(event("a", "m1", 1), event("a", "m2", 2), event("b", "m1", 1)):
        log.add(value)
    expected = log.expected()
    assert expected[("1v1", "a")][5] == 2
    assert cache_mismatches(expected, dict(expected)) == []


def test_a_cached_entry_that_differs_or_is_missing_is_a_mismatch() -> None:
    expected = {("1v1", "a"): event_fields(event("a", "m2", 2))}
    stale = {("1v1", "a"): event_fields(event("a", "m1", 1))}
    assert len(cache_mismatches(expected, stale)) == 1
    other = {("1v1", "a"): event_fields(event("a", "m2", 2, rating=1499.0))}
    assert "cache" in cache_mismatches(expected, other)[0]
    assert cache_mismatches(expected, {}) == ["1v1/a: missing from cache"]


def test_caught_up_means_at_least_the_floor_and_equal_to_the_version_cached() -> None:
    log = RatingLog()
    for value in raw(event("a", "m1", 1), event("a", "m2", 2), event("b", "m1", 1)):
        log.add(value)
    floor = {("1v1", "a"): 1, ("1v1", "b"): 1}
    newer = {
        ("1v1", "a"): log.by_version[("1v1", "a", 2)],
        ("1v1", "b"): log.expected()[("1v1", "b")],
    }
    assert cache_behind(floor, log.by_version, newer) == []
    behind = cache_behind(
        {("1v1", "a"): 2}, log.by_version, {("1v1", "a"): (*newer["1v1", "a"][:5], 1)}
    )
    assert behind and "version 1 cached" in behind[0]
    assert "nothing cached" in cache_behind(floor, log.by_version, {})[0]
    unseen = {("1v1", "a"): event_fields(event("a", "m3", 3)), ("1v1", "b"): newer[("1v1", "b")]}
    assert "not (yet) seen" in cache_behind(floor, log.by_version, unseen)[0]
    wrong = dict(newer)
    wrong[("1v1", "b")] = event_fields(event("b", "m1", 1, rating=1.0))
    assert cache_behind(floor, log.by_version, wrong)[0].startswith("1v1/b: cache")


def test_rating_log_tracks_pairs_versions_and_bad_records() -> None:
    log = RatingLog()
    for value in [*raw(event("a", "m2", 2), event("a", "m1", 1)), b"nope"]:
        log.add(value)
    assert log.has(("a", "m1")) and not log.has(("b", "m1"))
    assert log.versions == {("1v1", "a"): 2}
    assert log.undecodable == 1
    assert len(log.records) == 3


# --- crashes and waits --------------------------------------------------------------------------


def test_any_unexpected_exit_fails() -> None:
    assert check_crashes([]).passed
    check = check_crashes(["w1 (pid 7) exited with 1 at 30.0 s"])
    assert not check.passed
    assert "w1 (pid 7)" in check.detail


def test_longest_wait_counts_waves_in_flight_during_the_fault() -> None:
    waves = {
        0: (0.0, 0.1),  # before the fault
        1: (1.0, 25.0),  # in flight at the injection (2.0): waited 23 s from it
        2: (25.1, 25.2),  # after the fault ended (22.0)
    }
    assert longest_wait(waves, 2.0, 22.0) == 23.0
    assert longest_wait({0: (1.0, None)}, 2.0, 5.0) == 3.0
    assert longest_wait(waves, 30.0, 31.0) is None


def test_store_audits_pass_when_every_kept_partition_equals_its_changelog() -> None:
    lines = [
        "w0.0: [..] [1] [INFO] store audit: 12 kept partition(s) compared, 0 differ, 0 given up",
        "w1.0: [..] [2] [INFO] store audit: 20 kept partition(s) compared, 0 differ, 0 given up",
    ]
    check = check_stores(lines)
    assert check.passed
    assert check.detail.startswith("2 audit(s) after recoveries: 32 kept partition(s)")


def test_a_kept_partition_that_differs_or_cannot_be_read_fails_the_stores_check() -> None:
    differs = "w1.0: [..] [2] [ERROR] store audit: ratings[3] at changelog offset 40 differs"
    unread = "w0.1: [..] [3] [ERROR] store audit: the changelog of x[1] ends before that offset"
    for line in (differs, unread):
        check = check_stores(
            [
                line,
                "w0.0: [..] [INFO] store audit: 4 kept partition(s) compared, 0 differ, 0 given up",
            ]
        )
        assert not check.passed
        assert "1 audit error(s)" in check.detail
    # No audit, or every read given up: no evidence, so a failure.
    for lines in (
        [],
        ["w0.0: [..] [INFO] store audit: 0 kept partition(s) compared, 0 differ, 4 given up"],
    ):
        nothing = check_stores(lines)
        assert not nothing.passed
        assert "compared no kept partition" in nothing.detail
    # Audits that ran before anything was written hold nothing: a pass that says so.
    empty = check_stores(
        ["w0.1: [..] [INFO] store audit: 0 kept partition(s) compared, 0 differ, 0 given up"]
    )
    assert empty.passed
    assert empty.detail.startswith("1 audit(s) after recoveries, each before any changelog record")
