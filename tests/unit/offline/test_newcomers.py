"""Observed minus predicted score by a player's match number (stream.offline.newcomers)."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from stream.cli.main import main
from stream.config.modes import Modes
from stream.history import HistoryMatch
from stream.offline.newcomers import newcomer_calibration
from stream.offline.replayer import Replayer


def match(n: int, teams: tuple[tuple[str, ...], ...], ranks: tuple[int, ...]) -> HistoryMatch:
    return HistoryMatch(n, f"m{n}", "2v2", 1_767_225_600.0 + n, teams, ranks, None, frozenset())


def test_counts_each_players_matches_from_both_sides_of_every_pair() -> None:
    history = [
        match(1, (("a", "b"), ("c", "d")), (0, 1)),
        match(2, (("a", "e"), ("c", "f")), (1, 0)),
    ]
    rows = newcomer_calibration(history, Replayer(Modes()), rows=3)
    first, second, third = rows
    # Match 1: four debuts at 0.5; match 2: e and f debut, a and c play their second.
    assert first.predictions == 6
    assert second.predictions == 2
    assert third.predictions == 0
    assert math.isnan(third.gap)
    assert first.predicted == pytest.approx(3.0, abs=0.2)  # six predictions near 0.5
    assert first.observed == 3.0  # a, b, f won; c, d, e lost
    assert second.observed == 1.0  # a lost, c won
    assert second.gap == pytest.approx(1.0 / 2 - second.predicted / 2)


def test_prints_a_row_per_match_number(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "h.csv"
    path.write_text("played_at,player_a,player_b,score_a\n2026-01-01T00:00:00Z,a,b,1\n")
    assert main(["study", "newcomers", str(path), "--matches", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3
    assert lines[1].split() == ["1", "2", "0.500", "0.500", "+0.000"]


def test_a_malformed_history_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "h.csv"
    path.write_text("played_at,player_a,player_b,score_a\n2026-01-01T00:00:00Z,a,b,2\n")
    assert main(["study", "newcomers", str(path)]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1
    assert "h.csv line 2" in err
