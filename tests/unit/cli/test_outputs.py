"""No command writes over a file it reads, over another of its outputs, or over a file that is
not one of its own earlier outputs without --force; every file is written all at once, and one
line says what was written (stream/cli/outputs.py, issue 45)."""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest

from stream.cli.main import main
from stream.cli.outputs import CORRECTIONS, PREDICTIONS, RATINGS, SEEDS, Output, written
from stream.corrections.records import correction_json, parse_correction

HISTORY = "played_at,player_a,player_b,score_a\n" + "".join(
    f"2026-03-01T10:{m:02d}:00Z,p{m % 4},p{(m + 1) % 4},{m % 2}\n" for m in range(20)
)


@pytest.fixture
def history(tmp_path: Path) -> Path:
    path = tmp_path / "h.csv"
    path.write_text(HISTORY)
    return path


@pytest.fixture
def events(tmp_path: Path) -> Path:
    """A JSON-lines history: a name an --out FILE.jsonl can have."""
    path = tmp_path / "h.jsonl"
    lines = [
        {
            "match_id": f"m{m}",
            "mode": "duel",
            "finished_at": f"2026-03-01T10:{m:02d}:00Z",
            "teams": [[f"p{m % 4}"], [f"p{(m + 1) % 4}"]],
            "ranks": [0, 1],
        }
        for m in range(10)
    ]
    path.write_bytes(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    return path


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    try:
        code = main(argv)
    except SystemExit as exc:
        code = int(exc.code or 0)
    return code, capsys.readouterr().err


def test_an_output_over_the_history_it_reads_is_refused_and_the_history_kept(
    events: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    history = events
    kept = history.read_bytes()
    code, err = run(["replay", str(history), "--out", str(history), "--force"], capsys)
    assert code == 2
    assert err.strip().splitlines() == [
        f"skillstream replay: error: --out {history} is the history it reads: writing it would"
        " destroy it; choose another file"
    ]
    assert history.read_bytes() == kept
    # The same file under another name counts as the same file.
    link = history.with_name("link.jsonl")
    link.symlink_to(history)
    code, err = run(["replay", str(link), "--out", str(history)], capsys)
    assert code == 2 and "is the history it reads" in err


def test_an_output_over_the_corrections_file_it_reads_is_refused(
    history: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corrections = tmp_path / "c.jsonl"
    corrections.write_text("")
    code, err = run(
        ["replay", str(history), "--corrections", str(corrections), "--out", str(corrections)],
        capsys,
    )
    assert code == 2 and "is the corrections file it reads" in err


def test_a_rerun_replaces_its_own_output_and_says_what_it_wrote(
    history: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.jsonl"
    for _ in range(2):
        code, err = run(["replay", str(history), "--out", str(out)], capsys)
        assert code == 0
        assert err.strip() == f"skillstream replay: wrote 4 final ratings to {out}"
    assert len(out.read_text().splitlines()) == 4
    # Written with the folder's usual permissions, not a temporary file's private ones.
    assert oct(out.stat().st_mode & 0o777) == oct(0o666 & ~_umask())
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_file_that_is_not_an_earlier_output_needs_force(
    history: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    other = tmp_path / "mine.csv"
    other.write_text(HISTORY)
    out = tmp_path / "notes.jsonl"
    out.write_text('{"note": "mine"}\n')
    code, err = run(["evaluate", str(history), "--predictions", str(out)], capsys)
    assert code == 2
    assert err.strip() == (
        f"skillstream evaluate: error: --predictions {out} exists and reads as something else"
        " (not predictions from an earlier run): choose another file, or add --force to"
        " replace it"
    )
    assert out.read_text() == '{"note": "mine"}\n'
    code, _ = run(["evaluate", str(history), "--predictions", str(out), "--force"], capsys)
    assert code == 0 and "row" in orjson.loads(out.read_text().splitlines()[0])
    # A simulated history may be a real one: replacing any needs --force.
    code, err = run(["simulate", "--matches", "5", "--out", str(other)], capsys)
    assert code == 2 and "reads as a match history (it may hold data of its own)" in err
    assert other.read_text() == HISTORY


def test_two_outputs_on_one_file_are_refused(
    history: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "both.jsonl"
    code, err = run(["replay", str(history), "--out", str(out), "--populations", str(out)], capsys)
    assert code == 2 and "--populations and --out are the same file" in err
    assert not out.exists()


def test_a_write_that_fails_leaves_the_old_file_whole(tmp_path: Path) -> None:
    out = tmp_path / "r.jsonl"
    out.write_bytes(b'{"player_id":"a","mode":"m","rating":1500.0}\n')
    with pytest.raises(RuntimeError), written("replay", Output("--out", out, RATINGS)) as file:
        file.write(b'{"player_id":"b"')
        raise RuntimeError("the disk is full")
    assert out.read_bytes() == b'{"player_id":"a","mode":"m","rating":1500.0}\n'
    assert list(tmp_path.iterdir()) == [out]
    # Nothing written to a file that did not exist leaves no file.
    fresh = tmp_path / "p.jsonl"
    with pytest.raises(RuntimeError), written("evaluate", Output("--out", fresh, PREDICTIONS)):
        raise RuntimeError("interrupted")
    assert not fresh.exists()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_a_seed_file_is_not_taken_for_final_ratings(
    history: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The slip of --out for --seed-ratings: a seed line has a player, a mode and a rating, as a
    # final rating does, but never Rank Points.
    seeds = tmp_path / "ladder.jsonl"
    line = b'{"player_id":"old1","mode":"default","rating":1700,"deviation":80,"games":300}'
    seeds.write_bytes(line + b"\n")
    assert SEEDS.looks_like(line) and not RATINGS.looks_like(line)
    code, err = run(["replay", str(history), "--out", str(seeds)], capsys)
    assert code == 2 and f"--out {seeds} exists and reads as seed ratings" in err
    assert seeds.read_bytes() == line + b"\n"


def test_a_corrections_file_reads_as_corrections() -> None:
    record = {"id": "c-1", "kind": "void", "by": "ops", "at": "2026-11-25T08:00:00Z"}
    line = orjson.dumps(
        correction_json(parse_correction({**record, "reason": "r", "matches": ["m"]}))
    )
    assert CORRECTIONS.looks_like(line)
