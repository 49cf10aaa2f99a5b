"""A Faust table of raw bytes, as the store tests build it (importable from every test module:
pyproject.toml puts tests/ on the path)."""

from __future__ import annotations

from typing import Any

import faust


def raw_table(app: faust.App, partitions: int) -> Any:
    """The app's ``ratings`` table of raw bytes keys and values over ``partitions``."""
    return app.Table(
        "ratings",
        default=None,
        key_type=bytes,
        value_type=bytes,
        schema=faust.Schema(key_serializer="raw", value_serializer="raw"),
        partitions=partitions,
    )
