"""A batch's view of one table: reads fall through to the table, writes wait for the outbox.

Tables hold JSON *bytes* (keys and values, both as orjson writes them, in the layout
stream/protocol/ defines). Bytes are what the changelog carries anyway, they cost a fraction
of the memory of the decoded records, and the garbage collector never has to walk them: with
millions of players, full collections of decoded values paused the worker for hundreds of
milliseconds.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Generic, TypeVar

from stream.protocol import TableCodec

K = TypeVar("K")
V = TypeVar("V")


def _trimmed(data: bytes) -> bytes:
    # orjson over-allocates its result and never shrinks it (ijl/orjson#483); a copy is exact.
    return bytes(memoryview(data))


class StateView(Generic[K, V]):
    """Working copies of one table's records for one batch.

    ``get`` returns a private, decoded copy the caller may change; ``put``/``delete`` record
    the new value. Nothing reaches the table until the batch runner has delivered the batch's
    outbox and applies :meth:`changes`, so a batch whose outputs fail leaves the table as it
    was.
    """

    def __init__(self, table: Mapping[bytes, bytes], codec: TableCodec[K, V]) -> None:
        self._table = table
        self._codec = codec
        self._working: dict[K, V | None] = {}
        self._dirty: dict[K, V | None] = {}

    def get(self, key: K) -> V | None:
        if key in self._working:
            return self._working[key]
        stored = self._table.get(self._codec.key_bytes(key))
        value = None if stored is None else self._codec.value(stored)
        self._working[key] = value
        return value

    def put(self, key: K, value: V | None) -> None:
        self._working[key] = value
        self._dirty[key] = value

    def delete(self, key: K) -> None:
        self._working[key] = None
        if self._codec.key_bytes(key) in self._table:
            self._dirty[key] = None
        else:
            # Created in this batch, or never stored: a tombstone would be a changelog record
            # about nothing.
            self._dirty.pop(key, None)

    def changes(self) -> dict[bytes, bytes | None]:
        """Encoded keys written in this batch and their encoded values (None: deleted).

        Right-sized copies: orjson returns bytes that keep its whole output buffer (about 4 KiB
        for a 450-byte rating record), and these live in the table for as long as the player
        does. Copying cut a player's rating record from 4.1 KiB to 0.45 KiB of memory.
        """
        codec = self._codec
        return {
            _trimmed(codec.key_bytes(key)): None
            if value is None
            else _trimmed(codec.value_bytes(value))
            for key, value in self._dirty.items()
        }
