"""The checkpoint record every flush ends a changelog partition's batch with: its key and its
value (what it means and who writes it: stream/pipeline/checkpoints.py).

A record of the table like the others, under a key no table key can be: readers of a table or
its changelog (the batch runner's restore, ``cache rebuild``) skip it with :func:`is_checkpoint`.
"""

from __future__ import annotations

from collections.abc import Mapping

import orjson

__all__ = ["checkpoint_key", "decode_checkpoint", "encode_checkpoint", "is_checkpoint"]

# Table keys are JSON (a string, a list or a number): none starts with a NUL byte.
CHECKPOINT_PREFIX = b"\x00checkpoint:"


def checkpoint_key(partition: int) -> bytes:
    """The key of a table partition's checkpoint record (one key per changelog partition, so
    compaction keeps each partition's latest)."""
    return CHECKPOINT_PREFIX + str(partition).encode()


def is_checkpoint(key: bytes | None) -> bool:
    return key is not None and key.startswith(CHECKPOINT_PREFIX)


def encode_checkpoint(offsets: Mapping[str, int]) -> bytes:
    """A checkpoint's value: per input topic, the next offset the state has not processed."""
    return orjson.dumps({"v": 1, "read": dict(sorted(offsets.items()))})


def decode_checkpoint(value: bytes) -> dict[str, int]:
    """The offsets of a checkpoint value; ValueError if it is not one."""
    try:
        data = orjson.loads(value)
        read = data["read"]
        if data.get("v") != 1 or not isinstance(read, dict):
            raise ValueError("not a version 1 checkpoint")
        offsets = {str(topic): offset for topic, offset in read.items()}
        if not all(type(o) is int and o >= 0 for o in offsets.values()):
            raise ValueError("offsets must be integers >= 0")
        return offsets
    except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"malformed checkpoint: {exc!r}") from None
