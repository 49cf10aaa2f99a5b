"""The checks of a chaos run, as pure functions over what the run collected.

1. replay: each (mode, player)'s last rating-changed (highest version) equals an offline replay
   of the same matches exactly, and its version equals its games;
2. exactly once: every (player, match) that should be rated has exactly one distinct
   rating-changed; byte-identical copies (redeliveries after a crash) are allowed and counted;
3. cache: each player's cached entry equals their last rating-changed;
4. crashes: no worker exited that the harness did not kill.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from stream.cache.entry import CachedRating
from stream.ratings.skill import PlayerState

# The summary line of one store audit (stream/pipeline/storeaudit.py).
AUDITED = re.compile(r"store audit: (\d+) kept partition\(s\) compared, \d+ differ, (\d+) given up")

__all__ = [
    "Check",
    "Fields",
    "RatingLog",
    "cache_behind",
    "cache_mismatches",
    "cached_fields",
    "check_crashes",
    "check_exactly_once",
    "check_replay",
    "check_stores",
    "event_fields",
    "last_events",
    "longest_wait",
]

# (rating, deviation, volatility, rank_points, games, version): what must agree everywhere.
Fields = tuple[float, float, float | None, int, int, int]
Key = tuple[str, str]  # (mode, player id)
Pair = tuple[str, str]  # (player id, match id)

# Mismatches listed in a check's detail; the rest are counted.
SHOWN = 5


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    passed: bool
    detail: str

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "passed": self.passed, "detail": self.detail}


def event_fields(event: Mapping[str, Any]) -> Fields:
    return (
        event["rating"],
        event["deviation"],
        event["volatility"],
        event["rank_points"],
        event["games"],
        event["version"],
    )


def cached_fields(entry: CachedRating) -> Fields:
    return _fields(entry, entry.version)


def _state_fields(state: PlayerState) -> Fields:
    # A player's version counts their rating changes, one per rated match: their games.
    return _fields(state, state.games)


def _fields(held: CachedRating | PlayerState, version: int) -> Fields:
    """The :data:`Fields` of a cached entry or a replayed state, at ``version``."""
    return (held.rating, held.deviation, held.volatility, held.rank_points, held.games, version)


@dataclass
class RatingLog:
    """The rating-changed events seen so far, as they arrive (what waves wait on)."""

    records: list[bytes] = field(default_factory=list)
    distinct: dict[Pair, bytes] = field(default_factory=dict)
    # (mode, player, version) -> fields, to check a cache entry of any version seen.
    by_version: dict[tuple[str, str, int], Fields] = field(default_factory=dict)
    versions: dict[Key, int] = field(default_factory=dict)
    undecodable: int = 0

    def add(self, value: bytes) -> None:
        self.records.append(value)
        try:
            event = orjson.loads(value)
            pair = (event["player_id"], event["match_id"])
            key = (event["mode"], event["player_id"])
            fields = event_fields(event)
        except (orjson.JSONDecodeError, KeyError, TypeError):
            self.undecodable += 1
            return
        self.distinct.setdefault(pair, value)
        self.by_version.setdefault((*key, fields[5]), fields)
        if fields[5] > self.versions.get(key, 0):
            self.versions[key] = fields[5]

    def has(self, pair: Pair) -> bool:
        return pair in self.distinct

    def expected(self) -> dict[Key, Fields]:
        """Each (mode, player)'s fields at their highest version seen."""
        return {key: self.by_version[(*key, v)] for key, v in self.versions.items()}


def last_events(values: Iterable[bytes]) -> dict[Key, dict[str, Any]]:
    """Each (mode, player)'s rating-changed event with the highest version (undecodable
    records are skipped: :func:`check_exactly_once` reports them)."""
    last: dict[Key, dict[str, Any]] = {}
    for value in values:
        try:
            event = orjson.loads(value)
            key = (event["mode"], event["player_id"])
            version = event["version"]
        except (orjson.JSONDecodeError, KeyError, TypeError):
            continue
        if key not in last or version > last[key]["version"]:
            last[key] = event
    return last


def check_exactly_once(values: Sequence[bytes], expected: Iterable[Pair]) -> tuple[Check, int]:
    """Check 2, and the number of redeliveries (byte-identical extra copies).

    Fails for a (player, match) with two different events, an expected pair without any, an
    event for a pair nobody expected, or a record that is not a rating-changed event.
    """
    first: dict[Pair, bytes] = {}
    redeliveries = 0
    conflicts: list[str] = []
    undecodable = 0
    for value in values:
        try:
            event = orjson.loads(value)
            pair = (event["player_id"], event["match_id"])
        except (orjson.JSONDecodeError, KeyError, TypeError):
            undecodable += 1
            continue
        seen = first.get(pair)
        if seen is None:
            first[pair] = value
        elif seen == value:
            redeliveries += 1
        else:
            conflicts.append(f"{pair[0]}@{pair[1]}")
    wanted = set(expected)
    missing = sorted(f"{p}@{m}" for p, m in wanted - first.keys())
    unexpected = sorted(f"{p}@{m}" for p, m in first.keys() - wanted)
    problems = []
    if conflicts:
        problems.append(f"{len(conflicts)} with two different events: {_few(conflicts)}")
    if missing:
        problems.append(f"{len(missing)} never rated: {_few(missing)}")
    if unexpected:
        problems.append(f"{len(unexpected)} rated but not expected: {_few(unexpected)}")
    if undecodable:
        problems.append(f"{undecodable} records are not rating-changed events")
    if problems:
        return Check("exactly-once", False, "; ".join(problems)), redeliveries
    detail = (
        f"{len(first):,} (player, match) pairs, one distinct event each; "
        f"{redeliveries:,} byte-identical redeliveries"
    )
    return Check("exactly-once", True, detail), redeliveries


def check_replay(
    last: Mapping[Key, Mapping[str, Any]],
    replayed: Mapping[str, Mapping[str, PlayerState]],
) -> Check:
    """Check 1: every (mode, player)'s last live event equals the offline replay exactly
    (rating, deviation, volatility, rank_points, games), and its version equals its games."""
    offline = {
        (mode, pid): _state_fields(state)
        for mode, table in replayed.items()
        for pid, state in table.items()
    }
    live = {key: event_fields(event) for key, event in last.items()}
    problems = _differences(live, offline, "live", "replay")
    if problems:
        return Check("replay", False, f"{len(problems)} differ: {_few(problems)}")
    return Check("replay", True, f"{len(live):,} players' final states equal the replay exactly")


def check_games(
    last: Mapping[Key, Mapping[str, Any]],
    replayed: Mapping[str, Mapping[str, PlayerState]],
) -> Check:
    """Check 1 for a history with starts read late, which are applied out of the order of play
    (docs/event-time.md, "Late starts"), so the ratings differ from replay's: every (mode,
    player)'s last live event counts the games the replay counts and its version equals them,
    so every result was applied to the rating, once."""
    offline: dict[Key, tuple[int, ...]] = {
        (mode, pid): (state.games, state.games)
        for mode, table in replayed.items()
        for pid, state in table.items()
    }
    live: dict[Key, tuple[int, ...]] = {
        key: (event["games"], event["version"]) for key, event in last.items()
    }
    problems = _differences(live, offline, "live", "replay")
    if problems:
        return Check("games", False, f"{len(problems)} differ: {_few(problems)}")
    return Check("games", True, f"{len(live):,} players' games and versions equal the replay's")


def cache_mismatches(expected: Mapping[Key, Fields], cached: Mapping[Key, Fields]) -> list[str]:
    """How the cache differs from ``expected`` (each player's last rating-changed fields);
    empty if every expected entry is cached exactly. Entries not expected are ignored."""
    return _differences(
        {key: cached[key] for key in expected if key in cached}, expected, "cache", "rated"
    )


def cache_behind(
    floor: Mapping[Key, int],
    known: Mapping[tuple[str, str, int], Fields],
    cached: Mapping[Key, Fields],
) -> list[str]:
    """How the cache is still behind while the stream goes on: each (mode, player) in
    ``floor`` must be cached at that version or a newer one, and the cached fields must equal
    the rating-changed event of the cached version (``known``: every version seen). Empty:
    the cache has caught up with ``floor``."""
    problems = []
    for key, version in floor.items():
        entry = cached.get(key)
        label = f"{key[0]}/{key[1]}"
        if entry is None or entry[5] < version:
            have = "nothing" if entry is None else f"version {entry[5]}"
            problems.append(f"{label}: {have} cached, version {version} rated")
            continue
        event = known.get((*key, entry[5]))
        if event is None:
            problems.append(f"{label}: version {entry[5]} cached, not (yet) seen rated")
        elif event != entry:
            problems.append(f"{label}: cache {entry} != rated {event}")
    return problems


def longest_wait(
    waves: Mapping[int, tuple[float, float | None]], start: float, end: float
) -> float | None:
    """The longest time a wave waited for its ratings from ``start`` on, among the waves in
    flight at some moment in [start, end]; ``waves`` maps a wave to (published, rated) times,
    rated None for a wave never rated (it waits until ``end``). None if no wave was in flight.
    """
    longest: float | None = None
    for published, rated in waves.values():
        done = end if rated is None else rated
        if published > end or done < start:
            continue
        wait = done - max(published, start)
        longest = wait if longest is None else max(longest, wait)
    return longest


def check_crashes(exits: Sequence[str]) -> Check:
    """Check 4: ``exits`` describes each worker exit the harness did not cause."""
    if exits:
        return Check("crashes", False, f"{len(exits)} unexpected worker exit(s): {_few(exits)}")
    return Check("crashes", True, "no worker exited except those killed")


def _differences(
    got: Mapping[Key, tuple[object, ...]],
    want: Mapping[Key, tuple[object, ...]],
    got_name: str,
    want_name: str,
) -> list[str]:
    problems = []
    for key in sorted(want.keys() | got.keys()):
        label = f"{key[0]}/{key[1]}"
        if key not in got:
            problems.append(f"{label}: missing from {got_name}")
        elif key not in want:
            problems.append(f"{label}: missing from {want_name}")
        elif got[key] != want[key]:
            problems.append(f"{label}: {got_name} {got[key]} != {want_name} {want[key]}")
    return problems


def _few(items: Sequence[str]) -> str:
    shown = ", ".join(items[:SHOWN])
    return shown if len(items) <= SHOWN else f"{shown}, ... ({len(items) - SHOWN} more)"


def check_stores(lines: Sequence[str]) -> Check:
    """Check 7: the workers' store audits (stream/pipeline/storeaudit.py): ``lines`` are their
    ``store audit:`` lines; any error (a kept partition that differs from its changelog, or
    whose changelog ends before the offset it claims, or an audit that failed) fails, and so
    does a run with no audit, or whose audits gave up every read. Audits that found no
    partition held (every recovery came before anything was written to a changelog: a single
    worker killed in its first second) pass, saying so: there was nothing to compare."""
    errors = [line for line in lines if "[ERROR]" in line]
    if errors:
        return Check("stores", False, f"{len(errors)} audit error(s): {_few(errors)}")
    checked = audits = given_up = 0
    for line in lines:
        found = AUDITED.search(line)
        if found:
            audits += 1
            checked += int(found.group(1))
            given_up += int(found.group(2))
    if audits == 0 or (checked == 0 and given_up > 0):
        return Check(
            "stores",
            False,
            f"{audits} store audit(s) compared no kept partition (SKILLSTREAM_AUDIT_STORES off,"
            " or every read given up)",
        )
    if checked == 0:
        return Check(
            "stores",
            True,
            f"{audits} audit(s) after recoveries, each before any changelog record: no partition"
            " held yet to compare",
        )
    return Check(
        "stores",
        True,
        f"{audits} audit(s) after recoveries: {checked:,} kept partition(s) equal to their"
        " changelogs",
    )
