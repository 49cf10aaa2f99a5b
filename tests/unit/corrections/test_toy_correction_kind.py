"""A new kind of correction is one module and one registry entry (docs/architecture.md, "What a
change touches"): the toy ``cap`` of tests/toy_correction.py, registered for a test, is read
from a corrections file and written back, applied by replay at its effective time exactly as
a change of the player's state by hand, and reported when it caps nobody, with nothing of the
project told about it (the worker's side: tests/unit/pipeline/test_input_corrections.py)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from toy_correction import Cap, registered

from stream.config.modes import Modes
from stream.corrections.corrections_file import read_corrections
from stream.corrections.ledger import Ledger
from stream.corrections.records import Audit, Kind, correction_json, parse_correction
from stream.history import HistoryMatch
from stream.history.model import HistoryError
from stream.offline.corrected import rated_in_order
from stream.offline.replayer import Replayer
from stream.ratings.engine import MatchView, rate_player
from stream.ratings.skill import PlayerState

T0 = 1_780_000_000.0
LINE = (
    '{"id": "cap-1", "kind": "cap", "by": "ops", "at": "2026-05-28T00:00:00Z",'
    ' "reason": "test", "mode": "ranked", "player": "a", "ceiling": 1450,'
    ' "effective": "2026-05-28T20:00:00Z"}'
)


@pytest.fixture
def cap() -> Iterator[Kind[Cap]]:
    with registered() as kind:
        yield kind


def wins(n: int) -> list[HistoryMatch]:
    """``a`` beats ``b`` ``n`` times, ten minutes apart."""
    first = HistoryMatch(
        0, "m0", "ranked", T0 + 60.0, (("a",), ("b",)), (0, 1), None, frozenset(), T0
    )
    return [
        first._replace(row=i, match_id=f"m{i}", at=T0 + 600.0 * i + 60.0, started_at=T0 + 600.0 * i)
        for i in range(n)
    ]


def test_an_unregistered_kind_is_refused_by_name() -> None:
    refusal = "'kind' must be void, adjust, erase, ban or rerate, got 'cap'"
    with pytest.raises(ValueError, match=refusal):
        parse_correction(
            {"id": "x", "kind": "cap", "by": "o", "at": "2026-05-28T00:00:00Z", "reason": "r"}
        )


def test_a_registered_kind_reads_and_writes_its_records(cap: Kind[Cap], tmp_path: Path) -> None:
    path = tmp_path / "corrections.jsonl"
    path.write_text(LINE + "\n")
    [(line, read)] = read_corrections(path)
    assert line == 1 and isinstance(read, Cap) and read.ceiling == 1450.0
    assert parse_correction(correction_json(read)) == read
    path.write_text(LINE.replace('"ceiling": 1450', '"ceiling": "high"') + "\n")
    with pytest.raises(HistoryError, match="line 1: 'ceiling' must be a number"):
        read_corrections(path)
    # The registry's own check of unknown fields covers it too.
    path.write_text(LINE.replace('"ceiling"', '"celing": 1, "ceiling"') + "\n")
    with pytest.raises(HistoryError, match="a cap has no field 'celing'; did you mean 'ceiling'"):
        read_corrections(path)


def test_replay_applies_it_at_its_time_as_a_change_by_hand(cap: Kind[Cap]) -> None:
    history = wins(8)
    ceiling = Cap(Audit("cap-1", "ops", T0, "test"), "ranked", "a", 1540.0, T0 + 600.0 * 5)
    replayer = Replayer(Modes())
    ledger = Ledger([(1, ceiling)], source="corrections.jsonl")
    for match, _ in rated_in_order(history, replayer, play_order=False, ledger=ledger):
        replayer.apply(match)
    got = replayer.tables["ranked"]
    assert not ledger.unmatched()
    # By hand: five wins, a's rating capped, three more wins from there.
    mode = Modes().get("ranked")
    a: PlayerState | None = None
    b: PlayerState | None = None
    for i, match in enumerate(history):
        if i == 5:
            assert a is not None and a.rating > 1540.0  # the cap does something
            a = ceiling.changed(mode.algorithm.limits, a)
        view = MatchView(match.teams, match.ranks, match.at)
        snapshots = {p: s for p, s in (("a", a), ("b", b)) if s is not None}
        a, b = (
            rate_player(mode, "a", a, view, snapshots).state,
            rate_player(mode, "b", b, view, snapshots).state,
        )
    assert (got["a"], got["b"]) == (a, b)


def test_one_that_caps_nobody_is_reported_in_its_own_words(cap: Kind[Cap]) -> None:
    nobody = Cap(Audit("cap-2", "ops", T0, "test"), "ranked", "zed", 1400.0, T0)
    replayer = Replayer(Modes())
    ledger = Ledger([(3, nobody)], source="corrections.jsonl")
    for match, _ in rated_in_order(wins(2), replayer, play_order=False, ledger=ledger):
        replayer.apply(match)
    assert ledger.unmatched() == [
        "corrections.jsonl line 3: cap 'cap-2' caps nobody: 'zed' played no match in 'ranked'"
    ]


READERS = (
    "corrections/ledger.py",
    "corrections/inputs.py",
    "corrections/resolve.py",
    "offline/corrected.py",
    "offline/explaining.py",
    "pipeline/players.py",
    "pipeline/matches.py",
    "ratingchanged.py",
)


@pytest.mark.parametrize("reader", READERS)
def test_the_readers_of_corrections_name_no_kind(reader: str) -> None:
    # What lets a kind be one module: the readers know effects, not records.
    import stream

    source = (Path(stream.__file__).parent / reader).read_text()
    named = re.findall(r"\b(?:Void|Adjust|Erase|Rerate)\b|corrections\.kinds", source)
    assert not named, f"{reader} names {named}"
