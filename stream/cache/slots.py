"""Redis Cluster key slots: CRC16/XMODEM of the key (or of its hash tag) modulo 16384.

Pure and dependency-free, so a test can prove which keys share a slot without a cluster: a
Lua script or a MULTI may only touch keys of one slot, and a server without cluster mode has
no ``CLUSTER KEYSLOT`` to ask.
"""

from __future__ import annotations

__all__ = ["SLOTS", "crc16_xmodem", "hash_tag", "key_slot"]

SLOTS = 16384


def _table() -> tuple[int, ...]:
    table = []
    for byte in range(256):
        crc = byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
        table.append(crc & 0xFFFF)
    return tuple(table)


_TABLE = _table()


def crc16_xmodem(data: bytes) -> int:
    """CRC16/XMODEM (polynomial 0x1021, initial value 0), the checksum Redis Cluster uses."""
    crc = 0
    for byte in data:
        crc = ((crc << 8) & 0xFFFF) ^ _TABLE[((crc >> 8) ^ byte) & 0xFF]
    return crc


def hash_tag(key: bytes) -> bytes:
    """The part of ``key`` Redis hashes: the text between the first ``{`` and the first ``}``
    after it when that text is non-empty, otherwise the whole key."""
    start = key.find(b"{")
    if start >= 0:
        end = key.find(b"}", start + 1)
        if end > start + 1:
            return key[start + 1 : end]
    return key


def key_slot(key: str | bytes) -> int:
    """The cluster slot of ``key`` (a str is hashed as its UTF-8 bytes, as redis-py sends it)."""
    data = key.encode() if isinstance(key, str) else key
    return crc16_xmodem(hash_tag(data)) % SLOTS
