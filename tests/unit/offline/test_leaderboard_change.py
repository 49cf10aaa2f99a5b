"""A re-rate's dry run (stream.offline.leaderboard_change and `replay --leaderboard-change`):
places and scores before and after, who moved, and the command against a real replay."""

from __future__ import annotations

from pathlib import Path

import pytest
from builders import Duel, duel_lines

from stream.cli.main import main
from stream.offline.leaderboard_change import Placed, change_lines, leaderboard_changes
from stream.ratings.skill import PlayerState


def state(rating: float, points: int) -> PlayerState:
    return PlayerState(rating, 50.0, 0.06, points, 10, None)


def test_places_scores_and_moves() -> None:
    before = {"m": {"a": state(1600.0, 900), "b": state(1500.0, 800), "c": state(1400.0, 700)}}
    after = {"m": {"a": state(1500.0, 800), "b": state(1600.2, 900), "d": state(1300.0, 10)}}
    (change,) = leaderboard_changes(before, after, "rank_points", top=2)
    assert (change.players_before, change.players_after) == (3, 3)
    # a and b moved by 100 and 100.2; c is gone, d is new.
    assert change.moved == 4
    assert change.mean_move == pytest.approx(100.1) and change.largest_move == pytest.approx(100.2)
    assert change.top == [
        ("b", Placed(2, 800.0), Placed(1, 900.0)),
        ("a", Placed(1, 900.0), Placed(2, 800.0)),
    ]
    lines = change_lines([change], "rank_points")
    assert lines[0] == (
        "mode m: 3 players (3 before); 4 change (mean move 100.1 points, largest 100.2)"
    )
    assert lines[2].split() == ["1", "2", "b", "800.0", "->", "900.0"]


def test_an_unchanged_replay_moves_nobody() -> None:
    tables = {"m": {"a": state(1600.0, 900), "b": state(1500.0, 800)}}
    (change,) = leaderboard_changes(tables, tables, "rating")
    assert change.moved == 0 and change.largest_move == 0.0
    assert [(p, old.place, new.place) for p, old, new in change.top] == [("a", 1, 1), ("b", 2, 2)]


def test_the_dry_run_of_a_void_and_of_a_new_modes_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    history = tmp_path / "h.jsonl"
    rows: list[Duel] = [
        ("m1", "2026-03-01T10:00:00Z", "alice", "bob", [0, 1]),
        ("m2", "2026-03-01T11:00:00Z", "bob", "carol", [1, 0]),
        ("m3", "2026-03-02T10:00:00Z", "alice", "carol", [0, 1]),
    ]
    history.write_text(duel_lines(rows))
    corrections = tmp_path / "c.jsonl"
    corrections.write_text(
        '{"id":"c-1","kind":"void","by":"ops","at":"2026-11-25T08:00:00Z","reason":"r",'
        '"matches":["m3"]}\n'
    )
    code = main(
        [
            "replay",
            str(history),
            "--corrections",
            str(corrections),
            "--leaderboard-change",
            "--board",
            "rating",
        ]
    )
    out = capsys.readouterr().out.splitlines()
    assert code == 0
    # Voiding m3 moves alice and carol, not bob.
    assert out[0].startswith("mode duel: 3 players (3 before); 2 change")
    modes = tmp_path / "elo.toml"
    modes.write_text('[default]\nalgorithm = "elo"\n')
    new_file = ["replay", str(history), "--modes-file", str(modes), "--leaderboard-change"]
    assert main(new_file) == 0  # against itself: nothing moves
    assert "; 0 change (mean move 0.0" in capsys.readouterr().out
    code = main([*new_file, "built-in"])
    out = capsys.readouterr().out.splitlines()
    assert code == 0 and out[0].startswith("mode duel: 3 players (3 before); 3 change")
    with pytest.raises(SystemExit) as stopped:
        main(["replay", str(history), "--leaderboard-change", str(tmp_path / "none.toml")])
    assert stopped.value.code == 2
