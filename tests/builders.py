"""Builders the unit, integration and end-to-end tests share (importable from every test
module: pyproject.toml puts tests/ on the path)."""

from __future__ import annotations

# The event time the tests' matches start at. (The engine and replay tests start theirs at
# 1_700_000_000.0, on purpose: their own T0.)
T0 = 1_780_000_000.0


def epoch_ms(seconds: float) -> int:
    """Epoch milliseconds, as producers may send."""
    return round(seconds * 1000)
