"""Scored predictions (stream.offline.predictions) and their JSON-lines file."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stream.config.modes import Modes
from stream.history import HistoryError, HistoryMatch
from stream.offline.predictions import Prediction, experience_bucket, predictions
from stream.offline.predictions_file import read_predictions, write_predictions
from stream.offline.replayer import Replayer

DAY = 86_400.0


def match(
    at: float,
    teams: tuple[tuple[str, ...], ...],
    ranks: tuple[int, ...],
    mode: str | None = None,
    quitters: frozenset[str] = frozenset(),
) -> HistoryMatch:
    return HistoryMatch(0, f"m{at}", mode, at, teams, ranks, None, quitters)


HISTORY = [
    match(0 * DAY, (("a",), ("b",)), (0, 1)),
    match(1 * DAY, (("a",), ("c",)), (1, 0)),
    match(2 * DAY, (("a", "b"), ("c", "d")), (0, 1), mode="2v2"),
    match(3 * DAY, (("a",), ("b",), ("c",)), (0, 1, 1), mode="ffa"),
    match(4 * DAY, (("a",), ("b",)), (0, 1), quitters=frozenset({"b"})),
    match(5 * DAY, (("a",), ("b",)), (1, 0)),
]


def test_experience_buckets_have_the_issue_s_edges() -> None:
    assert [experience_bucket(g) for g in (0, 1, 4, 5, 19, 20, 500)] == [
        "0",
        "1-4",
        "1-4",
        "5-19",
        "5-19",
        "20+",
        "20+",
    ]
    with pytest.raises(ValueError, match="-1"):
        experience_bucket(-1)


@given(st.integers(0, 10_000))
def test_games_grow_into_later_buckets(games: int) -> None:
    order = ["0", "1-4", "5-19", "20+"]
    assert order.index(experience_bucket(games)) <= order.index(experience_bucket(games + 1))


def test_every_scored_pair_is_one_prediction_with_its_context() -> None:
    scored = list(predictions(HISTORY, Replayer(Modes())))
    # Rows count every match from 1 in file order; the quitters' match (row 5) is not scored.
    assert [(p.row, p.teams) for p in scored] == [
        (1, (0, 1)),
        (2, (0, 1)),
        (3, (0, 1)),
        (4, (0, 1)),
        (4, (0, 2)),
        (4, (1, 2)),
        (6, (0, 1)),
    ]
    by_key = {p.key: p for p in scored}
    assert by_key[(1, 0, 1)].games == 0
    # Before row 2, a has one game and c none: the less experienced has 0.
    assert by_key[(2, 0, 1)].games == 0
    # Modes are rated apart: in 2v2 everyone starts afresh.
    assert by_key[(3, 0, 1)].games == 0
    assert by_key[(3, 0, 1)].team_size == 2
    assert by_key[(3, 0, 1)].mode == "2v2"
    assert by_key[(4, 1, 2)].mode == "ffa"
    # Row 6 in the default mode: a played rows 1, 2 and 5, b rows 1 and 5 (quitters' matches
    # are rated, only not scored).
    assert by_key[(6, 0, 1)].games == 2
    assert by_key[(6, 0, 1)].mode == "default"
    assert [p.actual for p in scored] == [1.0, 0.0, 1.0, 1.0, 1.0, 0.5, 0.0]
    assert all(p.at == HISTORY[p.row - 1].at for p in scored)


def test_since_and_skip_only_train() -> None:
    assert [p.row for p in predictions(HISTORY, Replayer(Modes()), since=3 * DAY)] == [4, 4, 4, 6]
    assert [p.row for p in predictions(HISTORY, Replayer(Modes()), skip=3)] == [4, 4, 4, 6]


def test_the_predictions_file_round_trips(tmp_path: Path) -> None:
    scored = list(predictions(HISTORY, Replayer(Modes())))
    path = tmp_path / "p.jsonl"
    with path.open("wb") as out:
        passed = list(write_predictions(out, scored))
    assert passed == scored
    read = read_predictions(path)
    assert set(read) == {p.key for p in scored}
    for p in scored:
        assert read[p.key].p == p.p
        assert read[p.key].actual == p.actual
    first = path.read_text().splitlines()[0]
    assert '"played_at":"1970-01-01T00:00:00Z"' in first
    assert '"games":0,"team_size":1,"sizes":[1,1],"mode":"default"' in first


def test_a_peer_file_needs_only_row_and_p(tmp_path: Path) -> None:
    path = tmp_path / "peer.jsonl"
    path.write_text('{"row": 2, "p": 0.25}\n\n{"row": 4, "teams": [1, 2], "p": 1}\n')
    read = read_predictions(path)
    assert read[(2, 0, 1)].p == 0.25
    assert read[(2, 0, 1)].actual is None
    assert read[(4, 1, 2)].line == 3


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        (
            '{"row": 1, "p": 0.5}\n{"row": 1, "p": 0.4}\n',
            "line 2: row 1 teams [0, 1] already on line 1",
        ),
        ('{"row": 0, "p": 0.5}\n', "line 1: row must be a whole number >= 1"),
        ('{"row": 1.5, "p": 0.5}\n', "row must be a whole number"),
        ('{"row": 1, "p": 1.5}\n', "p must be a probability between 0 and 1, got 1.5"),
        ('{"row": 1}\n', "p must be a probability"),
        ('{"row": 1, "p": "0.5"}\n', "p must be a number"),
        ('{"row": 1, "p": 0.5, "actual": 2}\n', "actual must be 1, 0.5 or 0"),
        ('{"row": 1, "p": 0.5, "teams": [1, 0]}\n', "teams must be two team indices"),
        ("[1, 0.5]\n", "expected a JSON object"),
        ("{row: 1}\n", "line 1: not valid JSON"),
        ("\n", "no predictions in the file"),
    ],
)
def test_a_bad_predictions_file_names_the_line(tmp_path: Path, text: str, reason: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(text)
    with pytest.raises(HistoryError) as raised:
        read_predictions(path)
    assert str(raised.value).startswith(str(path))
    assert reason in str(raised.value)


def test_written_lines_are_one_object_each() -> None:
    p = Prediction(7, (0, 1), 1.5 * DAY, 0.75, 0.5, 3, 2, "duo")
    out = io.BytesIO()
    list(write_predictions(out, [p, p]))
    lines = out.getvalue().splitlines()
    assert lines[0] == lines[1]
    assert lines[0].startswith(b'{"row":7,"teams":[0,1],"played_at":"1970-01-02T12:00:00Z"')
