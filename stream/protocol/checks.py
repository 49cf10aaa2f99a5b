"""Checked reading of parsed JSON: every field of a command is checked before it is used, and
a malformed one raises :class:`ProtocolError`, whose message is the dead letter's reason."""

from __future__ import annotations

from typing import cast


class ProtocolError(ValueError):
    """A command or record that does not have the protocol's layout (the reason says where)."""


# --- checked reading of parsed JSON ----------------------------------------------------------


def as_list(data: object, what: str) -> list[object]:
    if not isinstance(data, list):
        raise ProtocolError(f"{what}: expected a list, got {kind_of(data)}")
    return data


def as_dict(data: object, what: str) -> dict[str, object]:
    if not isinstance(data, dict):
        raise ProtocolError(f"{what}: expected an object, got {kind_of(data)}")
    return data


def as_str(data: object, what: str) -> str:
    if not isinstance(data, str):
        raise ProtocolError(f"{what}: expected a string, got {kind_of(data)}")
    return data


def as_int(data: object, what: str) -> int:
    if isinstance(data, bool) or not isinstance(data, int):
        raise ProtocolError(f"{what}: expected an integer, got {kind_of(data)}")
    return data


def as_number(data: object, what: str) -> float:
    # Kept as read (an int stays an int): the bytes written back are the bytes read.
    if isinstance(data, bool) or not isinstance(data, int | float):
        raise ProtocolError(f"{what}: expected a number, got {kind_of(data)}")
    return data


def as_optional_number(data: object, what: str) -> float | None:
    return None if data is None else as_number(data, what)


def as_bool(data: object, what: str) -> bool:
    if not isinstance(data, bool):
        raise ProtocolError(f"{what}: expected true or false, got {kind_of(data)}")
    return data


def required(data: dict[str, object], name: str, what: str) -> object:
    try:
        return data[name]
    except KeyError:
        raise ProtocolError(f"{what}: field {name!r} is missing") from None


def as_strings(data: object, what: str) -> list[str]:
    items = as_list(data, what)
    # One pass with no call per element (match ids in every record): the common, valid case.
    if all(type(item) is str for item in items):
        return cast("list[str]", items)
    return [as_str(item, what) for item in items]


def as_ints(data: object, what: str) -> list[int]:
    items = as_list(data, what)
    if all(type(item) is int for item in items):
        return cast("list[int]", items)
    return [as_int(item, what) for item in items]


def kind_of(data: object) -> str:
    return "null" if data is None else type(data).__name__


def arity(items: list[object], what: str, *counts: int) -> None:
    if len(items) not in counts:
        expected = " or ".join(str(c) for c in counts)
        if len(counts) > 2 and list(counts) == list(range(counts[0], counts[-1] + 1)):
            expected = f"{counts[0]} to {counts[-1]}"
        raise ProtocolError(f"{what}: expected {expected} elements, got {len(items)}")
