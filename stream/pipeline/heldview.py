"""A table as the batches see it: the writes held for the next flush over those being sent
over the store, one reading rule for the Faust table port (stream/pipeline/changelogs.py) and
the crash simulator's (stream/crashsim/tables.py).

Reads see every write at once; a key held as deleted reads as absent; iterating a table skips
the checkpoint records (stream/pipeline/checkpoints.py), which no reader of a table may see.
No Faust here: the store is whatever mapping the subclass gives.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from stream.protocol.checkpoints import is_checkpoint

__all__ = ["Held", "HeldView"]

# A held write: the changelog partition, and the encoded value (None: deleted).
Held = tuple[int, bytes | None]

_MISSING: Any = object()


class HeldView(Mapping[bytes, bytes]):
    """Held writes over those being sent over the store (``store``: the subclass's)."""

    def __init__(self) -> None:
        self.held: dict[bytes, Held] = {}
        self.sending: dict[bytes, Held] = {}

    @property
    def store(self) -> Mapping[bytes, bytes]:
        raise NotImplementedError

    def get(self, key: bytes, default: Any = None) -> Any:
        entry = self.held.get(key) or self.sending.get(key)
        if entry is not None:
            return default if entry[1] is None else entry[1]
        return self.store.get(key, default)

    def __getitem__(self, key: bytes) -> bytes:
        value = self.get(key, _MISSING)
        if value is _MISSING:
            raise KeyError(key)
        found: bytes = value
        return found

    def __contains__(self, key: object) -> bool:
        return isinstance(key, bytes) and self.get(key) is not None

    def __iter__(self) -> Iterator[bytes]:
        # Only used to rebuild a partition after assignment: not on the hot path.
        over = {**self.sending, **self.held}
        for key, (_, value) in over.items():
            if value is not None and not is_checkpoint(key):
                yield key
        for key in list(self.store.keys()):
            if key not in over and not is_checkpoint(key):
                yield key

    def __len__(self) -> int:
        return sum(1 for _ in self)
