"""`skillstream bench` when the local stack cannot start: one line naming what is missing,
exit code 1, no traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

import stream.local.stack as stack
from stream.cli.main import main


@pytest.mark.parametrize("target", ["pipeline", "cache", "recovery"])
def test_a_missing_broker_is_one_line(
    target: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "no-tansu"
    monkeypatch.setattr(stack, "tansu_binary", lambda: missing)
    fast = ["--rates", "500", "--seconds", "1"] if target == "pipeline" else []
    assert main(["bench", target, *fast]) == 1
    err = capsys.readouterr().err
    why = f"tansu: {missing} is missing (pip install '.[local]')"
    assert err == f"skillstream bench {target}: error: {why}\n"
