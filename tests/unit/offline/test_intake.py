"""The offline intake: bad rows stop or are skipped and counted, rejected modes are named with
their line, and a repeated match id is rated once, as the live worker rates it."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream.config.modes import Modes, parse_modes
from stream.config.settings import Settings
from stream.history import HistoryError
from stream.offline.intake import (
    DUPLICATE_WINDOW_SECONDS,
    NAMED_ROWS,
    Intake,
    RecentMatchIds,
    unseeded_modes,
)
from stream.offline.replayer import Replayer
from stream.protocol import RECENT_MATCHES

HEADER = "played_at,player_a,player_b,score_a\n"
T0 = 1_767_323_045_000  # epoch milliseconds


def event(match_id: str, at_ms: int, a: str = "a", b: str = "b", mode: str = "duel") -> str:
    return orjson.dumps(
        {
            "match_id": match_id,
            "mode": mode,
            "finished_at": at_ms,
            "teams": [[a], [b]],
            "ranks": [0, 1],
        }
    ).decode()


def jsonl(tmp_path: Path, lines: list[str]) -> Path:
    path = tmp_path / "h.jsonl"
    path.write_text("".join(line + "\n" for line in lines))
    return path


def test_the_window_is_the_live_workers_retention() -> None:
    assert Settings().worker.retention_seconds == DUPLICATE_WINDOW_SECONDS


def test_a_repeat_within_the_window_is_recognised_whatever_its_players() -> None:
    recent = RecentMatchIds(per_player=False)
    assert not recent.repeated("m1", 100.0, "duel", [["a"], ["b"]])
    assert recent.repeated("m1", 100.0, "duel", [["c"], ["d"]])
    assert recent.repeated("m1", 100.0 + DUPLICATE_WINDOW_SECONDS, "duel", [["a"], ["b"]])


def test_after_the_window_only_the_players_recent_matches_remember() -> None:
    later = 100.0 + DUPLICATE_WINDOW_SECONDS + 1.0
    forgetful = RecentMatchIds(per_player=False)
    forgetful.repeated("m1", 100.0, "duel", [["a"], ["b"]])
    forgetful.repeated("m2", later, "duel", [["x"], ["y"]])
    assert not forgetful.repeated("m1", 100.0, "duel", [["a"], ["b"]])

    for mode, repeated in (("duel", True), ("casual", False)):
        recent = RecentMatchIds()
        recent.repeated("m1", 100.0, "duel", [["a"], ["b"]])
        recent.repeated("m2", later, "duel", [["x"], ["y"]])
        # The live rating records are per player and mode.
        assert recent.repeated("m1", 100.0, mode, [["a"], ["b"]]) is repeated


def test_a_player_remembers_only_the_last_matches() -> None:
    recent = RecentMatchIds(window_seconds=0.0)
    recent.repeated("old", 0.0, "duel", [["a"], ["b"]])
    for i in range(RECENT_MATCHES):
        recent.repeated(f"m{i}", float(i + 1), "duel", [["a"], ["b"]])
    assert not recent.repeated("old", 0.0, "duel", [["a"], ["b"]])


@settings(deadline=None)
@given(st.lists(st.integers(0, 30), min_size=1, max_size=60))
def test_each_match_id_is_let_through_once_within_the_window(ids: list[int]) -> None:
    recent = RecentMatchIds()
    passed = [i for i in ids if not recent.repeated(f"m{i}", 0.0, "duel", [["a"], ["b"]])]
    assert sorted(passed) == sorted(set(ids))


def test_replay_rates_a_repeated_match_id_once(tmp_path: Path) -> None:
    once = jsonl(tmp_path, [event("m1", T0), event("m2", T0 + 1000, "b", "c")])
    twice = tmp_path / "twice.jsonl"
    lines = once.read_text().splitlines()
    twice.write_text("\n".join([lines[0], lines[0], lines[1], lines[0]]) + "\n")
    replayed = []
    for path in (once, twice):
        replayer = Replayer(Modes())
        intake = Intake(path, Modes())
        for match in intake:
            replayer.apply(match)
        replayed.append((dict(replayer.tables["duel"]), intake.report.duplicates))
    assert replayed[0] == (replayed[1][0], 0)
    assert replayed[1][1] == 2
    assert replayed[0][0]["a"].games == 1


def bad_csv(tmp_path: Path, bad_lines: int) -> Path:
    rows = []
    for i in range(10):
        rows.append(f"{T0 + i},a{i},b{i},{'2' if i < bad_lines else '1'}\n")
    path = tmp_path / "h.csv"
    path.write_text(HEADER + "".join(rows))
    return path


def test_a_bad_row_stops_by_default(tmp_path: Path) -> None:
    with pytest.raises(HistoryError, match=r"h.csv line 2: score_a must be"):
        list(Intake(bad_csv(tmp_path, 1), Modes()))


def test_skipped_rows_are_counted_and_the_first_named(tmp_path: Path) -> None:
    intake = Intake(bad_csv(tmp_path, 7), Modes(), skip_bad_rows=True)
    assert len(list(intake)) == 3
    report = intake.report
    assert report.skipped == 7
    assert [e.line for e in report.first_skipped] == list(range(2, 2 + NAMED_ROWS))
    (line,) = report.lines()
    assert line.startswith(f"skipped 7 bad rows of {tmp_path / 'h.csv'} (lines 2, 3, 4, 5, 6, ...)")
    assert "score_a must be 1, 0.5 or 0, got '2'" in line


def test_an_overlong_json_line_is_skipped_whole(tmp_path: Path) -> None:
    path = jsonl(tmp_path, [event("m1", T0), "{" + "x" * 70_000, event("m2", T0 + 1)])
    intake = Intake(path, Modes(), skip_bad_rows=True)
    assert [m.match_id for m in intake] == ["m1", "m2"]
    assert intake.report.skipped == 1 and intake.report.first_skipped[0].line == 2


def test_a_rejected_mode_names_the_line_or_is_skipped(tmp_path: Path) -> None:
    modes = parse_modes({"default": {"unlisted": "reject"}, "modes": {"duel": {}}})
    path = jsonl(tmp_path, [event("m1", T0), event("m2", T0 + 1, mode="other")])
    with pytest.raises(HistoryError) as info:
        list(Intake(path, modes, modes_source="m.toml"))
    assert str(info.value) == (
        f"{path} line 2: mode 'other' is not in m.toml, which rejects unlisted modes"
    )
    intake = Intake(path, modes, skip_bad_rows=True)
    assert [m.match_id for m in intake] == ["m1"]
    assert intake.report.skipped == 1
    # --mode rates every match as one accepted mode: nothing is rejected.
    assert len(list(Intake(path, modes, "duel"))) == 2


def test_a_seed_mode_no_match_is_rated_in_is_said_with_the_closest() -> None:
    seeds = {"rankd": ("s.jsonl", 3), "ranked": ("s.jsonl", 1)}
    assert unseeded_modes(seeds, {"ranked", "casual"}) == [
        "s.jsonl line 3: the seeds' mode 'rankd' has no match in the history, so its seeds"
        " start nobody; did you mean 'ranked'?"
    ]
    assert unseeded_modes(seeds, {"ranked", "rankd"}) == []
