"""An operator's corrections of the past: the registry of their kinds, and their JSON form.

Every correction is an audit record: ``id`` (unique), ``by`` (who), ``at`` (when it was made,
wall time), ``reason`` (why) and what it does:

- ``void``: matches that must count as never played: by ``matches`` (ids), or every match of
  ``player`` that finished in [``from``, ``until``) (in ``mode`` only, when given);
- ``adjust``: ``player``'s rating in ``mode`` ``set`` to a value or ``shift``-ed by one, as of
  event time ``effective`` (their matches before it are rated first, those after it from the
  adjusted rating);
- ``erase``: a player forgotten: every occurrence of their id in the inputs is read as
  ``pseudonym`` (stream.corrections.pseudonyms), so their opponents' ratings stay as they are
  and no output names them. The record holds only the pseudonym, never the id, and the
  fingerprint of the key it was made with (``key``: never the key itself), so an erasure
  applied with another key is refused instead of erasing nobody;
- ``rerate``: a re-rated ``generation`` took over rating-changed (``skillstream corrections
  cutover``), from the deployment ``group`` through its output topic ``shadow``. A record of
  what was done, not an instruction: what it applied are the corrections before it and the
  re-rating deployment's modes file, so replay passes over it.

An adjust or an erase that matches no player of the history it is applied to is refused
(stream.corrections.ledger), unless it says it may (``may_match_nothing``: a player of another
deployment or history, deliberately).

Each kind is one module of stream/corrections/kinds/ (its record, how its fields read and
write) and one line of :data:`KINDS`; nothing here or in the readers of records asks which
kind a record is by testing its class.

The same records are the lines of a corrections file (``skillstream replay --corrections``) and
the values of the audit topic, so a correction is applied identically wherever it is read.
Pure: parsing checks every field and raises ValueError with the field's name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from stream.corrections.fields import AUDIT_FIELDS, Audit, audit_of
from stream.corrections.kinds import adjust, erase, rerate, void
from stream.corrections.kinds.adjust import Adjust
from stream.corrections.kinds.erase import Erase
from stream.corrections.kinds.rerate import Rerate
from stream.corrections.kinds.void import Void
from stream.errors import did_you_mean
from stream.events import describe_value, format_time

__all__ = [
    "KINDS",
    "Adjust",
    "Audit",
    "Correction",
    "Erase",
    "Kind",
    "Rerate",
    "Void",
    "correction_json",
    "kind_of",
    "parse_correction",
]

Correction = Void | Adjust | Erase | Rerate
C = TypeVar("C", Void, Adjust, Erase, Rerate)


@dataclass(frozen=True, slots=True)
class Kind(Generic[C]):
    """A kind of correction: its ``name`` (the JSON's ``kind``), its ``record`` type, how its
    fields are read (``parse``: ValueError naming the field) and written (``fields``), the
    ``names`` of its fields besides the audit's (any other is refused: a misspelt field would
    otherwise be dropped and the record do less than it says), and ``needs_key``: applying it
    takes the pseudonym key (stream.corrections.pseudonyms)."""

    name: str
    record: type[C]
    parse: Callable[[Mapping[str, Any], Audit], C]
    fields: Callable[[C], dict[str, Any]]
    names: frozenset[str]
    needs_key: bool = False


KINDS: tuple[Kind[Any], ...] = (
    Kind("void", Void, void.parse, void.fields, void.FIELDS),
    Kind("adjust", Adjust, adjust.parse, adjust.fields, adjust.FIELDS),
    Kind("erase", Erase, erase.parse, erase.fields, erase.FIELDS, needs_key=True),
    Kind("rerate", Rerate, rerate.parse, rerate.fields, rerate.FIELDS),
)
_BY_NAME = {kind.name: kind for kind in KINDS}
_BY_RECORD = {kind.record: kind for kind in KINDS}
_NAMES = ", ".join(kind.name for kind in KINDS[:-1]) + f" or {KINDS[-1].name}"


def kind_of(correction: Correction) -> Kind[Any]:
    """The kind ``correction`` is a record of."""
    return _BY_RECORD[type(correction)]


def parse_correction(obj: object) -> Correction:
    """One correction from its JSON object; ValueError names the first field that is wrong."""
    if not isinstance(obj, Mapping):
        raise ValueError(f"a correction must be a JSON object, got {describe_value(obj)}")
    audit = audit_of(obj)
    given = obj.get("kind")
    kind = _BY_NAME.get(given) if isinstance(given, str) else None
    if kind is None:
        raise ValueError(f"'kind' must be {_NAMES}, got {describe_value(given)}")
    parsed: Correction = kind.parse(obj, audit)
    unknown = sorted(set(obj) - AUDIT_FIELDS - kind.names)
    if unknown:
        allowed = AUDIT_FIELDS | kind.names
        raise ValueError(
            f"{'an' if kind.name[0] in 'aeiou' else 'a'} {kind.name} has no field"
            f" {unknown[0]!r}{did_you_mean(unknown[0], allowed)}"
        )
    return parsed


def correction_json(correction: Correction) -> dict[str, Any]:
    """The JSON object of ``correction`` (what :func:`parse_correction` reads back)."""
    audit = correction.audit
    kind = kind_of(correction)
    out: dict[str, Any] = {"id": audit.id, "kind": kind.name}
    out.update(by=audit.by, at=format_time(audit.at), reason=audit.reason)
    out.update(kind.fields(correction))
    return out
