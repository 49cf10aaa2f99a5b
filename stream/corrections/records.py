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
- ``ban``: ``player`` banned in ``mode``: their matches that finished in [``from``, ``until``)
  refunded (``policy`` ``refund``: their results and those of the players their side beat are
  undone, the others' kept) or voided (``policy`` ``void``: as a void of that window);
- ``rerate``: a re-rated ``generation`` took over rating-changed (``skillstream corrections
  cutover``), from the deployment ``group`` through its output topic ``shadow``. A record of
  what was done, not an instruction: what it applied are the corrections before it and the
  re-rating deployment's modes file, so replay passes over it.

An adjust or an erase that matches no player of the history it is applied to is refused
(stream.corrections.ledger), unless it says it may (``may_match_nothing``: a player of another
deployment or history, deliberately).

Each kind is one module of stream/corrections/kinds/ (its record, how its fields read and
write, what it does in the terms of stream.corrections.effects, when it is refused, how it says
it did nothing, how it is resolved for a worker) and one entry of :data:`KINDS`; nothing here
or in the readers of records asks which kind a record is by testing its class.

The same records are the lines of a corrections file (``skillstream replay --corrections``) and
the values of the audit topic, so a correction is applied identically wherever it is read.
Pure: parsing checks every field and raises ValueError with the field's name.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from stream.corrections.effects import Correction, Effects, Kind, Where
from stream.corrections.fields import AUDIT_FIELDS, Audit, audit_of
from stream.corrections.kinds import adjust, ban, erase, rerate, void
from stream.corrections.kinds.adjust import Adjust
from stream.corrections.kinds.ban import Ban
from stream.corrections.kinds.erase import Erase
from stream.corrections.kinds.rerate import Rerate
from stream.corrections.kinds.void import Void
from stream.errors import did_you_mean
from stream.events import describe_value, format_time

__all__ = [
    "KINDS",
    "Adjust",
    "Audit",
    "Ban",
    "Correction",
    "Erase",
    "Kind",
    "Rerate",
    "Void",
    "correction_json",
    "effects_of",
    "kind_of",
    "needs_key",
    "parse_correction",
    "refusal",
]


KINDS: dict[str, Kind[Any]] = {
    kind.name: kind for kind in (void.KIND, adjust.KIND, erase.KIND, ban.KIND, rerate.KIND)
}


def kind_of(correction: Correction) -> Kind[Any]:
    """The kind ``correction`` is a record of."""
    for kind in KINDS.values():
        if type(correction) is kind.record:
            return kind
    raise KeyError(f"{type(correction).__name__} is no registered kind of correction")


def effects_of(corrections: Iterable[tuple[int, Correction]]) -> Effects:
    """What ``corrections`` (each with its file line) do, gathered kind by kind."""
    into = Effects()
    for line, correction in corrections:
        kind_of(correction).effects(correction, line, into)
    return into


def refusal(corrections: Iterable[tuple[int, Correction]], where: Where) -> tuple[int, str] | None:
    """The line of the first correction that cannot apply ``where``, and why (None: all can)."""
    for line, correction in corrections:
        why = kind_of(correction).refused(correction, where)
        if why is not None:
            return line, why
    return None


def needs_key(corrections: Iterable[tuple[int, Correction]]) -> bool:
    """Whether applying ``corrections`` takes the pseudonym key."""
    return any(kind_of(c).needs_key for _, c in corrections)


def parse_correction(obj: object) -> Correction:
    """One correction from its JSON object; ValueError names the first field that is wrong."""
    if not isinstance(obj, Mapping):
        raise ValueError(f"a correction must be a JSON object, got {describe_value(obj)}")
    audit = audit_of(obj)
    given = obj.get("kind")
    kind = KINDS.get(given) if isinstance(given, str) else None
    if kind is None:
        names = list(KINDS)
        raise ValueError(
            f"'kind' must be {', '.join(names[:-1])} or {names[-1]}, got {describe_value(given)}"
        )
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
