"""`skillstream ratings drift MODE --history FILE`: the points of a replayed history as JSON
lines (and a picture), the same as the watch fed by replay's own states; every mistake one
line, exit 2."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from builders import run_command

from stream.config.modes import Modes
from stream.history import read_history
from stream.offline.ratingdrift import DriftWatch
from stream.offline.replayer import Replayer
from stream.simulation import SimulationConfig, simulate
from stream.simulation.writers import write_jsonl

DAY = 86_400.0


@pytest.fixture
def history(tmp_path: Path) -> Path:
    path = tmp_path / "h.jsonl"
    config = SimulationConfig(matches=600, players=80, mode="ranked", matches_per_second=1 / 3600)
    with path.open("w") as out:
        write_jsonl(simulate(config), out)
    return path


def test_the_points_are_the_watchs_over_replays_states(
    history: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "drift.jsonl"
    args = ["ratings", "drift", "ranked", "--history", str(history), "--every-days", "2"]
    code, _, err = run_command([*args, "--active-days", "5", "--out", str(out)], capsys)
    assert code == 0, err
    got = [orjson.loads(line) for line in out.read_text().splitlines()]
    replayer = Replayer(Modes())
    watch = DriftWatch("ranked", 5 * DAY, 2 * DAY)
    want = []
    for match in read_history(history):
        replayer.rate(match)
        for team in match.teams:
            for pid in team:
                state = replayer.tables["ranked"][pid]
                want += watch.observe(pid, match.at, state.rating, state.rank_points)
    want += watch.finish()
    assert got == [p.to_json() for p in want] and len(got) > 5
    assert err.splitlines()[-1] == f"skillstream ratings drift: wrote {len(got)} points to {out}"
    # Written again over its own earlier output: allowed; over the history: refused.
    assert run_command([*args, "--out", str(out)], capsys)[0] == 0
    picture = tmp_path / "drift.png"
    code, _, err = run_command([*args, "--plot", str(picture)], capsys)
    assert code == 0 and picture.read_bytes().startswith(b"\x89PNG"), err


@pytest.mark.parametrize(
    ("extra", "said"),
    [
        (["--out", "{history}"], "is the history it reads: writing it would destroy it"),
        (["--every-days", "0"], "--every-days"),
        (["--plot", "d.gif"], "--plot"),
    ],
)
def test_each_mistake_is_one_line(
    history: Path, capsys: pytest.CaptureFixture[str], extra: list[str], said: str
) -> None:
    args = ["ratings", "drift", "ranked", "--history", str(history)]
    code, out, err = run_command([*args, *(e.format(history=history) for e in extra)], capsys)
    assert code == 2 and out == "" and said in err, err
    assert len(err.splitlines()) == 1 and "Traceback" not in err


def test_a_mode_no_match_is_in_is_named_with_the_closest(
    history: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run_command(["ratings", "drift", "rankd", "--history", str(history)], capsys)
    assert code == 2 and out == ""
    assert err.endswith("no match is in mode 'rankd' (modes: ranked); did you mean 'ranked'?\n")
