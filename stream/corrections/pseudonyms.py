"""The stable pseudonym of an erased player.

A keyed hash (HMAC-SHA-256) of the player id, so the same id always gets the same pseudonym
(replay applies an erasure identically every time) and nobody without the key can find which
id a pseudonym stands for by hashing candidate ids: a plain hash of a guessable id would keep
what the erasure removes. The key is ``SKILLSTREAM_PSEUDONYM_KEY`` (at least 16 characters),
the same wherever corrections are made or applied; losing it only means new erasures cannot be
matched to old ones.
"""

from __future__ import annotations

import hashlib
import hmac
import os

from stream.errors import UserError

__all__ = [
    "KEY_VARIABLE",
    "PREFIX",
    "ErasedNames",
    "key_fingerprint",
    "pseudonym",
    "pseudonym_key",
]

KEY_VARIABLE = "SKILLSTREAM_PSEUDONYM_KEY"
PREFIX = "erased-"
MIN_KEY_LENGTH = 16


def pseudonym(key: bytes, player_id: str) -> str:
    """``erased-`` and 32 hex digits (128 bits of the HMAC): the id's stand-in everywhere."""
    digest = hmac.new(key, player_id.encode("utf-8"), hashlib.sha256).hexdigest()
    return PREFIX + digest[:32]


def key_fingerprint(key: bytes) -> str:
    """What an erase record keeps of the key it was made with: 16 hex digits of a keyed hash of
    a fixed text, which tells two keys apart and says nothing of either (the key cannot be
    found from it, nor any pseudonym made)."""
    return hmac.new(key, b"skillstream pseudonym key fingerprint", hashlib.sha256).hexdigest()[:16]


def pseudonym_key(environ: dict[str, str] | None = None) -> bytes:
    """The key from the environment; UserError (one line naming the variable) when it is
    missing or shorter than 16 characters."""
    value = (os.environ if environ is None else environ).get(KEY_VARIABLE, "")
    if not value:
        raise UserError(
            f"{KEY_VARIABLE} is not set: erasures need the key their pseudonyms were made with"
        )
    if len(value) < MIN_KEY_LENGTH:
        raise UserError(
            f"{KEY_VARIABLE} has {len(value)} characters; use at least {MIN_KEY_LENGTH} "
            "(a short key lets pseudonyms be guessed back to ids)"
        )
    return value.encode("utf-8")


class ErasedNames:
    """The id each player is rated under once some are erased: the pseudonym (made with
    ``key``) when it is one of ``erased``, else the id itself. Remembers up to a million ids
    (one keyed hash each otherwise)."""

    def __init__(self, erased: frozenset[str], key: bytes | None) -> None:
        if erased and key is None:
            raise ValueError("erasures need the pseudonym key")
        self.erased = erased
        self._key = key
        self._names: dict[str, str] = {}
        # The pseudonyms some id of the inputs was read as: an erasure not among them erased
        # nobody here.
        self.matched: set[str] = set()

    def name(self, player_id: str) -> str:
        """The id an input's ``player_id`` is rated under (and, when erased, the erasure noted
        as having matched someone)."""
        if not self.erased:
            return player_id
        found = self._names.get(player_id)
        if found is None:
            found = self.rated_as(player_id)
            if found in self.erased:
                self.matched.add(found)
            if len(self._names) < 1_000_000:
                self._names[player_id] = found
        return found

    def rated_as(self, player_id: str) -> str:
        """The id ``player_id`` would be rated under, noting nothing (a correction's own
        naming of a player is not a match of theirs)."""
        if not self.erased or player_id in self.erased:
            return player_id  # none erased, or already a pseudonym
        assert self._key is not None
        made = pseudonym(self._key, player_id)
        return made if made in self.erased else player_id
