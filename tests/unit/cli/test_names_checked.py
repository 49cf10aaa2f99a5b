"""Every name a user gives the offline commands is checked, and what the history says that no
reader reads is said (issue 45): a misspelt mode, option or field is one line naming it, never
a silent default."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from builders import Duel, duel_lines, run_command

MATCHES: list[Duel] = [
    ("m1", "2026-03-01T10:00:00Z", "alice", "bob", [0, 1]),
    ("m2", "2026-03-01T11:00:00Z", "bob", "carol", [1, 0]),
    ("m3", "2026-03-02T10:00:00Z", "alice", "carol", [0, 0]),
]


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    return run_command(argv, capsys)


def refused(code: int, err: str, *culprits: str) -> None:
    assert code == 2, err
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    for culprit in culprits:
        assert culprit in err, err


@pytest.fixture
def history(tmp_path: Path) -> Path:
    path = tmp_path / "h.jsonl"
    path.write_text(duel_lines(MATCHES, mode="1v1"))
    return path


@pytest.fixture
def modes(tmp_path: Path) -> Path:
    path = tmp_path / "modes.toml"
    path.write_text('[modes.1v1]\nalgorithm = "glicko2"\n[modes.ranked]\nalgorithm = "elo"\n')
    return path


# --- --mode ------------------------------------------------------------------------------------


def test_a_mode_the_modes_file_does_not_list_is_said_with_the_closest(
    history: Path, modes: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(
        ["replay", str(history), "--modes-file", str(modes), "--mode", "rankd"], capsys
    )
    assert code == 0 and len(out.splitlines()) == 3
    assert err.splitlines() == [
        f"skillstream replay: --mode 'rankd': {modes} lists no such mode (listed: 1v1, ranked),"
        " so every match is rated with its [default] under that name; did you mean 'ranked'?"
    ]


def test_a_mode_without_a_modes_file_names_the_history_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # A CSV has no modes: --mode is how its matches get one (as the outside checks use it).
    csv = tmp_path / "h.csv"
    csv.write_text("played_at,player_a,player_b,score_a\n2026-03-01T10:00:00Z,a,b,1\n")
    code, out, err = run(["replay", str(csv), "--mode", "ranked-1v1"], capsys)
    assert code == 0
    assert {row["mode"] for row in map(orjson.loads, out.splitlines())} == {"ranked-1v1"}
    assert err.splitlines() == [
        "skillstream replay: --mode 'ranked-1v1': no --modes-file is given, so every match is"
        " rated with the built-in defaults under that name"
    ]


def test_a_mode_a_rejecting_modes_file_does_not_list_is_refused(
    history: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    strict = tmp_path / "strict.toml"
    strict.write_text('[default]\nunlisted = "reject"\n[modes.ranked]\n')
    code, _, err = run(
        ["replay", str(history), "--modes-file", str(strict), "--mode", "rankd"], capsys
    )
    refused(code, err, "--mode 'rankd'", "rejects unlisted modes", "did you mean 'ranked'?")


@pytest.mark.parametrize("command", ["evaluate", "tune"])
def test_every_offline_command_checks_mode(
    command: str, history: Path, modes: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(
        [command, str(history), "--modes-file", str(modes), "--mode", "1vs1"], capsys
    )
    assert code == 0, err
    assert f"skillstream {command}: --mode '1vs1': " in err and "did you mean '1v1'?" in err


def test_a_listed_mode_is_taken(
    history: Path, modes: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(
        ["replay", str(history), "--modes-file", str(modes), "--mode", "ranked"], capsys
    )
    assert code == 0
    assert {row["mode"] for row in map(orjson.loads, out.splitlines())} == {"ranked"}


# --- a modes file's table for a mode the history spells otherwise --------------------------------


def test_a_listed_mode_no_match_is_in_next_to_an_unlisted_one_is_said(
    tmp_path: Path, history: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    modes = tmp_path / "typo.toml"
    modes.write_text('[modes.1vs1]\nalgorithm = "elo"\n')
    code, out, err = run(["replay", str(history), "--modes-file", str(modes)], capsys)
    assert code == 0
    assert err.splitlines() == [
        f"skillstream replay: the history's mode '1v1' is not listed in {modes}, so it is rated"
        " with [default]; no match is in its listed mode '1vs1': is one of them misspelt?"
    ]
    assert {row["mode"] for row in map(orjson.loads, out.splitlines())} == {"1v1"}


def test_unrelated_listed_modes_are_quiet(
    history: Path, modes: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(["replay", str(history), "--modes-file", str(modes)], capsys)
    assert (code, err) == (0, "")


# --- options without their companion -------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "culprit"),
    [
        (["--top", "5"], "--top shapes --leaderboard-change's output"),
        (["--board", "rating"], "--board shapes --leaderboard-change's output"),
        (["--worded"], "--worded words the changes --explain PLAYER prints"),
        (["--explain", "alice", "--leaderboard-change"], "--explain and --leaderboard-change"),
        (["--explain", "alice", "--populations", "p.jsonl"], "use --populations without it"),
    ],
)
def test_an_option_without_its_companion_is_refused(
    options: list[str], culprit: str, history: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(["replay", str(history), *options], capsys)
    refused(code, err, culprit)


# --- what the history says that is not read as it was meant ---------------------------------


def test_an_unknown_field_is_said_with_the_one_it_may_mean(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [orjson.loads(line) for line in duel_lines(MATCHES).splitlines()]
    rows[1]["quiters"] = ["carol"]
    rows[2]["quiters"] = ["carol"]
    path = tmp_path / "h.jsonl"
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    code, _, err = run(["replay", str(path)], capsys)
    assert code == 0
    assert err.splitlines() == [
        "skillstream replay: 2 lines carry fields no reader reads, read as if absent:"
        " 'quiters' (did you mean 'quitters'?) (the first: line 2)"
    ]


def test_times_out_of_order_are_said_with_the_first_line_and_the_option(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "h.jsonl"
    path.write_text(duel_lines([MATCHES[2], MATCHES[0], MATCHES[1]]))
    code, _, err = run(["replay", str(path)], capsys)
    assert code == 0
    assert err.splitlines() == [
        "skillstream replay: 2 matches are earlier than a match above it (the first: line 2);"
        " rated in file order: replay --in-play-order rates by time, as the live pipeline does"
    ]
    code, _, err = run(["replay", str(path), "--in-play-order"], capsys)
    assert (code, err) == (0, "")


def test_tune_says_a_repeated_match_id_and_names_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    duels: list[Duel] = [
        (
            f"m{i}",
            f"2026-03-{1 + i // 24:02d}T{i % 24:02d}:00:00Z",
            f"p{i % 7}",
            f"p{(i + 3) % 7}",
            [i % 2, 1 - i % 2],
        )
        for i in range(200)
    ]
    path = tmp_path / "h.jsonl"
    path.write_text(duel_lines(duels) + duel_lines([duels[150]]))
    code, _, err = run(["tune", str(path), "--rounds", "1"], capsys)
    assert code == 0, err
    assert (
        "skillstream tune: 1 repeated match id left out (the first: 'm150' again on line 201):"
        " each match is rated once, as the live worker rates it"
    ) in err.splitlines()
