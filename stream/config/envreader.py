"""Reading one setting from the environment: each kind of value checked, and a mistake named by
its variable (SettingsError: one line, exit 2)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeVar

from stream.errors import UserError

__all__ = ["EnvReader", "SettingsError"]


T = TypeVar("T")


class SettingsError(UserError, ValueError):
    """A setting that cannot be used; the message names the variable."""


class EnvReader:
    """The variables of ``env``, each read as what it holds; unset or empty: the default."""

    def __init__(self, env: Mapping[str, str]) -> None:
        self.env = env

    def integer(self, name: str, default: int) -> int:
        value = self._parsed(name, int, "a whole number")
        if value is None:
            return default
        if value < 1:
            raise SettingsError(f"{name}: must be at least 1, got {value}")
        return value

    def count(self, name: str, default: int) -> int:
        """A whole number that may be 0."""
        value = self._parsed(name, int, "a whole number")
        if value is None:
            return default
        if value < 0:
            raise SettingsError(f"{name}: must be 0 or more, got {value}")
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
        value = self._parsed(name, float, "a number")
        if value is None:
            return default
        if not 0.0 <= value < float("inf"):
            raise SettingsError(f"{name}: must be a finite number >= 0, got {self.env[name]!r}")
        return value

    def seconds(self, name: str, default: float, scale: float = 1.0) -> float:
        value = self._parsed(name, lambda raw: float(raw) / scale, "a number")
        if value is None:
            return default
        if not value > 0 or value == float("inf"):
            raise SettingsError(f"{name}: must be a positive number, got {self.env[name]!r}")
        return value

    def name(self, name: str, default: str) -> str:
        raw = self.env.get(name) or default
        allowed = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
        if not set(raw) <= allowed or len(raw) > 200:
            raise SettingsError(
                f"{name}: {raw!r} is not a valid Kafka name (letters, digits, '.', '_', '-')"
            )
        return raw

    def _parsed(self, name: str, parse: Callable[[str], T], expected: str) -> T | None:
        """The variable as ``parse`` reads it, None when unset or empty; what ``parse`` refuses
        is a SettingsError saying what was ``expected``. Range checks stay with each kind, since
        each words its own."""
        raw = self.env.get(name)
        if raw is None or raw == "":
            return None
        try:
            return parse(raw)
        except ValueError:
            raise SettingsError(f"{name}: expected {expected}, got {raw!r}") from None
