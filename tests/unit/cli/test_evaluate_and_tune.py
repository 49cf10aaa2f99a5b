"""`skillstream evaluate` breakdowns, predictions and comparisons; `tune` with a time split;
the mistakes both refuse with one line."""

from __future__ import annotations

import io
import sys
import tomllib
from pathlib import Path

import orjson
import pytest

from stream.cli.main import main
from stream.simulation import SimulationConfig, simulate, write_csv, write_jsonl

MATCHES = 2000
# About 60 matches a day: the history spans some 33 days, enough for day-clustered errors.
PER_SECOND = 0.0007


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("h") / "history.csv"
    config = SimulationConfig(
        matches=MATCHES,
        players=100,
        seed=8,
        matches_per_second=PER_SECOND,
        matchmaking_noise=600.0,
    )
    with path.open("w", newline="") as f:
        write_csv(simulate(config), f)
    return path


@pytest.fixture(scope="module")
def team_history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("t") / "teams.jsonl"
    with path.open("w") as f:
        write_jsonl(simulate(SimulationConfig(matches=300, players=40, team_size=2, seed=3)), f)
        write_jsonl(simulate(SimulationConfig(matches=300, players=40, teams=3, seed=4)), f)
    return path


def main_exit(argv: list[str]) -> int:
    """``main``, with argparse's exit (a mistake found while parsing) as a return code."""
    try:
        return main(argv)
    except SystemExit as exc:
        return int(str(exc.code))


def refusal(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """The one error line `skillstream ARGV` exits 2 with."""
    assert main_exit(argv) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith(f"skillstream {argv[0]}: error: ")
    return lines[0]


def middle_date(path: Path) -> str:
    rows = path.read_text().splitlines()[1:]
    stamps = sorted(row.split(",")[0] for row in rows)
    return stamps[len(stamps) // 2][:10]


def test_evaluate_breaks_calibration_down(
    team_history: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["evaluate", str(team_history), "--json"]) == 0
    summary = orjson.loads(capsys.readouterr().out)
    breakdown = summary["breakdown"]
    assert set(breakdown["mode"]) == {"2v2", "ffa3"}
    assert set(breakdown["team_size"]) == {"1", "2"}
    assert set(breakdown["experience"]) <= {"0", "1-4", "5-19", "20+"}
    assert "0" in breakdown["experience"]
    for part in breakdown.values():
        assert sum(b["predictions"] for b in part.values()) == summary["predictions"]
        for bucket in part.values():
            assert 0.5 <= bucket["favourite_predicted"] <= 1.0
            assert 0.0 <= bucket["favourite_observed"] <= 1.0
    # A 3-team match is three predictions: 300 matches of one pair, 300 of three.
    assert summary["matches"] == 600
    assert summary["predictions"] == 300 + 3 * 300


def test_evaluate_prints_the_breakdown_and_plots_it(
    team_history: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    png = tmp_path / "calibration.png"
    assert main(["evaluate", str(team_history), "--plot", str(png)]) == 0
    out = capsys.readouterr().out
    assert "games of the less experienced: 0" in out
    assert "team size: 2" in out
    assert "mode: ffa3" in out
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_evaluate_and_replay_write_what_each_mode_learned(
    history: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = tmp_path / "populations.jsonl"
    assert main(["evaluate", str(history), "--json", "--populations", str(lines)]) == 0
    records = [orjson.loads(line) for line in lines.read_bytes().splitlines()]
    start, *steps, evidence = records
    assert start["population"]["deviation"] == pytest.approx(261.0, abs=1.0)
    assert steps and len({r["mode"] for r in records}) == 1
    assert evidence["hold"] == [] and "prior_score" in evidence["evidence"]
    # replay learns the same from the same history.
    again = tmp_path / "again.jsonl"
    assert (
        main(
            [
                "replay",
                str(history),
                "--out",
                str(tmp_path / "r.jsonl"),
                "--populations",
                str(again),
            ]
        )
        == 0
    )
    assert again.read_bytes() == lines.read_bytes()
    png = tmp_path / "populations.png"
    assert main(["evaluate", str(history), "--json", "--populations", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    capsys.readouterr()


def test_populations_never_overwrite_the_history_or_another_output(
    team_history: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    copy = tmp_path / "h.jsonl"
    copy.write_bytes(team_history.read_bytes())
    assert "is the history it reads" in refusal(
        ["evaluate", str(copy), "--populations", str(copy)], capsys
    )
    assert copy.read_bytes() == team_history.read_bytes()
    same = tmp_path / "same.jsonl"
    assert "--populations and --out are the same file" in refusal(
        ["replay", str(copy), "--out", str(same), "--populations", str(same)], capsys
    )
    png = tmp_path / "same.png"
    assert "--populations and --plot are the same file" in refusal(
        ["evaluate", str(copy), "--plot", str(png), "--populations", str(png)], capsys
    )
    assert not same.exists() and not png.exists()


def test_predictions_file_pairs_with_its_own_configuration(
    history: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "mine.jsonl"
    since = middle_date(history)
    assert main(["evaluate", str(history), "--since", since, "--predictions", str(out)]) == 0
    rows = [orjson.loads(line) for line in out.read_bytes().splitlines()]
    assert rows, "no prediction written"
    assert all(r["played_at"] >= since for r in rows)
    assert [r["row"] for r in rows] == sorted({r["row"] for r in rows})
    assert rows[-1]["row"] == MATCHES
    assert set(rows[0]) == {
        "row",
        "teams",
        "played_at",
        "p",
        "actual",
        "games",
        "team_size",
        "sizes",
        "mode",
    }
    capsys.readouterr()
    assert main(["evaluate", str(history), "--since", since, "--compare", str(out), "--json"]) == 0
    result = orjson.loads(capsys.readouterr().out)
    assert result["a"]["source"] == "built-in defaults"
    assert result["paired"]["predictions"] == len(rows)
    assert result["paired"]["difference"] == 0.0
    assert result["paired"]["verdict"] == "no evidence"


def test_compare_two_modes_files(
    history: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    defaults = tmp_path / "defaults.toml"
    defaults.write_text("")
    sluggish = tmp_path / "sluggish.toml"
    sluggish.write_text('[default]\nalgorithm = "elo"\n[default.elo]\nmax_gain = 1.0\n')
    args = ["evaluate", str(history), "--compare", str(defaults), str(sluggish)]
    assert main(args) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"A  {defaults}: log loss ")
    assert out[1].startswith(f"B  {sluggish}: log loss ")
    assert out[2] == f"paired on {MATCHES} scored predictions"
    # Elo moving one point a game learns nothing in 2,000 lopsided matches: clearly worse.
    assert out[3].startswith("A - B  -0.")
    assert out[3].endswith("days): A predicts better than B")


def test_compare_a_peer_file_missing_some_rows(
    history: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    peer = tmp_path / "peer.jsonl"
    peer.write_text("".join(f'{{"row": {r}, "p": 0.5}}\n' for r in range(1, MATCHES, 2)))
    assert main(["evaluate", str(history), "--compare", str(peer), "--json"]) == 0
    result = orjson.loads(capsys.readouterr().out)
    assert result["paired"]["predictions"] == MATCHES // 2
    assert result["b"]["missing"] == MATCHES // 2
    assert result["b"]["log_loss"] == pytest.approx(0.6931471805599453)


def test_a_peer_file_of_another_history_is_refused(
    history: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = history.read_text().splitlines()[1].split(",")
    wrong = 1.0 - float(first[3])
    peer = tmp_path / "other.jsonl"
    peer.write_text(f'{{"row": 1, "p": 0.5, "actual": {wrong}}}\n')
    line = refusal(["evaluate", str(history), "--compare", str(peer)], capsys)
    assert f"{peer} line 1: actual" in line and "another history" in line


def test_predictions_never_overwrite_the_history(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "h.jsonl"
    text = (
        '{"match_id": "m1", "mode": "duel", "finished_at": "2026-01-01T10:00:00Z", '
        '"teams": [["a"], ["b"]], "ranks": [0, 1]}\n'
    )
    path.write_text(text)
    assert "is the history it reads" in refusal(
        ["evaluate", str(path), "--predictions", str(path)], capsys
    )
    assert path.read_text() == text


def test_compare_with_options_it_would_ignore_is_refused(
    history: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = tmp_path / "a.toml", tmp_path / "b.toml"
    a.write_text("")
    b.write_text("")
    args = ["evaluate", str(history), "--algorithm", "elo", "--compare", str(a), str(b)]
    assert "drop --modes-file and --algorithm" in refusal(args, capsys)
    assert "one or two files, got 3" in refusal(
        ["evaluate", str(history), "--compare", str(a), str(b), str(a)], capsys
    )


def test_evaluate_with_nothing_scored_because_of_quitters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "quit.jsonl"
    path.write_text(
        '{"match_id": "m1", "mode": "duel", "finished_at": "2026-01-01T10:00:00Z", '
        '"teams": [["a"], ["b"]], "ranks": [0, 1], "quitters": ["b"]}\n'
    )
    assert "has quitters: nothing to score" in refusal(["evaluate", str(path)], capsys)


@pytest.mark.parametrize(
    ("command", "extra", "culprit"),
    [
        ("evaluate", ["--since", "2099-01-01"], "no match of"),
        ("evaluate", ["--compare", "a.txt"], "a.txt: the file name must end with .toml or .jsonl"),
        ("evaluate", ["--compare", "missing.toml"], "no such file: missing.toml"),
        (
            "evaluate",
            ["--plot", "out.gif"],
            "out.gif: the file name must end with .png or .svg or .pdf",
        ),
        ("evaluate", ["--predictions", "nowhere/p.jsonl"], "the folder nowhere does not exist"),
        (
            "evaluate",
            ["--populations", "p.csv"],
            "p.csv: the file name must end with .jsonl or .png or .svg or .pdf",
        ),
        (
            "evaluate",
            ["--modes-file", "fixed.toml", "--populations", "p.jsonl"],
            "--populations: no mode learns its population",
        ),
        (
            "evaluate",
            ["--compare", "fixed.toml", "--populations", "p.jsonl"],
            "use --predictions, --plot or --populations alone",
        ),
        ("replay", ["--modes-file", "fixed.toml", "--populations", "p.png"], "no mode learns"),
        (
            "replay",
            ["--explain", "p000001", "--populations", "p.jsonl"],
            "use --populations without",
        ),
        ("tune", ["--holdout", "1.5"], "--holdout: must be between 0 and 1 (exclusive), got 1.5"),
        ("tune", ["--rounds", "0"], "--rounds: must be at least 1, got 0"),
        ("tune", ["--seed-ratings", "missing.jsonl"], "missing.jsonl"),
        ("tune", ["--split", "2099-01-01"], "is on or after --split: nothing to judge on"),
        ("tune", ["--split", "1999-01-01"], "is before --split: nothing to search on"),
        ("tune", ["--split", "yesterday"], "not an ISO-8601 date: 'yesterday'"),
    ],
)
def test_mistakes_are_one_line(
    history: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    command: str,
    extra: list[str],
    culprit: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.txt").write_text("")
    (tmp_path / "fixed.toml").write_text("[default.population]\nwindow_days = 0.0\n")
    assert culprit in refusal([command, str(history), *extra], capsys)


def test_tune_uses_the_seed_ratings(
    history: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["tune", str(history), "--algorithm", "elo", "--rounds", "1"]
    assert main(args) == 0
    plain = capsys.readouterr().out.splitlines()[0]
    seeds = tmp_path / "seeds.jsonl"
    seeds.write_text(
        '{"player_id": "p000001", "rating": 2400}\n{"player_id": "p000002", "rating": 600}\n'
    )
    assert main([*args, "--seed-ratings", str(seeds)]) == 0
    seeded = capsys.readouterr().out.splitlines()[0]
    # Same search, different starting ratings: the scored log losses differ.
    assert plain != seeded


def test_tune_with_a_time_split_judges_on_later_matches(
    history: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    split = middle_date(history)
    args = ["tune", str(history), "--algorithm", "elo", "--split", split, "--holdout", "0.5"]
    assert main(args) == 0
    captured = capsys.readouterr()
    text = captured.out
    parsed = tomllib.loads(text)
    assert parsed["default"]["algorithm"] == "elo"
    lines = text.splitlines()
    assert f"(the last 50% of the matches before {split})" in lines[0]
    verdict = next(line for line in lines if line.startswith("# verdict on "))
    assert f"(the matches from {split} on; never scored by the search)" in verdict
    kept = "the start is kept below" not in text
    assert kept == verdict.endswith(": better")
    # The verdict also reaches a user who sends the section to a file.
    assert captured.err.strip().splitlines()[-1] == "skillstream tune: " + verdict[2:]


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_tune_draws_one_bar_over_all_trials(
    history: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["tune", str(history), "--algorithm", "elo", "--rounds", "1"]) == 0
    first, *after = terminal.getvalue().split("\n")
    bars = [drawing.strip() for drawing in first.split("\r") if drawing.strip()]
    assert bars, terminal.getvalue()
    # One bar, redrawn on one line, complete at the end; then only the warnings and verdict.
    assert all(drawing.startswith("tune ") for drawing in bars)
    assert "100.0%" in bars[-1]
    assert after[-1] == ""
    assert after[:-1]
    assert all(line.startswith("skillstream tune: ") for line in after[:-1])
