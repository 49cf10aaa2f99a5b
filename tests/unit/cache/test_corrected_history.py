"""A re-rate's corrections as the cache keeps them: read from rating-changed, kept in the history
element, worded for a support agent; a malformed one is refused with its field named."""

from __future__ import annotations

import dataclasses
from typing import Any

import orjson
import pytest

from stream.cache.entry import CachedRating, Correction, correction_of
from stream.cache.history import counted, decode_history, encode_history, entry_of, worded
from stream.cache.writer import match_key

EVENT: dict[str, Any] = {
    "player_id": "a",
    "mode": "ranked",
    "match_id": 'm-"7"',
    "outcome": "win",
    "rating": 1600.0,
    "deviation": 90.0,
    "volatility": 0.06,
    "rank_points": 40,
    "games": 4,
    "version": 9,
    "at": 1_767_225_600_000,
    "generation": 2,
    "correction": {"generation": 2, "reason": "voids", "by": "ops", "replaces": 4},
}


def test_a_correction_survives_the_history_element() -> None:
    change = CachedRating.from_rating_changed(EVENT)
    assert change.generation == 2
    assert change.correction == Correction(2, "voids", "ops", 4)
    (entry,) = decode_history([encode_history(change)])
    assert entry == entry_of(change)
    assert entry.corrected == Correction(2, "voids", "ops", 4)


def test_an_element_from_before_corrections_reads_without_one() -> None:
    plain = {k: v for k, v in EVENT.items() if k not in ("generation", "correction")}
    change = CachedRating.from_rating_changed(plain)
    assert (change.generation, change.correction) == (None, None)
    (entry,) = decode_history([encode_history(change)])
    assert (entry.corrected, entry.retracted, entry.replaced_rating) == (None, None, None)


def test_the_match_key_is_how_the_element_spells_the_match() -> None:
    change = CachedRating.from_rating_changed(EVENT)
    assert match_key(change) in encode_history(change)
    first = {k: v for k, v in EVENT.items() if k not in ("generation", "correction")}
    assert match_key(CachedRating.from_rating_changed(first)) == ""
    new = {k: v for k, v in EVENT.items() if k != "correction"}  # a re-rate's first word
    assert match_key(CachedRating.from_rating_changed(new)) == ""


def test_a_marked_element_is_left_out_of_the_history() -> None:
    change = CachedRating.from_rating_changed(EVENT)
    element = encode_history(change)
    mark = orjson.dumps(Correction(3, "void", None, 9).to_json()).decode()
    retracted = element[:-1] + ',"retracted":' + mark + "}"
    entries = decode_history([retracted, element])
    assert entries[0].retracted == Correction(3, "void", None, 9)
    assert counted(entries) == [entries[1]]


def test_a_correction_is_worded_with_who_why_and_what_it_replaced() -> None:
    change = CachedRating.from_rating_changed({**EVENT, "correction": None})
    entry = entry_of(change)
    corrected = dataclasses.replace(entry, corrected=Correction(2, "voids", "ops", 4))
    replaced = dataclasses.replace(corrected, replaced_rating=1650.4)
    assert worded(corrected, "a")[-1] == (
        'This change is a correction: re-rate generation 2 by ops ("voids") replaced the change'
        " first published for this match (version 4)."
    )
    assert worded(replaced, "a")[-1].endswith("(version 4), which had left the rating at 1650.")
    assert not worded(entry, "a")[-1].startswith("This change is a correction")


@pytest.mark.parametrize(
    "value",
    [
        None,
        {"generation": 1, "reason": "r", "replaces": 1},
        {"generation": 2, "reason": 5, "replaces": 1},
        {"generation": 2, "reason": "r", "replaces": 0},
        {"generation": 2, "reason": "r", "by": 3, "replaces": 1},
        {"generation": True, "reason": "r", "replaces": 1},
        {"generation": 2, "reason": "r" * 800, "replaces": 1},
    ],
)
def test_a_malformed_correction_is_refused_naming_the_field(value: object) -> None:
    with pytest.raises(ValueError, match=r"^correction: expected"):
        correction_of(value)
    if value is not None:
        with pytest.raises(ValueError, match="rating-changed field correction: expected"):
            CachedRating.from_rating_changed({**EVENT, "correction": value})


REFUND: dict[str, Any] = {
    **EVENT,
    "outcome": "refunded",
    "refund": {"by": "ana", "reason": "aimbot", "banned": "x", "ban": "c-9"},
}


def test_a_refund_survives_the_history_element_and_is_worded_with_the_ban() -> None:
    change = CachedRating.from_rating_changed(REFUND)
    assert change.refunded == ("ana", "aimbot", "x", "c-9")
    (entry,) = decode_history([encode_history(change)])
    assert entry == entry_of(change) and entry.refunded == change.refunded
    assert worded(entry, "a") == [
        'Match m-"7" no longer counts for a: refunded: their opponent x was banned by an'
        " operator (ana, c-9): aimbot.",
        "The rating stays at 1600 (uncertainty 90), where it was before the match.",
        # A refund comes with a re-rate: what it replaced is said as for any correction.
        'This change is a correction: re-rate generation 2 by ops ("voids") replaced the change'
        " first published for this match (version 4).",
    ]
    banned = CachedRating.from_rating_changed({**REFUND, "player_id": "x"})
    assert worded(entry_of(banned), "x")[0].startswith('Match m-"7" no longer counts for x: x')
    plain = CachedRating.from_rating_changed(EVENT)
    assert entry_of(plain).refunded is None and '"refunded"' not in encode_history(plain)


@pytest.mark.parametrize(
    "value", ["aimbot", {"by": "ana", "reason": "r", "banned": "x"}, {"by": 1}]
)
def test_a_malformed_refund_is_refused_naming_the_field(value: object) -> None:
    with pytest.raises(ValueError, match="rating-changed field 'refund': expected an object"):
        CachedRating.from_rating_changed({**REFUND, "refund": value})
