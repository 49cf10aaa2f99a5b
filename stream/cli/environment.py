"""Settings for the commands that talk to the deployment, read as the worker reads them (and,
for a command that writes what it reads there, its checked ``--out``)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path

from stream.cli.outputs import Kind, Output, check_outputs
from stream.config.modes import ModesError
from stream.config.settings import Settings, SettingsError


def settings_or_none(command: str, *, modes: bool = True) -> Settings | None:
    """Settings from the environment (and, with ``modes``, the modes file checked); on a bad
    value prints ``skillstream COMMAND: error: ...`` naming it and returns None (exit 2)."""
    try:
        settings = Settings.from_env()
        if modes:
            settings.load_modes()
    except (SettingsError, ModesError) as exc:
        print(f"skillstream {command}: error: {exc}", file=sys.stderr)
        return None
    return settings


def settings_and_out(
    command: str,
    args: argparse.Namespace,
    kind: Kind,
    reads: Mapping[str, Path | str | None] | None = None,
) -> tuple[Settings, Output] | None:
    """For a command that reads the deployment and writes ``--out`` (``kind``; ``--force`` to
    replace another file): its settings, and its output checked against the files it
    ``reads`` before anything is read (UserError if refused: stream/cli/outputs.py). None
    once a bad setting was said, as :func:`settings_or_none` does (exit 2)."""
    settings = settings_or_none(command)
    if settings is None:
        return None
    output = Output("--out", args.out, kind)
    check_outputs(reads or {}, [output], force=args.force)
    return settings, output
