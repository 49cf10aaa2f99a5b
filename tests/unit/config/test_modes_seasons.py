"""The modes file's [seasons] table: dates as TOML writes them, every mistake named."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from stream.config.modes import ModesError, load_modes, parse_modes
from stream.ratings.seasons import SeasonsConfig

JAN = 1_767_225_600.0  # 2026-01-01T00:00:00Z
APR = 1_775_001_600.0  # 2026-04-01T00:00:00Z


def test_no_table_means_no_seasons_and_a_mode_can_leave_the_default_schedule(
    tmp_path: Path,
) -> None:
    path = tmp_path / "m.toml"
    path.write_text(
        "[default.seasons]\n"
        'starts = [2026-01-01, 2026-04-01T02:00:00+02:00, "2026-07-01"]\n'
        "period_days = 91\n"
        "rank_points_kept = 0.5\n"
        "[modes.casual.seasons]\n"
        "starts = []\n"
    )
    modes = load_modes(path)
    assert modes.get("ranked").seasons == SeasonsConfig(
        starts=(JAN, APR, 1_782_864_000.0), period_days=91, rank_points_kept=0.5
    )
    assert modes.get("casual").seasons is None
    assert parse_modes({}).get("any").seasons is None


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"starts": "2026-01-01"}, "[modes.x.seasons] starts must be a list of dates"),
        ({"starts": ["soon"]}, "[modes.x.seasons] starts holds 'soon', not a date or an ISO"),
        ({"starts": [3]}, "[modes.x.seasons] starts holds 3, not a date or a time"),
        ({"starts": ["2026-04-01", "2026-01-01"]}, "[modes.x.seasons] starts must be in incr"),
        ({"starts": [], "perod_days": 7}, "[modes.x.seasons] unknown key(s) ['perod_days']"),
        ({"starts": ["2026-01-01"], "period": 7}, "[modes.x.seasons] unknown key(s) ['period']"),
        (
            {"starts": ["2026-01-01"], "deviation_reset": 2},
            "[modes.x.seasons] deviation_reset must be between 0 and 1, got 2",
        ),
    ],
)
def test_bad_season_tables_name_the_file_the_mode_and_the_key(
    table: dict[str, object], message: str
) -> None:
    with pytest.raises(ModesError) as info:
        parse_modes({"modes": {"x": {"seasons": table}}}, source="m.toml")
    assert str(info.value).startswith("m.toml: ")
    assert message in str(info.value)


def test_the_command_says_it_in_one_line_and_exits_2(tmp_path: Path) -> None:
    path = tmp_path / "m.toml"
    path.write_text('[modes.x.seasons]\nstarts = ["2026-01-01"]\nperiod_days = -1\n')
    history = tmp_path / "h.jsonl"
    history.write_text("")
    done = subprocess.run(
        [sys.executable, "-m", "stream", "replay", str(history), "--modes-file", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert f"{path}: [modes.x.seasons] period_days must be between 0 and 3650" in done.stderr
