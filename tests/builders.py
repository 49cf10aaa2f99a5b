"""Builders the unit, integration and end-to-end tests share (importable from every test
module: pyproject.toml puts tests/ on the path)."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import orjson

# A duel: (match id, finish time, first player, second player, ranks).
Duel = tuple[str, str, str, str, list[int]]

# The event time the tests' matches start at. (The engine and replay tests start theirs at
# 1_700_000_000.0, on purpose: their own T0.)
T0 = 1_780_000_000.0


def epoch_ms(seconds: float) -> int:
    """Epoch milliseconds, as producers may send."""
    return round(seconds * 1000)


def start(match_id: str, teams: list[list[str]], at: float, mode: str = "1v1") -> dict[str, Any]:
    """A match-started event, ``at`` in epoch seconds."""
    return {"match_id": match_id, "mode": mode, "started_at": epoch_ms(at), "teams": teams}


def finish(
    match_id: str, ranks: list[int], at: float, mode: str = "1v1", **extra: object
) -> dict[str, Any]:
    """A match-finished event, ``at`` in epoch seconds, with any ``extra`` fields."""
    return {
        "match_id": match_id,
        "mode": mode,
        "finished_at": epoch_ms(at),
        "ranks": ranks,
        **extra,
    }


def duel_lines(duels: Iterable[Duel], mode: str = "duel") -> str:
    """A JSON-lines history of match-finished events (which carry match ids) of ``duels``."""
    return "".join(
        orjson.dumps(
            {"match_id": m, "mode": mode, "finished_at": at, "teams": [[a], [b]], "ranks": r}
        ).decode()
        + "\n"
        for m, at, a, b, r in duels
    )


def skillstream(env: Mapping[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    """``skillstream ARGS...`` as a user runs it, with exactly ``env``, at most a minute."""
    return subprocess.run(
        [sys.executable, "-m", "stream", *args],
        capture_output=True,
        text=True,
        env=dict(env),
        check=False,
        timeout=60,
    )


def run_command(argv: list[str], capsys: Any) -> tuple[int, str, str]:
    """``skillstream ARGV`` in this process: (exit code, stdout, stderr), an argparse exit
    counted as its code. ``capsys``: the test's pytest capture fixture."""
    from stream.cli.main import main

    try:
        code = main(argv)
    except SystemExit as exc:
        code = int(exc.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


README = Path(__file__).resolve().parents[1] / "README.md"


def readme_blocks(section: str) -> list[str]:
    """The ```sh blocks of the README's ``## SECTION``, as written."""
    text = README.read_text()
    start = text.index(f"\n## {section}\n")
    end = text.find("\n## ", start + 1)
    part = text[start : end if end >= 0 else len(text)]
    return re.findall(r"^```sh\n(.*?)^```", part, re.MULTILINE | re.DOTALL)


def in_a_checkout(folder: Path) -> None:
    """``folder`` made to look like a checkout after ``make install`` for the README's blocks:
    its ``.venv`` is this test run's virtualenv."""
    (folder / ".venv").symlink_to(Path(sys.prefix), target_is_directory=True)
