"""Correction records: what each kind reads, every mistake named by its field, the JSON form
read back as written, and a corrections file's mistakes named by their line."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from stream.corrections.corrections_file import read_corrections
from stream.corrections.records import (
    KINDS,
    Adjust,
    Audit,
    Ban,
    Correction,
    Erase,
    Rerate,
    Void,
    correction_json,
    kind_of,
    parse_correction,
)
from stream.history.model import HistoryError

AUDIT = {"id": "c-1", "by": "ops", "at": "2026-11-25T08:00:00Z", "reason": "cheater banned"}
T = 1_780_000_000.0
WINDOW = {"from": 1_780_000_000_000, "until": 1_780_000_100_000}


def record(**fields: Any) -> dict[str, Any]:
    return {**AUDIT, **fields}


def test_each_kind_reads_as_written() -> None:
    audit = Audit("c-1", "ops", 1_795_593_600.0, "cheater banned")
    assert parse_correction(record(kind="void", matches=["m1", "m2", "m1"])) == Void(
        audit, matches=frozenset({"m1", "m2"})
    )
    window = parse_correction(
        record(kind="void", player="x", **{"from": 1_780_000_000_000}, until=1_780_000_100_000)
    )
    assert window == Void(audit, player="x", since=1_780_000_000.0, until=1_780_000_100.0)
    adjust = parse_correction(
        record(
            kind="adjust", mode="ranked", player="a", shift=-25, effective="2026-11-25T00:00:00Z"
        )
    )
    assert adjust == Adjust(audit, "ranked", "a", -25.0, True, 1_795_564_800.0)
    assert parse_correction(record(kind="erase", pseudonym="erased-ab")) == Erase(
        audit, "erased-ab"
    )
    rerate = parse_correction(record(kind="rerate", generation=2, group="g2", shadow="rc-g2"))
    assert rerate == Rerate(audit, 2, "g2", "rc-g2")
    ban = parse_correction(record(kind="ban", mode="ranked", player="x", **WINDOW))
    assert ban == Ban(audit, "ranked", "x", 1_780_000_000.0, 1_780_000_100.0, "refund")
    voids = parse_correction(
        record(kind="ban", mode="r", player="x", policy="void", matches=["m2", "m1"], **WINDOW)
    )
    assert voids == Ban(
        audit, "r", "x", 1_780_000_000.0, 1_780_000_100.0, "void", frozenset({"m1", "m2"})
    )


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"kind": "undo", "matches": ["m"]}, "'kind' must be void, adjust, erase, ban or rerate"),
        ({"kind": "ban", "mode": "m", "player": "p", "until": 1_780_000_000_000}, "missing 'from'"),
        (
            {"kind": "ban", "mode": "m", "player": "p", "from": 1_780_000_100_000, "until": 1},
            "'until': ",
        ),
        (
            {
                "kind": "ban",
                "mode": "m",
                "player": "p",
                "from": 1_780_000_100_000,
                "until": 1_780_000_000_000,
            },
            "'from' must be before 'until'",
        ),
        (
            {"kind": "ban", "mode": "m", "player": "p", "policy": "refnd", **WINDOW},
            "'policy' must be 'refund' or 'void', got 'refnd'; did you mean 'refund'?",
        ),
        (
            {"kind": "ban", "mode": "m", "player": "p", "matches": ["m1"], **WINDOW},
            "'matches' (a resolved void's ids) goes with 'policy': 'void'",
        ),
        ({"kind": "ban", "player": "p", **WINDOW}, "missing 'mode'"),
        ({"kind": "rerate", "generation": 1, "group": "g", "shadow": "s"}, "'generation' must"),
        ({"kind": "rerate", "generation": 2, "shadow": "s"}, "missing 'group'"),
        ({"kind": "void"}, "a void names 'matches'"),
        ({"kind": "void", "matches": []}, "'matches' must be a list of 1 to 100,000 match ids"),
        ({"kind": "void", "matches": [""]}, "'matches[]' must be a string"),
        ({"kind": "void", "matches": ["m"], "player": "p"}, "not both"),
        ({"kind": "void", "player": "p", "until": 1_780_000_000_000}, "missing 'from'"),
        (
            {"kind": "void", "player": "p", "from": 1_780_000_100_000, "until": 1_780_000_000_000},
            "'from' must be before 'until'",
        ),
        (
            {"kind": "adjust", "mode": "m", "player": "p", "effective": 1_780_000_000_000},
            "exactly one",
        ),
        (
            {"kind": "adjust", "mode": "m", "player": "p", "set": 1, "shift": 2},
            "exactly one of 'set'",
        ),
        (
            {"kind": "adjust", "mode": "m", "player": "p", "set": "high", "effective": 0},
            "'set' must be a number",
        ),
        (
            {"kind": "adjust", "mode": "m", "player": "p", "shift": 1e9, "effective": 0},
            "'shift' must be a finite number within",
        ),
        ({"kind": "adjust", "mode": "m", "player": "p", "shift": 1}, "missing 'effective'"),
        ({"kind": "erase", "pseudonym": "erased-x", "player": "alice"}, "unexpected: player"),
        (
            {"kind": "void", "matches": ["m"], "mathces": ["n"]},
            "a void has no field 'mathces'; did you mean 'matches'?",
        ),
        (
            {
                "kind": "adjust",
                "mode": "m",
                "player": "p",
                "shift": 1,
                "effective": "2026-11-25T00:00:00Z",
                "efective": 0,
            },
            "an adjust has no field 'efective'",
        ),
        ({"kind": "erase", "pseudonym": "erased-x", "reason": ""}, "'reason' must be a string"),
        ({"kind": "erase", "pseudonym": "erased-x", "at": "yesterday"}, "'at': expected an RFC"),
    ],
)
def test_each_mistake_names_its_field(fields: dict[str, Any], named: str) -> None:
    with pytest.raises(ValueError, match=re.escape(named)):
        parse_correction(record(**fields))


ids = st.text(st.characters(codec="utf-8"), min_size=1, max_size=12)
ids = ids.filter(lambda s: bool(s.strip()))
times = st.integers(200_000_000, 4_000_000_000).map(lambda s: s / 1.0)


@st.composite
def corrections(draw: st.DrawFn) -> Correction:
    audit = Audit(draw(ids), draw(ids), draw(times), draw(ids))
    kind = draw(st.sampled_from(["ids", "window", "adjust", "erase", "rerate", "ban"]))
    if kind == "ids":
        return Void(audit, matches=frozenset(draw(st.lists(ids, min_size=1, max_size=4))))
    if kind == "window":
        since = draw(times)
        return Void(
            audit,
            player=draw(ids),
            since=since,
            until=since + draw(st.integers(1, 10**6)),
            mode=draw(st.none() | ids),
        )
    if kind == "adjust":
        value = draw(st.floats(-1e6, 1e6))
        return Adjust(audit, draw(ids), draw(ids), value, draw(st.booleans()), draw(times))
    if kind == "rerate":
        return Rerate(audit, draw(st.integers(2, 10**6)), draw(ids), draw(ids))
    if kind == "ban":
        since = draw(times)
        until = since + draw(st.integers(1, 10**6))
        if draw(st.booleans()):
            return Ban(audit, draw(ids), draw(ids), since, until)
        voided = frozenset(draw(st.lists(ids, max_size=3)))
        return Ban(audit, draw(ids), draw(ids), since, until, "void", voided)
    return Erase(audit, "erased-" + draw(ids))


@given(corrections())
def test_the_json_form_reads_back_as_written(correction: Correction) -> None:
    assert parse_correction(orjson.loads(orjson.dumps(correction_json(correction)))) == correction


def test_a_files_mistakes_are_named_by_line(tmp_path: Path) -> None:
    good = orjson.dumps(record(kind="void", matches=["m1"])).decode()
    path = tmp_path / "c.jsonl"
    path.write_text(f"{good}\n\n{{oops\n")
    with pytest.raises(HistoryError, match=re.escape(f"{path} line 3: not valid JSON")):
        read_corrections(path)
    path.write_text(f"{good}\n{good}\n")
    with pytest.raises(
        HistoryError, match=re.escape("line 2: correction id 'c-1' is used on line 1")
    ):
        read_corrections(path)
    path.write_text("\n")
    with pytest.raises(HistoryError, match="holds no correction"):
        read_corrections(path)
    path.write_text(f"\n{good}\n")
    assert [line for line, _ in read_corrections(path)] == [2]


def test_every_kind_is_registered_once_and_named_in_the_refusal() -> None:
    assert list(KINDS) == ["void", "adjust", "erase", "ban", "rerate"]
    assert all(name == kind.name for name, kind in KINDS.items())
    assert len({kind.record for kind in KINDS.values()}) == len(KINDS)
    # Only an erasure needs the pseudonym key to be applied.
    assert [kind.name for kind in KINDS.values() if kind.needs_key] == ["erase"]
    with pytest.raises(
        ValueError, match="'kind' must be void, adjust, erase, ban or rerate, got 7"
    ):
        parse_correction(record(kind=7))


@given(corrections())
def test_a_record_is_of_the_kind_its_json_names(correction: Correction) -> None:
    assert kind_of(correction).name == correction_json(correction)["kind"]
    assert isinstance(correction, kind_of(correction).record)
