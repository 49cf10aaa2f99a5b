"""The demo's modes file (`skillstream live`): the grace period shorter than its matches."""

from __future__ import annotations

from pathlib import Path

import pytest

from stream.cli.live import demo_grace_seconds, demo_modes
from stream.config.modes import Modes, load_modes


@pytest.mark.parametrize(
    ("match_seconds", "grace"), [(2.0, 1.5), (0.0, 0.5), (0.4, 0.5), (600.0, 60.0)]
)
def test_the_grace_is_three_quarters_of_a_match_within_bounds(
    match_seconds: float, grace: float
) -> None:
    assert demo_grace_seconds(match_seconds) == grace


def test_the_file_keeps_every_other_default_and_applies_to_any_mode(tmp_path: Path) -> None:
    path = tmp_path / "modes.toml"
    path.write_text(demo_modes(2.0), encoding="utf-8")
    modes, defaults = load_modes(path), Modes()
    for name in ("1v1", "anything"):
        mode, default = modes.get(name), defaults.get(name)
        assert modes.pending(name).grace_seconds == 1.5
        assert modes.pending(name).timeout_seconds == defaults.pending(name).timeout_seconds
        assert mode.algorithm == default.algorithm
