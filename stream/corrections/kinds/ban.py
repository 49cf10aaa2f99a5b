"""``ban``: a player found cheating in ``mode``, and what their matches from ``from`` until
``until`` (the ban; finish times) still count for, by ``policy``:

- ``refund`` (the default): the banned player's results in those matches are undone, and so
  are the results of every player whose side the banned player's side beat (their losses to
  the cheater, refunded); their teammates, and those who beat them or drew, keep what they
  played. The rest of each match is rated as played: the others meet the refunded players at
  the ratings they had, and the population learns from the match as it was.
- ``void``: the matches count as never played, for everyone (a void of the banned player's
  window, stream/corrections/kinds/void.py): for when nobody's result in them can be trusted.

Why the banned player's own gains are undone under ``refund`` too, and why teammates keep
theirs: docs/decisions.md#a-ban-refunds-the-cheaters-victims.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from stream.corrections.effects import Effects, Kind, Refund, Resolution, Seen, Where
from stream.corrections.fields import Audit, identifier, text, time_field
from stream.corrections.kinds import void
from stream.errors import UserError, did_you_mean
from stream.events import describe_value, format_time

Policy = Literal["refund", "void"]
POLICIES: tuple[Policy, ...] = ("refund", "void")

# The fields of its JSON besides the audit's.
FIELDS = frozenset({"mode", "player", "from", "until", "policy", "matches"})


@dataclass(frozen=True, slots=True)
class Ban:
    """``player`` banned in ``mode``: their matches that finished in [``since``, ``until``)
    refunded or voided by ``policy``; ``matches``, for a void resolved for a worker, are the
    ids of those matches (stream.corrections.resolve)."""

    audit: Audit
    mode: str
    player: str
    since: float
    until: float
    policy: Policy = "refund"
    matches: frozenset[str] = frozenset()


def parse(obj: Mapping[str, Any], audit: Audit) -> Ban:
    since, until = time_field(obj, "from"), time_field(obj, "until")
    if not since < until:
        raise ValueError(f"'from' must be before 'until' ({format_time(since)} is not)")
    policy = obj.get("policy", "refund")
    if policy not in POLICIES:
        raise ValueError(
            f"'policy' must be 'refund' or 'void', got {describe_value(policy)}"
            f"{did_you_mean(str(policy), POLICIES)}"
        )
    matches = obj.get("matches")
    ids: frozenset[str] = frozenset()
    if matches is not None:
        if policy != "void":
            raise ValueError("'matches' (a resolved void's ids) goes with 'policy': 'void'")
        if not isinstance(matches, list) or not matches or len(matches) > void.MAX_VOIDED_IDS:
            raise ValueError(
                f"'matches' must be a list of 1 to {void.MAX_VOIDED_IDS:,} match ids, got "
                f"{describe_value(matches)}"
            )
        ids = frozenset(identifier(m, "matches[]") for m in matches)
    return Ban(
        audit,
        mode=text(obj, "mode"),
        player=text(obj, "player"),
        since=since,
        until=until,
        policy="void" if policy == "void" else "refund",
        matches=ids,
    )


def fields(ban: Ban) -> dict[str, Any]:
    out: dict[str, Any] = {"mode": ban.mode, "player": ban.player}
    out["from"] = format_time(ban.since)
    out["until"] = format_time(ban.until)
    out["policy"] = ban.policy
    if ban.matches:
        out["matches"] = sorted(ban.matches)
    return out


def _as_void(ban: Ban) -> void.Void:
    """The void a ban with policy ``void`` is: its window, or the ids it was resolved to."""
    if ban.matches:
        return void.Void(ban.audit, matches=ban.matches)
    return void.Void(ban.audit, player=ban.player, since=ban.since, until=ban.until, mode=ban.mode)


def effects(ban: Ban, line: int, into: Effects) -> None:
    if ban.policy == "void":
        void.effects(_as_void(ban), line, into)
        return
    into.refunds.append(Refund(ban.player, ban.mode, ban.since, ban.until, line, ban.audit))


def refused(ban: Ban, where: Where) -> str | None:
    if not where.accepts(ban.mode):
        return f"ban {ban.audit.id!r}: mode {ban.mode!r} is not in {where.rated}"
    if ban.policy == "void" and not ban.matches and where.live:
        return (
            f"ban {ban.audit.id!r} voids a player's matches in a time window; a worker takes"
            " match ids only: resolve it with `skillstream corrections resolve` first"
        )
    return None


def unmatched(ban: Ban, line: int, seen: Seen) -> str | None:
    if ban.policy == "void":
        why = void.unmatched(_as_void(ban), line, seen)
        return None if why is None else why.replace("void ", "ban ", 1)
    if line in seen.refund_hits:
        return None
    earlier = seen.refund_covered.get(line)
    if earlier is not None:
        # A repeated ban: applied as if new, it would read as done twice (as a repeated void).
        return (
            f"ban {ban.audit.id!r} refunds nothing more: every result it covers is refunded"
            f" from line {earlier} on"
        )
    return (
        f"ban {ban.audit.id!r} refunds nothing: {ban.player!r} finished no match in mode "
        f"{ban.mode!r} from {format_time(ban.since)} until {format_time(ban.until)}"
        f"{did_you_mean(ban.mode, seen.modes) if ban.mode not in seen.modes else ''}"
    )


def resolved(ban: Ban, line: int, found: Resolution) -> Ban:
    """A ban with policy ``void`` as the ids of the matches its window holds (as a window
    void is resolved, and refused as one is); a refund as it is: the player side decides it
    from the match's result, which a worker has when it rates (no resolution needed)."""
    if ban.policy != "void" or ban.matches:
        return ban
    try:
        ids = void.resolved(_as_void(ban), line, found).matches
    except UserError as exc:
        raise UserError(str(exc).replace(": void ", ": ban ", 1)) from None
    return dataclasses.replace(ban, matches=ids)


KIND: Kind[Ban] = Kind(
    "ban",
    Ban,
    parse,
    fields,
    FIELDS,
    effects=effects,
    refused=refused,
    unmatched=unmatched,
    resolved=resolved,
)
