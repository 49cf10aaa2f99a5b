"""Reading one setting from the environment: each kind of value checked, and a mistake named by
its variable (SettingsError: one line, exit 2)."""

from __future__ import annotations

from collections.abc import Mapping

from stream.errors import UserError

__all__ = ["EnvReader", "SettingsError"]


class SettingsError(UserError, ValueError):
    """A setting that cannot be used; the message names the variable."""


class EnvReader:
    """The variables of ``env``, each read as what it holds; unset or empty: the default."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.env = env

    def integer(self, name: str, default: int) -> int:
        raw = self.env.get(name)
        if raw is None or raw == "":
            return default
        try:
            value = int(raw)
        except ValueError:
            raise SettingsError(f"{name}: expected a whole number, got {raw!r}") from None
        if value < 1:
            raise SettingsError(f"{name}: must be at least 1, got {value}")
        return value

    def boolean(self, name: str, default: bool) -> bool:
        raw = (self.env.get(name) or "").strip().lower()
        if raw == "":
            return default
        if raw in ("1", "true", "yes", "on"):
            return True
        if raw in ("0", "false", "no", "off"):
            return False
        raise SettingsError(f"{name}: expected true or false, got {raw!r}")

    def number(self, name: str, default: float) -> float:
        raw = self.env.get(name)
        if raw is None or raw == "":
            return default
        try:
            value = float(raw)
        except ValueError:
            raise SettingsError(f"{name}: expected a number, got {raw!r}") from None
        if not 0.0 <= value < float("inf"):
            raise SettingsError(f"{name}: must be a finite number >= 0, got {raw!r}")
        return value

    def seconds(self, name: str, default: float, scale: float = 1.0) -> float:
        raw = self.env.get(name)
        if raw is None or raw == "":
            return default
        try:
            value = float(raw) / scale
        except ValueError:
            raise SettingsError(f"{name}: expected a number, got {raw!r}") from None
        if not value > 0 or value == float("inf"):
            raise SettingsError(f"{name}: must be a positive number, got {raw!r}")
        return value

    def name(self, name: str, default: str) -> str:
        raw = self.env.get(name) or default
        allowed = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
        if not set(raw) <= allowed or len(raw) > 200:
            raise SettingsError(
                f"{name}: {raw!r} is not a valid Kafka name (letters, digits, '.', '_', '-')"
            )
        return raw
