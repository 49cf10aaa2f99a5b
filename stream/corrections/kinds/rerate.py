"""``rerate``: a re-rated ``generation`` took over rating-changed (``skillstream corrections
cutover``), from the deployment ``group`` through its output topic ``shadow``. A record of what
was done, not an instruction: what it applied are the corrections before it and the re-rating
deployment's modes file, so replay passes over it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from stream.corrections.effects import Kind
from stream.corrections.fields import Audit, text

# The fields of its JSON besides the audit's.
FIELDS = frozenset({"generation", "group", "shadow"})


@dataclass(frozen=True, slots=True)
class Rerate:
    """A re-rated ``generation`` took over from deployment ``group`` via topic ``shadow``."""

    audit: Audit
    generation: int
    group: str
    shadow: str


def parse(obj: Mapping[str, Any], audit: Audit) -> Rerate:
    generation = obj.get("generation")
    if isinstance(generation, bool) or not isinstance(generation, int) or generation < 2:
        raise ValueError(f"'generation' must be an integer of 2 or more, got {generation!r}")
    return Rerate(audit, generation, text(obj, "group"), text(obj, "shadow"))


def fields(rerate: Rerate) -> dict[str, Any]:
    return {"generation": rerate.generation, "group": rerate.group, "shadow": rerate.shadow}


KIND: Kind[Rerate] = Kind("rerate", Rerate, parse, fields, FIELDS)
