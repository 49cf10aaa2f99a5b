"""Checks of the server addresses in the settings, so a value no client could use is refused
before anything connects, with a message naming the variable and the value.

Each function raises :class:`AddressError` (a ``UserError``); the settings loader re-raises it
as a ``SettingsError``. Nothing here touches the network.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from stream.errors import UserError

REDIS_SCHEMES = ("redis", "rediss", "unix")


class AddressError(UserError, ValueError):
    """An address or port that no client could use; the message names the variable."""


def port_number(name: str, raw: str, *, low: int = 1) -> int:
    """``raw`` as a TCP port (``low`` to 65535)."""
    try:
        port = int(raw)
    except ValueError:
        raise AddressError(f"{name}: expected a port number, got {raw!r}") from None
    if not low <= port <= 65535:
        raise AddressError(f"{name}: port must be between {low} and 65535, got {port}")
    return port


def bootstrap_addresses(name: str, raw: str) -> list[tuple[str, int]]:
    """``host[:port]`` entries separated by commas (the port defaults to 9092, as in every
    Kafka client); IPv6 hosts in brackets: ``[::1]:9092``."""
    entries = [entry.strip() for entry in raw.split(",")]
    if not any(entries):
        raise AddressError(f"{name}: no broker address given")
    addresses = []
    for entry in entries:
        if not entry:
            raise AddressError(f"{name}: empty address in {raw!r}")
        host, port = _host_and_port(name, entry)
        addresses.append((host, port))
    return addresses


def _host_and_port(name: str, entry: str) -> tuple[str, int]:
    if "://" in entry:
        raise AddressError(f"{name}: expected host:port, got {entry!r} (no scheme)")
    if entry.startswith("["):
        host, bracket, rest = entry[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            raise AddressError(f"{name}: {entry!r} is not [IPv6 address]:port")
        port_text = rest[1:] if rest else "9092"
    elif entry.count(":") > 1:
        raise AddressError(f"{name}: {entry!r}: put an IPv6 address in brackets, [::1]:9092")
    else:
        host, _, port_text = entry.partition(":")
        port_text = port_text or "9092"
    if not host or any(c.isspace() or c in "/@?#" for c in host):
        raise AddressError(f"{name}: {entry!r} has no usable host name")
    return host, port_number(f"{name} ({entry})", port_text)


def check_redis_url(name: str, raw: str, shown: str) -> None:
    """A URL redis-py can connect with: ``redis://``, ``rediss://`` (TLS) or ``unix://``, with a
    host (or socket path), a port in range and a numeric database. Messages quote ``shown``
    (the URL with its password redacted), never ``raw``."""
    try:
        parts = urlsplit(raw)
        port = parts.port
    except ValueError as exc:
        raise AddressError(f"{name}: {shown!r} is not a usable URL ({exc})") from None
    if parts.scheme not in REDIS_SCHEMES:
        raise AddressError(f"{name}: {shown!r} must start with redis://, rediss:// or unix://")
    if parts.scheme == "unix":
        if not parts.path:
            raise AddressError(f"{name}: {shown!r} names no socket path")
        return
    if not parts.hostname:
        raise AddressError(f"{name}: {shown!r} names no host")
    if port is not None and port < 1:
        raise AddressError(f"{name}: port must be between 1 and 65535, got {port}")
    database = parts.path.lstrip("/")
    if database and not database.isdigit():
        raise AddressError(f"{name}: database must be a number, got {database!r} in {shown!r}")


def check_bind_address(name: str, raw: str) -> str:
    """An IP address to listen on (``0.0.0.0``: every interface; ``127.0.0.1``: this machine)."""
    try:
        return str(ipaddress.ip_address(raw))
    except ValueError:
        raise AddressError(
            f"{name}: expected an IP address to listen on (0.0.0.0, 127.0.0.1, ::), got {raw!r}"
        ) from None
