"""``erase``: a player forgotten: every occurrence of their id in the inputs is read as
``pseudonym`` (stream.corrections.pseudonyms), so their opponents' ratings stay as they are and
no output names them. The record holds only the pseudonym, never the id, and the fingerprint of
the key it was made with (``key``: never the key itself), so an erasure applied with another
key is refused instead of erasing nobody."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from stream.corrections.effects import Effects, Kind, Seen
from stream.corrections.fields import AUDIT_FIELDS, Audit, flag, text

# The fields of its JSON besides the audit's.
FIELDS = frozenset({"pseudonym", "key", "may_match_nothing"})


@dataclass(frozen=True, slots=True)
class Erase:
    """A forgotten player, known here only by their ``pseudonym``; ``key``: the fingerprint
    of the pseudonym key it was made with (None: a record from before fingerprints)."""

    audit: Audit
    pseudonym: str
    key: str | None = None
    may_match_nothing: bool = False


def parse(obj: Mapping[str, Any], audit: Audit) -> Erase:
    # Checked before the registry's own check: an erase record that also names the player
    # would keep what it erases, which deserves its own words.
    extra = sorted(set(obj) - AUDIT_FIELDS - FIELDS)
    if extra:
        raise ValueError(f"an erase holds only its pseudonym; unexpected: {', '.join(extra)}")
    key = None if obj.get("key") is None else text(obj, "key")
    return Erase(audit, text(obj, "pseudonym"), key, flag(obj, "may_match_nothing"))


def fields(erase: Erase) -> dict[str, Any]:
    out: dict[str, Any] = {"pseudonym": erase.pseudonym}
    if erase.key is not None:
        out["key"] = erase.key
    if erase.may_match_nothing:
        out["may_match_nothing"] = True
    return out


def effects(erase: Erase, line: int, into: Effects) -> None:
    into.erased.setdefault(erase.pseudonym, line)
    if erase.key is not None:
        into.fingerprints.append((line, erase.audit.id, erase.key))


def unmatched(erase: Erase, line: int, seen: Seen) -> str | None:
    if erase.may_match_nothing or erase.pseudonym in seen.pseudonyms:
        return None
    return (
        f"erase {erase.audit.id!r} erases nobody: no player of the history has its pseudonym"
        " (a player in no match here, or a key other than the one it was made with); one of"
        ' another deployment: "may_match_nothing": true'
    )


KIND: Kind[Erase] = Kind(
    "erase", Erase, parse, fields, FIELDS, needs_key=True, effects=effects, unmatched=unmatched
)
