"""The installed Faust, aiokafka and mode are the versions the workarounds were written for:
an upgrade fails here until every module of stream/pipeline/workarounds/ is revisited."""

from __future__ import annotations

import re
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest

from stream.pipeline.workarounds import WRITTEN_FOR

PYPROJECT = Path(__file__).resolve().parents[4] / "pyproject.toml"


@pytest.mark.parametrize("distribution", sorted(WRITTEN_FOR))
def test_the_installed_version_is_the_one_the_workarounds_were_written_for(
    distribution: str,
) -> None:
    assert version(distribution) == WRITTEN_FOR[distribution], (
        f"{distribution} {version(distribution)} is installed; the workarounds were written for "
        f"{WRITTEN_FOR[distribution]}: revisit stream/pipeline/workarounds/ and its tests"
    )


def test_pyproject_pins_exactly_those_versions() -> None:
    declared = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]["dependencies"]
    pins = {}
    for requirement in declared:
        found = re.fullmatch(r"([A-Za-z0-9_.-]+)==([0-9.]+)", requirement)
        if found:
            pins[found[1]] = found[2]
    assert {name: pins.get(name) for name in WRITTEN_FOR} == WRITTEN_FOR
