"""stream/pipeline/storeaudit.py's pure part: a changelog folded up to an offset, and the keys
in which a kept copy differs from it."""

from __future__ import annotations

from stream.pipeline.storeaudit import Copy, differences, fold

LOG = [(0, b"p1", b"a"), (1, b"p2", b"b"), (2, b"p1", b"c"), (3, b"p2", None), (4, b"p3", b"d")]


def test_a_changelog_folds_last_write_wins_and_deletes_up_to_the_offset() -> None:
    assert fold(LOG, 0) == {b"p1": b"a"}
    assert fold(LOG, 2) == {b"p1": b"c", b"p2": b"b"}
    assert fold(LOG, 3) == {b"p1": b"c"}
    assert fold(LOG, 99) == {b"p1": b"c", b"p3": b"d"}
    assert fold([(0, None, b"x")], 0) == {}  # a record without a key is no table entry


def test_a_copy_differs_in_changed_missing_and_extra_keys() -> None:
    log_table = fold(LOG, 2)
    same = Copy("ratings", "t", 0, 2, {b"p1": b"c", b"p2": b"b"})
    assert differences(same, log_table) == []
    changed = Copy("ratings", "t", 0, 2, {b"p1": b"a", b"p2": b"b", b"p9": b"z"})
    assert differences(changed, log_table) == [b"p1", b"p9"]
    missing = Copy("ratings", "t", 0, 2, {b"p1": b"c"})
    assert differences(missing, log_table) == [b"p2"]
