"""stream/pipeline/crashpoints.py: the worker kills itself the n-th time it reaches the armed
point, and at no other point."""

from __future__ import annotations

import os
import signal

import pytest

from stream.pipeline.crashpoints import CrashPoints


def test_the_nth_passage_of_the_armed_point_kills_the_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    kills: list[int] = []
    monkeypatch.setattr(os, "kill", lambda pid, sig: kills.append(sig))
    points = CrashPoints(("flushed", 2))
    points.reached("flushed")  # before the first match event: not counted
    points.active = True
    for point in ("processed", "flushed", "written", "committed"):
        points.reached(point)
    assert kills == []
    points.reached("flushed")
    assert kills == [signal.SIGKILL]


def test_unarmed_points_do_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "kill", lambda pid, sig: pytest.fail("killed"))
    points = CrashPoints()
    points.active = True
    for _ in range(3):
        points.reached("processed")
    assert points.counts == {}
