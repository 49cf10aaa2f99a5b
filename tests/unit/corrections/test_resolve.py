"""Voids by player and window resolved to match ids (stream/corrections/resolve.py): the ids
are the player's matches finished in the window (in its mode only, when it names one), the
record keeps its id, author and reason, other corrections pass as they are, and a window that
is not over or voids nothing is refused with its line."""

from __future__ import annotations

import pytest

from stream.corrections.records import Audit, Ban, Erase, Void
from stream.corrections.resolve import resolved
from stream.errors import UserError

AUDIT = Audit("c-7", "ops", 0.0, "cheater banned")
MATCHES = [
    ("m1", "ranked", 100.0, frozenset({"eve", "bob"})),
    ("m2", "casual", 150.0, frozenset({"eve", "amy"})),
    ("m3", "ranked", 200.0, frozenset({"eve", "amy"})),
    ("m4", "ranked", 250.0, frozenset({"bob", "amy"})),
    ("m5", "ranked", 300.0, frozenset({"eve", "bob"})),
]


def test_a_window_becomes_the_ids_it_holds_with_its_audit_kept() -> None:
    window = Void(AUDIT, player="eve", since=100.0, until=300.0)
    erase = Erase(Audit("c-8", "ops", 0.0, "gdpr"), "erased-" + "0" * 32)
    out = resolved([(1, window), (2, erase)], MATCHES, "f.jsonl")
    assert out == [Void(AUDIT, matches=frozenset({"m1", "m2", "m3"})), erase]


def test_a_window_in_one_mode_takes_that_mode_only() -> None:
    window = Void(AUDIT, player="eve", since=100.0, until=300.0, mode="casual")
    assert resolved([(1, window)], MATCHES, "f") == [Void(AUDIT, matches=frozenset({"m2"}))]


def test_a_window_not_over_or_empty_is_refused_with_its_line() -> None:
    open_ended = Void(AUDIT, player="eve", since=100.0, until=400.0)
    with pytest.raises(UserError, match=r"^f line 4: void 'c-7' runs until .* after the newest"):
        resolved([(4, open_ended)], MATCHES, "f")
    empty = Void(AUDIT, player="zed", since=100.0, until=300.0)
    with pytest.raises(UserError, match=r"^f line 2: void 'c-7' voids nothing: 'zed'"):
        resolved([(2, empty)], MATCHES, "f")


def test_a_ban_that_voids_becomes_its_ids_and_a_refund_passes_as_it_is() -> None:
    voids = Ban(AUDIT, "ranked", "eve", 100.0, 300.0, "void")
    refunds = Ban(AUDIT, "ranked", "eve", 100.0, 300.0)
    out = resolved([(1, voids), (2, refunds)], MATCHES, "f")
    assert out == [
        Ban(AUDIT, "ranked", "eve", 100.0, 300.0, "void", frozenset({"m1", "m3"})),
        refunds,
    ]
    with pytest.raises(UserError, match=r"^f line 5: ban 'c-7' voids nothing: 'zed'"):
        resolved([(5, Ban(AUDIT, "ranked", "zed", 100.0, 300.0, "void"))], MATCHES, "f")
    with pytest.raises(UserError, match=r"^f line 6: ban 'c-7' runs until"):
        resolved([(6, Ban(AUDIT, "ranked", "eve", 100.0, 400.0, "void"))], MATCHES, "f")
