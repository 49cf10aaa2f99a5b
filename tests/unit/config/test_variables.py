"""The environment variables skillstream reads, and the warning for one it does not."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from stream.cli.main import main
from stream.config.variables import KNOWN, RETIRED, unknown_variables

PACKAGE = Path(__file__).resolve().parents[3] / "stream"
NAME = re.compile(r"\bSKILLSTREAM_[A-Z][A-Z_]*[A-Z]\b")
# Names the package writes only to show what a typo looks like.
EXAMPLES = {"SKILLSTREAM_PARITIONS"}


def test_known_is_every_name_the_package_reads() -> None:
    used = set()
    for path in PACKAGE.rglob("*.py"):
        used |= set(NAME.findall(path.read_text()))
    assert used - EXAMPLES - set(RETIRED) == KNOWN


def test_every_known_name_is_documented() -> None:
    docs = "".join(
        (PACKAGE.parent / "docs" / name).read_text()
        for name in ("configuration.md", "operations.md", "benchmarks.md")
    )
    # The table abbreviates a family as `SKILLSTREAM_MAX_EVENT_BYTES` / `_MAX_PLAYERS`; the
    # Faust floor bench sets its variable for its own child process only.
    tails = {name for name in KNOWN if name.removeprefix("SKILLSTREAM") not in docs}
    missing = sorted(name for name in tails if name not in docs)
    assert missing == ["SKILLSTREAM_FLOOR_EVENTS"]


def test_a_typo_names_the_closest_variable() -> None:
    lines = unknown_variables({"SKILLSTREAM_PARITIONS": "12", "HOME": "/root"})
    assert lines == [
        "SKILLSTREAM_PARITIONS is set, but skillstream reads no such variable;"
        " did you mean SKILLSTREAM_PARTITIONS?"
    ]


def test_known_and_foreign_names_are_quiet() -> None:
    assert unknown_variables({"SKILLSTREAM_PARTITIONS": "12", "KAFKA_SSL_CAFILE": "x"}) == []


def test_a_name_far_from_any_gets_no_guess() -> None:
    lines = unknown_variables({"SKILLSTREAM_ZZZ": "1"})
    assert lines == ["SKILLSTREAM_ZZZ is set, but skillstream reads no such variable"]


def test_a_retired_name_says_why() -> None:
    (line,) = unknown_variables({"SKILLSTREAM_VERIFY_END_OFFSETS": "1"})
    assert line.startswith("SKILLSTREAM_VERIFY_END_OFFSETS is no longer read: ")


def test_every_command_says_it_once(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SKILLSTREAM_PARITIONS", "12")
    assert main(["topics", "create", "--dry-run"]) == 0
    err = capsys.readouterr().err
    assert err.count("SKILLSTREAM_PARITIONS is set") == 1
    assert err.startswith("skillstream: warning: ")
