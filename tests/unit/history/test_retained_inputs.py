"""The retained inputs as a history (stream/history/retained.py), its pure parts: the refusal of
inputs that retention has cut, and the join of starts to finishes with what is left out."""

from __future__ import annotations

import orjson

from stream.events import DEFAULT_LIMITS
from stream.history.retained import ExportReport, export_lines, retention_problem


def test_inputs_that_lost_their_first_records_are_refused_naming_the_partition() -> None:
    assert retention_problem({("match-started", 0): 0, ("match-finished", 1): 0}) is None
    problem = retention_problem(
        {("match-started", 0): 0, ("match-finished", 3): 1204, ("match-finished", 1): 7}
    )
    assert problem is not None and problem.startswith(
        "match-finished partition 1 starts at offset 7: the records before it are gone"
    )


def raw(event: dict[str, object]) -> tuple[int, bytes]:
    return 0, orjson.dumps(event)


def test_starts_join_finishes_and_what_a_history_cannot_hold_is_counted() -> None:
    starts = [
        raw(
            {
                "match_id": "m1",
                "mode": "x",
                "started_at": 1_780_000_000_000,
                "teams": [["a"], ["b"]],
            }
        ),
        raw(
            {
                "match_id": "m1",
                "mode": "x",
                "started_at": 1_780_000_001_000,
                "teams": [["z"], ["b"]],
            }
        ),
        raw(
            {
                "match_id": "m2",
                "mode": "x",
                "started_at": 1_780_000_000_000,
                "teams": [["c"], ["d"]],
            }
        ),
        (0, b"not json"),
    ]
    finishes = [
        raw({"match_id": "m1", "mode": "x", "finished_at": 1_780_000_060_000, "ranks": [0, 1]}),
        raw({"match_id": "m1", "mode": "x", "finished_at": 1_780_000_070_000, "ranks": [1, 0]}),
        raw({"match_id": "m3", "mode": "x", "finished_at": 1_780_000_060_000, "ranks": [1, 0]}),
        raw(
            {
                "match_id": "m4",
                "mode": "x",
                "finished_at": "2026-05-28T20:30:00Z",
                "ranks": [2],
                "teams": [["e"], ["f"]],
            }
        ),
    ]
    report = ExportReport()
    lines = [orjson.loads(x) for x in export_lines(starts, finishes, DEFAULT_LIMITS, report)]
    # The first start and the first finish of m1; m3 has no line-up; m4's ranks are invalid.
    assert lines == [
        {
            "match_id": "m1",
            "mode": "x",
            "finished_at": 1_780_000_060_000,
            "ranks": [0, 1],
            "teams": [["a"], ["b"]],
            "started_at": 1_780_000_000_000,
        }
    ]
    assert (report.matches, report.repeated_finishes, report.without_line_up) == (1, 1, 1)
    assert (report.unreadable, report.started_only, report.records) == (2, 1, 8)


def test_a_finish_that_does_not_fit_its_starts_line_up_is_left_out_as_live_refuses_it() -> None:
    # Without teams of its own, a finish's parties, quitters and ranks are checked against
    # its start's line-up when the two meet: live dead-letters one that does not fit (and
    # rates a later finish that does), so the export leaves it out the same way.
    start = {"match_id": "m", "mode": "x", "started_at": 1_780_000_000_000}
    starts = [raw({**start, "teams": [["a", "b"], ["c", "d"]]})]
    finish = {"match_id": "m", "mode": "x", "finished_at": 1_780_000_060_000, "ranks": [0, 1]}
    finishes = [
        raw({**finish, "parties": [["a", "c"]]}),
        raw({**finish, "quitters": ["z"]}),
        raw({**finish, "ranks": [0, 1, 2]}),
        raw({**finish, "parties": [["a", "b"]]}),
    ]
    report = ExportReport()
    lines = [orjson.loads(x) for x in export_lines(starts, finishes, DEFAULT_LIMITS, report)]
    assert [line["parties"] for line in lines] == [[["a", "b"]]]
    assert (report.matches, report.unreadable, report.repeated_finishes) == (1, 3, 0)
