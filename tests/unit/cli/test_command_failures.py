"""Every offline command's failure modes: exit code 2, one line on stderr naming the culprit,
no traceback, no usage block; and nothing is written or run before the check."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from stream.cli.main import main

HEADER = "played_at,player_a,player_b,score_a\n"


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    history = tmp_path / "h.csv"
    history.write_text(HEADER + "2026-03-01T10:00:00Z,a,b,1\n2026-03-01T10:05:00Z,b,c,0.5\n")
    infinite = tmp_path / "inf.toml"
    infinite.write_text("[default.glicko2]\ntau = inf\n")
    reject = tmp_path / "reject.toml"
    reject.write_text('[default]\nunlisted = "reject"\n[modes.duel]\n')
    events = tmp_path / "h.jsonl"
    events.write_text(
        orjson.dumps(
            {
                "match_id": "m1",
                "mode": "brawl",
                "finished_at": "2026-03-01T10:00:00Z",
                "teams": [["a"], ["b"]],
                "ranks": [0, 1],
            }
        ).decode()
        + "\n"
    )
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    header_only = tmp_path / "header.csv"
    header_only.write_text(HEADER)
    fifo = tmp_path / "fifo.csv"
    os.mkfifo(fifo)
    return {
        "header": str(header_only),
        "fifo": str(fifo),
        "dir": str(tmp_path),
        "h": str(history),
        "inf": str(infinite),
        "reject": str(reject),
        "events": str(events),
        "file": str(a_file),
        "missing": str(tmp_path / "missing.csv"),
        "nofolder": str(tmp_path / "no" / "out.jsonl"),
    }


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own exit
        code = int(exc.code or 0)
    return code, capsys.readouterr().err


def assert_one_line(code: int, err: str, culprit: str) -> None:
    assert code == 2, err
    assert len(err.splitlines()) == 1, err
    assert culprit in err, err
    assert "Traceback" not in err and "usage:" not in err


CASES = [
    # replay
    (["replay", "{missing}"], "no such file: {missing}"),
    (["replay", "{dir}"], "{dir} is a directory"),
    (["replay", "{h}", "--out", "{dir}"], "{dir} is a directory"),
    (["replay", "{h}", "--out", "x.csv"], "x.csv: the file name must end with .jsonl or .txt"),
    (["replay", "{h}", "--out", "x.txt"], "--out x.txt: replay writes final ratings here, JSON"),
    (["replay", "{h}", "--out", ".jsonl"], ".jsonl: the file needs a name before its suffix"),
    (["replay", "{h}", "--force"], "--force replaces an existing output file, and none is given"),
    (["replay", "{h}", "--seed-games", "new"], "--seed-games says how seeds are taken"),
    (["replay", "{h}", "--modes-file", "-"], "--modes-file: must be a file, not - (stdin)"),
    (["replay", "{h}", "--modes-fle", "m.toml"], "did you mean '--modes-file'?"),
    (["rplay", "{h}"], "invalid choice: 'rplay' (choose from"),
    (["simulate", "--matches", "10", "--rate", "0"], "--rate shapes how matches are published"),
    (["simulate", "--players", "100000000"], "players must be at most 10,000,000"),
    (["study", "newcomers", "{h}", "--matches", "1001"], "--matches: must be at most 1,000"),
    (["replay", "{header}"], "{header}: no match was rated: nothing to write"),
    (
        ["replay", "{h}", "--leaderboard-change", "builtin"],
        "no such file: builtin; did you mean 'built-in'?",
    ),
    (["tune", "{fifo}"], "tune reads the history several times: give a file, not stdin or a pipe"),
    (["study", "strategies", "{fifo}"], "read once per strategy: give a file, not stdin or a pipe"),
    (
        ["corrections", "void", "--matches", "m1", "--mode", "duel", "--reason", "x"],
        "--mode: the ids name the matches, whatever their mode",
    ),
    (
        ["corrections", "adjust", "duel", "a", "--shift", "0", "--reason", "x"],
        "--shift 0 changes nothing",
    ),
    (["replay", "{h}", "--out", "{nofolder}"], "does not exist"),
    (["replay", "{h}", "--modes-file", "{missing}"], "no such file: {missing}"),
    (["replay", "{h}", "--modes-file", "{inf}"], "{inf}: [default.glicko2] tau must be"),
    (["replay", "{h}", "--seed-ratings", "{missing}"], "no such file: {missing}"),
    (["replay", "-", "--seed-ratings", "-"], "cannot both be read from stdin"),
    (["replay", "{events}", "--modes-file", "{reject}"], "{events} line 1: mode 'brawl'"),
    (["replay", "{h}", "--modes-file", "{reject}", "--mode", "nope"], "'nope'"),
    (["replay", "{h}", "--on-error", "ignore"], "invalid choice: 'ignore'"),
    (["replay", "{h}", "--mode", "x", "--algorithm", "elo"], "not allowed with argument"),
    # evaluate
    (["evaluate", "{missing}"], "no such file: {missing}"),
    (["evaluate", "{h}", "--plot", "x.txt"], "x.txt: the file name must end with .png"),
    (["evaluate", "{h}", "--plot", "{dir}"], "{dir} is a directory"),
    (["evaluate", "{h}", "--since", "yesterday"], "not an ISO-8601 date: 'yesterday'"),
    (["evaluate", "{h}", "--modes-file", "{inf}"], "tau must be between 0.01 and 10, got inf"),
    # tune (its files)
    (["tune", "{missing}"], "no such file: {missing}"),
    (["tune", "{h}", "--modes-file", "{dir}"], "{dir} is a directory"),
    (["tune", "{h}", "--jobs", "0"], "--jobs: must be at least 1, got 0"),
    # simulate
    (["simulate", "--matches", "0"], "--matches: must be at least 1, got 0"),
    (["simulate", "--players", "1"], "--players: must be at least 2, got 1"),
    (["simulate", "--teams", "1"], "--teams: must be at least 2, got 1"),
    (["simulate", "--team-size", "0"], "--team-size: must be at least 1"),
    (["simulate", "--draw-rate", "1.5"], "--draw-rate: must be between 0 and 1, got 1.5"),
    (["simulate", "--quit-rate", "nan"], "--quit-rate: must be a finite number, got nan"),
    (["simulate", "--drift", "-1"], "--drift: must not be negative, got -1"),
    (["simulate", "--out", "x.txt"], "x.txt: the file name must end with .csv or .jsonl"),
    (["simulate", "--out", "{dir}"], "{dir} is a directory"),
    (["simulate", "--format", "csv", "--out", "{dir}/s.jsonl"], "does not match --out"),
    (["simulate", "--teams", "3", "--out", "{dir}/s.csv"], "CSV holds 1v1 matches"),
    (["simulate", "--players", "3", "--team-size", "2"], "players must be at least"),
    # demo
    (["demo", "--matches", "0"], "--matches: must be at least 1, got 0"),
    (["demo", "--top", "-3"], "--top: must be at least 1, got -3"),
    (["demo", "--players", "1"], "--players: must be at least 2, got 1"),
    (["demo", "--out-dir", "{file}"], "{file} is a file, not a folder"),
    (["demo", "--out-dir", "{file}/sub"], "is a file, not a folder"),
    # bench
    (["bench", "engine", "--matches", "0"], "--matches: must be at least 1, got 0"),
    (["bench", "pipeline", "--rates", "-5"], "--rates: must be above 0, got -5"),
    (["bench", "pipeline", "--seconds", "inf"], "--seconds: must be a finite number"),
    (["bench", "pipeline", "--partitions", "0"], "--partitions: must be at least 1"),
    (["bench", "pipeline", "--partitions", "4", "0"], "--partitions: must be at least 1"),
    (["bench", "pipeline", "--idle-seconds", "-1"], "--idle-seconds: must not be negative, got -1"),
    (["bench", "pipeline", "--pipeline-matches", "-1"], "--pipeline-matches: must be at least 0"),
    (["bench", "pipeline", "--rates", "0.01", "--seconds", "1"], "is not one match"),
    (
        ["bench", "pipeline", "--backlog-players", "1"],
        "--backlog-players: must be at least 2, got 1",
    ),
    (["bench", "pipeline", "--raw-events", "-1"], "--raw-events: must be at least 0, got -1"),
    (["bench", "pipeline", "--partitioner", "fnv1a"], "--partitioner: invalid choice: 'fnv1a'"),
    (["bench", "cache", "--cache-players", "0"], "--cache-players: must be at least 1"),
    (["bench", "recovery", "--recovery-players", "x"], "not a whole number: 'x'"),
    (["bench", "nothing"], "invalid choice: 'nothing'"),
]


@pytest.mark.parametrize(("argv", "culprit"), CASES, ids=lambda v: " ".join(v)[:60])
def test_each_mistake_is_one_line_naming_the_culprit(
    files: dict[str, str], capsys: pytest.CaptureFixture[str], argv: list[str], culprit: str
) -> None:
    code, err = run([a.format(**files) for a in argv], capsys)
    assert_one_line(code, err, culprit.format(**files))


@contextmanager
def as_someone_else() -> Iterator[None]:
    """Root may write anywhere, so as root the check runs with another real user id (which is
    what ``os.access`` asks about), the effective one staying root so it can be put back."""
    if os.getuid() != 0:
        yield
        return
    os.setresuid(65534, 0, 0)
    try:
        yield
    finally:
        os.setresuid(0, 0, 0)


def test_an_unwritable_output_folder_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        # The history is '-' (not read: the output is refused first), since the other user
        # may not read the test's own folder.
        with as_someone_else():
            code, err = run(["replay", "-", "--out", str(locked / "o.jsonl")], capsys)
        assert_one_line(code, err, f"the folder {locked} is not writable")
        with as_someone_else():
            code, err = run(["demo", "--out-dir", str(locked / "sub")], capsys)
        assert_one_line(code, err, f"the folder {locked} is not writable")
    finally:
        locked.chmod(0o700)


def test_nothing_is_written_when_a_row_stops_the_replay(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text(HEADER + "2026-03-01T10:00:00Z,a,b,1\n2026-03-01T10:05:00Z,a,b,2\n")
    out = tmp_path / "o.jsonl"
    code, err = run(["replay", str(bad), "--out", str(out)], capsys)
    assert_one_line(code, err, f"{bad} line 3: score_a must be 1, 0.5 or 0, got '2'")
    assert not out.exists()


def test_on_error_skip_rates_the_rest_and_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text(
        HEADER
        + "2026-03-01T10:00:00Z,a,b,1\n"
        + "2026-03-01T10:05:00Z,a,b,2\n"
        + "yesterday,a,c,1\n"
        + "2026-03-01T10:15:00Z,b,c,0\n"
    )
    out = tmp_path / "o.jsonl"
    assert main(["replay", str(bad), "--on-error", "skip", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert err.splitlines() == [
        f"skillstream replay: skipped 2 bad rows of {bad} (lines 3, 4); the first: "
        "score_a must be 1, 0.5 or 0, got '2'",
        f"skillstream replay: wrote 3 final ratings to {out}",
    ]
    games = {row["player_id"]: row["games"] for row in map(orjson.loads, out.read_bytes().split())}
    assert games == {"a": 1, "b": 2, "c": 1}
    assert main(["evaluate", str(bad), "--on-error", "skip", "--json"]) == 0
    captured = capsys.readouterr()
    assert orjson.loads(captured.out)["matches"] == 2
    assert "skipped 2 bad rows" in captured.err


def test_replay_reports_repeated_match_ids(
    files: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    twice = tmp_path / "twice.jsonl"
    twice.write_text(Path(files["events"]).read_text() * 2)
    out = tmp_path / "o.jsonl"
    assert main(["replay", str(twice), "--out", str(out)]) == 0
    assert "1 repeated match id left out" in capsys.readouterr().err
    assert {row["games"] for row in map(orjson.loads, out.read_bytes().split())} == {1}


@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.sampled_from(["--matches", "--players", "--top"]),
    st.one_of(
        st.integers(max_value=0).map(str),
        st.floats(allow_nan=True).map(str),
        st.text(max_size=5).filter(lambda t: not _is_count(t)),
    ),
)
def test_demo_refuses_any_impossible_count(
    capsys: pytest.CaptureFixture[str], option: str, value: str
) -> None:
    code, err = run(["demo", f"{option}={value}"], capsys)
    assert code == 2 and len(err.splitlines()) == 1 and "Traceback" not in err
    assert "skillstream demo: error:" in err


@settings(deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.floats(allow_nan=True, allow_infinity=True).filter(lambda x: not 0.0 <= x <= 1.0)
    | st.text(max_size=4).filter(lambda t: not _is_probability(t))
)
@example("2\x0c")  # float() takes the form feed; echoed raw, it split the message in two
def test_simulate_refuses_any_rate_outside_zero_to_one(
    capsys: pytest.CaptureFixture[str], value: object
) -> None:
    code, err = run(["simulate", f"--draw-rate={value}"], capsys)
    assert code == 2 and len(err.splitlines()) == 1 and "--draw-rate" in err


def _is_probability(text: str) -> bool:
    try:
        return 0.0 <= float(text) <= 1.0
    except ValueError:
        return False


def _is_count(text: str) -> bool:
    try:
        return int(text) >= 1
    except ValueError:
        return False


def test_plot_without_matplotlib_is_refused_before_reading(
    files: dict[str, str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if the extra were not installed
    code, err = run(["evaluate", files["h"], "--plot", f"{files['dir']}/c.png"], capsys)
    assert_one_line(code, err, "--plot: drawing needs matplotlib: pip install 'skillstream[plot]'")
