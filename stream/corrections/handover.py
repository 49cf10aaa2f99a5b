"""What a re-rated generation publishes on rating-changed when it takes over: pure, no I/O.

A re-rate (docs/operations.md#correcting-the-past-live) runs a second deployment over the
retained inputs with the corrections applied (or a new modes file), publishing to a topic of
its own (the *shadow*). When it has caught up and the old deployment is stopped,
``skillstream corrections cutover`` copies the shadow onto rating-changed through a
:class:`Handover`, which knows what rating-changed already holds (:meth:`Handover.read`, every
event of it from its first offset) and decides, per shadow event, what to publish:

- a change equal to the one already published for the same (player, mode, match) (everything
  but the version): nothing, so an operation that changes little publishes little;
- a different one: the new change, marked ``correction`` (generation, reason, who ran the
  re-rate, the version it replaces);
- a change never published (the old deployment stopped before it): the change as it is;
- once the shadow is read to its end, per player of an earlier generation: a **retraction**
  naming the matches of theirs that no longer count (voided, or rated under a pseudonym), with
  ``removed`` when nothing of theirs is left (the cache deletes them), and their latest change
  again when it was left out as unchanged but the one last published for them was not it (a
  voided last match): what the cache holds for every player is then the re-rated one.

Every event it publishes carries ``generation``, and its version is the player's shadow version
plus the highest version of the generations before, plus one: versions only grow, so the cache
(which keeps the highest) and consumers (which drop repeats by player, mode and version) take
the new generation's events over the old, and a retraction's version (that floor itself) sits
between the two. What a consumer does: keep, per (player, mode, match), the change of the
highest version, and drop those a retraction names.

Replay: an event this generation already published (a cut-over restarted after a crash) is
recognised by its player, mode and version and not published again; the same shadow gives the
same bytes, so whatever a crash interrupts, the next run completes it without a repeat.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

__all__ = ["Handover", "content_of", "latest_changes"]

# Fields that differ between generations for the same change, left out of the comparison.
_NOT_CONTENT = ("version", "generation", "correction")

PlayerKey = tuple[str, str]  # mode, player
ChangeKey = tuple[str, str, str]  # mode, player, match


def content_of(event: Mapping[str, Any]) -> int:
    """A fingerprint of the change an event describes, its version and generation left out."""
    kept = {k: v for k, v in event.items() if k not in _NOT_CONTENT}
    return hash(orjson.dumps(kept, option=orjson.OPT_SORT_KEYS))


@dataclass(slots=True)
class _Earlier:
    """One player's changes published by earlier generations."""

    top: int = 0  # the highest version published for them (retractions too)
    changes: dict[str, tuple[int, int]] = field(default_factory=dict)  # match -> (version, content)
    latest: int | None = None  # content of the change of the highest version


class Handover:
    """The decisions of one cut-over (module docstring). ``generation`` is the new one (2 for
    the first re-rate), ``reason`` and ``by`` the operator's: every correction and retraction
    carries them, so `ratings explain` says who corrected a change and why."""

    def __init__(self, generation: int, reason: str, by: str = "skillstream") -> None:
        if generation < 2:
            raise ValueError("a re-rate's generation is 2 or more")
        self.generation = generation
        self.reason = reason
        self.by = by
        self._earlier: dict[PlayerKey, _Earlier] = {}
        self._mine: set[tuple[str, str, int]] = set()
        # Per player of the shadow: its matches and its latest event.
        self._shadow: dict[PlayerKey, tuple[set[str], dict[str, Any], bool]] = {}

    # --- what rating-changed holds ----------------------------------------------------------

    def read(self, event: Mapping[str, Any]) -> None:
        """One event of rating-changed, in offset order. Events of later generations than this
        one do not exist while it runs (one cut-over at a time)."""
        mode, player, version = event["mode"], event["player_id"], int(event["version"])
        generation = int(event.get("generation", 1))
        if generation >= self.generation:
            self._mine.add((mode, player, version))
            return
        earlier = self._earlier.get((mode, player))
        if earlier is None:
            earlier = self._earlier[(mode, player)] = _Earlier()
        retracted = event.get("retracted")
        if retracted is not None:
            for match in retracted:
                earlier.changes.pop(match, None)
            if event.get("removed"):
                earlier.changes.clear()
                earlier.latest = None
        else:
            content = content_of(event)
            earlier.changes[event["match_id"]] = (version, content)
            if version >= earlier.top:
                earlier.latest = content
        earlier.top = max(earlier.top, version)

    # --- what to publish --------------------------------------------------------------------

    def floor(self, key: PlayerKey) -> int:
        """What this generation adds to a player's shadow versions."""
        earlier = self._earlier.get(key)
        return 0 if earlier is None else earlier.top + 1

    def handed(self, event: dict[str, Any]) -> bytes | None:
        """The record to publish for one shadow event (in the shadow's order), or None. Once
        one change of a player goes out, every later one does (the cache keeps the highest
        version, so a later change left out as unchanged would lose to an earlier one)."""
        key = (event["mode"], event["player_id"])
        match = event["match_id"]
        seen = self._shadow.get(key)
        flowing = False if seen is None else seen[2]
        matches = set() if seen is None else seen[0]
        matches.add(match)
        earlier = self._earlier.get(key)
        prior = None if earlier is None else earlier.changes.get(match)
        if not flowing and prior is not None and prior[1] == content_of(event):
            self._shadow[key] = (matches, event, False)
            return None
        self._shadow[key] = (matches, event, True)
        out = self._stamped(event, key)
        if prior is not None:
            out["correction"] = self._correction(replaces=prior[0])
        return self._unless_published(out)

    def closing(self) -> Iterator[bytes]:
        """Once the shadow is read to its end (the old deployment stopped, the new one caught
        up): the retractions and the latest changes left out (module docstring)."""
        for key, earlier in sorted(self._earlier.items()):
            seen = self._shadow.get(key)
            matches = set() if seen is None else seen[0]
            gone = sorted(m for m in earlier.changes if m not in matches)
            if gone or (seen is None and earlier.latest is not None):
                mode, player = key
                record: dict[str, Any] = {
                    "player_id": player,
                    "mode": mode,
                    "retracted": gone,
                    "removed": seen is None,
                    "version": self.floor(key),
                    "generation": self.generation,
                    "correction": self._correction(replaces=earlier.top),
                }
                published = self._unless_published(record)
                if published is not None:
                    yield published
            if seen is not None and not seen[2] and earlier.latest != content_of(seen[1]):
                out = self._stamped(seen[1], key)
                out["correction"] = self._correction(replaces=earlier.top)
                published = self._unless_published(out)
                if published is not None:
                    yield published

    # --- helpers ----------------------------------------------------------------------------

    def _stamped(self, event: Mapping[str, Any], key: PlayerKey) -> dict[str, Any]:
        out = dict(event)
        out["version"] = self.floor(key) + int(event["version"])
        out["generation"] = self.generation
        return out

    def _correction(self, *, replaces: int) -> dict[str, Any]:
        return {
            "generation": self.generation,
            "reason": self.reason,
            "by": self.by,
            "replaces": replaces,
        }

    def _unless_published(self, record: dict[str, Any]) -> bytes | None:
        mark = (record["mode"], record["player_id"], int(record["version"]))
        if mark in self._mine:
            return None
        self._mine.add(mark)
        return orjson.dumps(record)


def latest_changes(
    events: Iterable[Mapping[str, Any]],
) -> dict[tuple[str, str, str], Mapping[str, Any]]:
    """rating-changed as a consumer should read it across re-rates, in offset order per player:
    per (mode, player, match) the change of the highest version, minus those a later
    retraction names (all of the player's when it says ``removed``). What an analytics job
    keeps; the cache keeps each player's highest version the same way."""
    best: dict[tuple[str, str, str], Mapping[str, Any]] = {}
    by_player: dict[tuple[str, str], set[str]] = {}
    for event in events:
        mode, player, version = event["mode"], event["player_id"], event["version"]
        matches = by_player.setdefault((mode, player), set())
        retracted = event.get("retracted")
        if retracted is not None:
            named = set(matches) if event.get("removed") else set(retracted) & matches
            for match in named:
                if best[(mode, player, match)]["version"] < version:
                    del best[(mode, player, match)]
                    matches.discard(match)
            continue
        key = (mode, player, event["match_id"])
        found = best.get(key)
        if found is None or found["version"] < version:
            best[key] = event
            matches.add(event["match_id"])
    return best
