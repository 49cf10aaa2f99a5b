"""Settings for the commands that talk to the deployment, read as the worker reads them."""

from __future__ import annotations

import sys

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
