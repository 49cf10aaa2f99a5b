"""`skillstream replay / evaluate / tune / simulate / demo` on small generated histories."""

from __future__ import annotations

import dataclasses
import math
import re
import tomllib
from pathlib import Path

import orjson
import pytest

from stream.bench.baseline import textbook_loop_replay
from stream.cli.main import main
from stream.config.modes import Modes
from stream.simulation import SimulationConfig, simulate, write_csv, write_jsonl

HEADER = "played_at,player_a,player_b,score_a\n"
# One duel: the rookie beats the veteran.
ROOKIE_WINS = HEADER + "2026-03-01T10:00:00Z,vet,rookie,0\n"


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("h") / "history.csv"
    with path.open("w", newline="") as f:
        write_csv(simulate(SimulationConfig(matches=1500, players=120, seed=11)), f)
    return path


def read_jsonl(path: Path) -> list[dict[str, object]]:
    return [orjson.loads(line) for line in path.read_bytes().splitlines()]


def test_replay_writes_one_line_per_player_and_agrees_with_an_independent_loop(
    history: Path, tmp_path: Path
) -> None:
    out = tmp_path / "ratings.jsonl"
    # The textbook loop is plain published Glicko-2: INVERSUS parameters, no experience term.
    published = tmp_path / "published.toml"
    published.write_text(
        "[default.glicko2]\nunrated_deviation = 2.015\n[default.experience]\ndebut_offset = 0.0\n"
        "[default.population]\nwindow_days = 0.0\n"
    )
    args = ["replay", str(history), "--modes-file", str(published), "--out", str(out)]
    assert main(args) == 0
    rows = read_jsonl(out)
    expected = textbook_loop_replay(history)
    assert len(rows) == len(expected)
    for row in rows:
        assert set(row) == {
            "player_id",
            "mode",
            "rating",
            "deviation",
            "volatility",
            "rank_points",
            "games",
        }
        rating, deviation, volatility = expected[str(row["player_id"])]
        assert row["rating"] == pytest.approx(rating, abs=1e-6)
        assert row["deviation"] == pytest.approx(deviation, abs=1e-6)
        assert row["volatility"] == pytest.approx(volatility, abs=1e-9)
        assert row["mode"] == "default"
    # Sorted by rating from the top; games add up to two per match.
    ratings = [float(str(r["rating"])) for r in rows]
    assert ratings == sorted(ratings, reverse=True)
    assert sum(int(str(r["games"])) for r in rows) == 2 * 1500


def test_replay_is_deterministic(history: Path, tmp_path: Path) -> None:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    assert main(["replay", str(history), "--out", str(a)]) == 0
    assert main(["replay", str(history), "--out", str(b)]) == 0
    assert a.read_bytes() == b.read_bytes()


def test_replay_elo_has_no_volatility(history: Path, tmp_path: Path) -> None:
    out = tmp_path / "elo.jsonl"
    assert main(["replay", str(history), "--algorithm", "elo", "--out", str(out)]) == 0
    rows = read_jsonl(out)
    assert all("volatility" not in r and r["deviation"] == 0.0 for r in rows)
    # Elo is zero-sum in 1v1: the average stays at the start.
    mean = sum(float(str(r["rating"])) for r in rows) / len(rows)
    assert mean == pytest.approx(1500.0)


def test_replay_jsonl_events_per_mode_with_modes_file(tmp_path: Path) -> None:
    events = tmp_path / "events.jsonl"
    with events.open("w") as f:
        write_jsonl(simulate(SimulationConfig(matches=200, players=40, teams=4, seed=2)), f)
        write_jsonl(simulate(SimulationConfig(matches=200, players=40, team_size=2, seed=3)), f)
    modes = tmp_path / "modes.toml"
    modes.write_text('[modes.ffa4]\nalgorithm = "elo"\n[modes.2v2]\nteams = "individual"\n')
    out = tmp_path / "out.jsonl"
    assert main(["replay", str(events), "--modes-file", str(modes), "--out", str(out)]) == 0
    rows = read_jsonl(out)
    assert {r["mode"] for r in rows} == {"ffa4", "2v2"}
    assert all("volatility" not in r for r in rows if r["mode"] == "ffa4")
    assert all("volatility" in r for r in rows if r["mode"] == "2v2")


def test_seed_ratings_set_starting_states(tmp_path: Path) -> None:
    history = tmp_path / "h.csv"
    history.write_text(ROOKIE_WINS)
    seeds = tmp_path / "seeds.jsonl"
    seeds.write_text('{"player_id": "vet", "rating": 2100, "deviation": 50}\n')
    out = tmp_path / "out.jsonl"
    args = ["replay", str(history), "--seed-ratings", str(seeds), "--out", str(out)]
    assert main(args) == 0
    rows = {r["player_id"]: r for r in read_jsonl(out)}
    vet = rows["vet"]
    # The seeded veteran lost to a rookie: a small drop from 2100, not a fresh player's swing.
    assert 2050 < float(str(vet["rating"])) < 2100
    assert float(str(vet["deviation"])) < 60
    # A seed without games is an established player (docs/commands.md), unless asked otherwise.
    assert vet["games"] == Modes().default.experience.settled_games + 1
    assert main([*args, "--seed-games", "new"]) == 0
    assert {r["player_id"]: r for r in read_jsonl(out)}["vet"]["games"] == 1


@pytest.mark.parametrize(
    ("seed", "value"),
    [
        ('{"player_id": "vet", "rating": 2100, "deviation": 300}', "deviation 300 is above"),
        ('{"player_id": "vet", "rating": 9000}', "rating 9000 is outside"),
        ('{"player_id": "vet", "rating": 2100, "volatility": 0.5}', "volatility 0.5 is outside"),
        ('{"player_id": "vet", "rating": 2100, "deviation": 5}', "deviation 5 is below"),
    ],
)
def test_a_seed_outside_the_bounds_is_refused_or_clamped_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], seed: str, value: str
) -> None:
    history = tmp_path / "h.csv"
    history.write_text(ROOKIE_WINS)
    seeds = tmp_path / "seeds.jsonl"
    seeds.write_text('{"player_id": "ok", "rating": 1600}\n' + seed + "\n")
    out = tmp_path / "out.jsonl"
    args = ["replay", str(history), "--seed-ratings", str(seeds), "--out", str(out)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1
    assert f"{seeds} line 2: {value}" in err and "mode 'default'" in err
    assert main([*args, "--seed-bounds", "clamp"]) == 0
    err = capsys.readouterr().err
    assert err.splitlines()[1:] == [f"skillstream replay: wrote 2 final ratings to {out}"]
    assert f"{seeds} line 2: {value}" in err and "clamped" in err


def test_malformed_row_stops_with_line_number(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text(HEADER + "2026-03-01T10:00:00Z,a,b,1\n2026-03-01T10:05:00Z,a,b,2\n")
    assert main(["replay", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "line 3" in err and "score_a" in err
    assert "Traceback" not in err


def test_unknown_mode_with_reject_policy_is_a_usage_error(
    history: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    modes = tmp_path / "modes.toml"
    modes.write_text('[default]\nunlisted = "reject"\n')
    assert main(["replay", str(history), "--modes-file", str(modes), "--mode", "nope"]) == 2
    assert "'nope'" in capsys.readouterr().err


def test_evaluate_json_prints_exactly_one_object(
    history: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["evaluate", str(history), "--json"]) == 0
    out = capsys.readouterr().out
    assert len(out.strip().splitlines()) == 1
    summary = orjson.loads(out)
    assert {"matches", "log_loss", "brier", "accuracy", "calibration", "breakdown"} <= set(summary)
    assert summary["matches"] == 1500
    assert 0.0 < summary["log_loss"] < math.log(2) + 0.1
    assert 0.0 < summary["brier"] < 0.3
    assert 0.5 < summary["accuracy"] <= 1.0


def test_evaluate_since_scores_only_the_later_matches(
    history: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["evaluate", str(history), "--json", "--since", "2026-01-01T12:00:00Z"]) == 0
    later = orjson.loads(capsys.readouterr().out)
    assert 0 < later["matches"] < 1500


def test_evaluate_plot_writes_a_png(history: Path, tmp_path: Path) -> None:
    png = tmp_path / "calibration.png"
    assert main(["evaluate", str(history), "--plot", str(png)]) == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_tune_prints_a_modes_section_that_loads(
    history: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["tune", str(history), "--algorithm", "elo", "--rounds", "1"]) == 0
    out = capsys.readouterr().out
    parsed = tomllib.loads(out)
    section = parsed["default"]
    assert section["algorithm"] == "elo"
    assert section["elo"]["max_gain"] in (4.0, 8.0, 12.0, 16.0, 24.0, 32.0, 48.0, 64.0)
    header = re.match(
        r"# tuned on history.csv: the search scored (\d+) matches \(the last 20% of the "
        r"history\); start ([0-9.]+), winner ([0-9.]+)",
        out.splitlines()[0],
    )
    assert header is not None, out
    assert int(header[1]) == 300  # the default 20% tail of 1500 matches
    assert float(header[3]) <= float(header[2])


def test_simulate_then_replay_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "sim.csv"
    assert main(["simulate", "--matches", "50", "--players", "10", "--out", str(path)]) == 0
    assert path.read_text().startswith("played_at,player_a,player_b,score_a")
    assert main(["replay", str(path), "--out", str(tmp_path / "o.jsonl")]) == 0


def test_demo_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--matches", "3000", "--players", "200", "--out-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "rank correlation" in out and "p000" in out


def test_replay_in_play_order_applies_a_shuffled_history_as_played(tmp_path: Path) -> None:
    """--in-play-order sorts by time, then match id (the live pipeline's rule), so a history
    written out of order, with ties in time, replays as the one written in that order; without
    it the file order stands and the result differs."""
    matches = list(simulate(SimulationConfig(matches=300, players=20, seed=5)))
    # Ties: pairs of consecutive matches share a time, the later id first in the file.
    tied = [dataclasses.replace(m, at=matches[i - i % 2].at) for i, m in enumerate(matches)]
    ordered, shuffled = tmp_path / "ordered.jsonl", tmp_path / "shuffled.jsonl"
    with ordered.open("w") as f:
        write_jsonl(sorted(tied, key=lambda m: (m.at, m.match_id)), f)
    mixed = list(reversed(tied))
    with shuffled.open("w") as f:
        write_jsonl(mixed, f)
    outs = {name: tmp_path / f"{name}.out.jsonl" for name in ("a", "b", "c")}
    assert main(["replay", str(ordered), "--out", str(outs["a"])]) == 0
    assert main(["replay", str(shuffled), "--in-play-order", "--out", str(outs["b"])]) == 0
    assert main(["replay", str(shuffled), "--out", str(outs["c"])]) == 0
    assert outs["a"].read_bytes() == outs["b"].read_bytes()
    assert outs["a"].read_bytes() != outs["c"].read_bytes()
