"""The hand-over of a re-rate (stream/corrections/handover.py), on generated generations: what
rating-changed holds afterwards, read as a consumer reads it, is exactly the new generation's
history; the cache's rule (each player's highest version) gives the new generation's latest
state; versions only grow; a hand-over interrupted at any record and run again publishes the
rest and nothing twice; an unchanged history publishes nothing."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from stream.corrections.handover import Handover, latest_changes

PLAYERS = [f"p{i}" for i in range(6)]
# Rating-changed events as a consumer reads them; the old generation's and a re-rate's.
Events = list[dict[str, Any]]
Generations = tuple[Events, Events]

# A match: its two players, each one's rating after it.
MatchSpec = tuple[int, int, int, int]
matches_st = st.lists(
    st.tuples(st.integers(0, 5), st.integers(0, 5), st.integers(0, 3), st.integers(0, 3)).filter(
        lambda m: m[0] != m[1]
    ),
    min_size=1,
    max_size=25,
)


def events_of(matches: list[tuple[str, MatchSpec]]) -> Events:
    """The rating-changed events of a history: per player a version counting their changes."""
    versions: dict[str, int] = {}
    out = []
    for match_id, (a, b, ra, rb) in matches:
        for player, rating in ((PLAYERS[a], ra), (PLAYERS[b], rb)):
            versions[player] = versions.get(player, 0) + 1
            out.append(
                {
                    "player_id": player,
                    "mode": "1v1",
                    "match_id": match_id,
                    "rating": 1500.0 + rating,
                    "games": versions[player],
                    "version": versions[player],
                }
            )
    return out


@st.composite
def generations(draw: st.DrawFn) -> Generations:
    """The old generation's events and a re-rate's: some matches voided, some rated again."""
    specs = draw(matches_st)
    old = [(f"m{i}", spec) for i, spec in enumerate(specs)]
    voided = draw(st.sets(st.integers(0, len(old) - 1), max_size=len(old)))
    changed = draw(st.sets(st.integers(0, len(old) - 1), max_size=len(old)))
    new = [
        (match_id, (a, b, ra + 10, rb) if i in changed else (a, b, ra, rb))
        for i, (match_id, (a, b, ra, rb)) in enumerate(old)
        if i not in voided
    ]
    return events_of(old), events_of(new)


def hand_over(published: Events, shadow: Events, stop_after: int | None = None) -> Events:
    """rating-changed after a hand-over that reads ``published`` and copies ``shadow``, cut
    short after ``stop_after`` records (a crash)."""
    handover = Handover(2, "test")
    for event in published:
        handover.read(event)
    out = list(published)

    def add(data: bytes | None) -> bool:
        if data is not None:
            out.append(orjson.loads(data))
        return stop_after is not None and len(out) - len(published) >= stop_after

    for event in shadow:
        if add(handover.handed(dict(event))):
            return out
    for data in handover.closing():
        if add(data):
            return out
    return out


def as_history(events: Events) -> dict[tuple[str, str, str], tuple[Any, ...]]:
    return {key: (e["rating"], e["games"]) for key, e in latest_changes(events).items()}


def cached(events: Events) -> dict[str, tuple[Any, ...]]:
    """What the cache keeps: each player's highest version, none after a removal above it."""
    best: dict[str, dict[str, Any]] = {}
    for e in events:
        if e["player_id"] not in best or best[e["player_id"]]["version"] < e["version"]:
            best[e["player_id"]] = e
    return {p: (e["rating"], e["games"]) for p, e in best.items() if not e.get("removed", False)}


def assert_reads_as(after: Events, new: Events) -> None:
    """A consumer of ``after`` finds ``new``'s history, and the cache ``new``'s last states."""
    assert as_history(after) == as_history(new)
    assert cached(after) == cached(new)


@settings(max_examples=300)
@given(generations())
def test_a_consumer_reads_the_new_generation_exactly(gens: Generations) -> None:
    old, new = gens
    assert_reads_as(hand_over(old, new), new)


@settings(max_examples=300)
@given(generations(), st.integers(0, 60))
def test_a_hand_over_cut_short_and_run_again_publishes_the_rest_once(
    gens: Generations, crash_after: int
) -> None:
    old, new = gens
    interrupted = hand_over(old, new, stop_after=crash_after)
    finished = hand_over(interrupted, new)
    # The same records, in the same order, as a hand-over that never stopped.
    assert finished == hand_over(old, new)
    assert_reads_as(finished, new)
    marks = [(e["player_id"], e["version"]) for e in finished[len(old) :]]
    assert len(marks) == len(set(marks)), "a record published twice"
    assert hand_over(finished, new) == finished  # a third run has nothing left to do


@settings(max_examples=200)
@given(generations())
def test_versions_only_grow_and_every_record_says_its_generation(gens: Generations) -> None:
    old, new = gens
    after = hand_over(old, new)
    top: dict[str, int] = {}
    for e in old:
        top[e["player_id"]] = max(top.get(e["player_id"], 0), e["version"])
    for e in after[len(old) :]:
        assert e["generation"] == 2
        assert e["version"] > top.get(e["player_id"], 0)


@given(matches_st)
def test_an_unchanged_history_publishes_nothing(specs: list[MatchSpec]) -> None:
    events = events_of([(f"m{i}", spec) for i, spec in enumerate(specs)])
    assert hand_over(events, events) == events


def test_a_voided_last_match_retracts_it_and_restates_the_one_before() -> None:
    old = events_of([("m0", (0, 1, 1, 2)), ("m1", (0, 1, 3, 0))])
    new = events_of([("m0", (0, 1, 1, 2))])
    after = hand_over(old, new)[len(old) :]
    retractions = [e for e in after if "retracted" in e]
    assert [(e["player_id"], e["retracted"], e["removed"]) for e in retractions] == [
        ("p0", ["m1"], False),
        ("p1", ["m1"], False),
    ]
    restated = [e for e in after if "retracted" not in e]
    assert {(e["player_id"], e["match_id"], e["rating"]) for e in restated} == {
        ("p0", "m0", 1501.0),
        ("p1", "m0", 1502.0),
    }
    marked = {"generation": 2, "reason": "test", "by": "skillstream", "replaces": 2}
    assert all(e["correction"] == marked for e in after)


def test_retractions_and_corrections_follow_their_schemas() -> None:
    schemas = Path(__file__).resolve().parents[3] / "stream/schemas"
    retracted = Draft202012Validator(
        json.loads((schemas / "rating-retracted.schema.json").read_text())
    )
    changed = json.loads((schemas / "rating-changed.schema.json").read_text())
    correction = Draft202012Validator(changed["properties"]["correction"])
    generation = Draft202012Validator(changed["properties"]["generation"])
    old = events_of([("m0", (0, 1, 1, 2)), ("m1", (0, 2, 3, 0))])
    new = events_of([("m0", (0, 1, 5, 2))])
    after = hand_over(old, new)[len(old) :]
    assert any(e.get("removed") for e in after)  # p2 played only the voided match
    for e in after:
        if "retracted" in e:
            retracted.validate(e)
        else:
            generation.validate(e["generation"])
            if "correction" in e:
                correction.validate(e["correction"])
