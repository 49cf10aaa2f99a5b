"""One player's rating in one mode as the cache holds it, and how a rating-changed event
becomes one."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from stream.cache.keys import MAX_ID_LENGTH
from stream.events import describe_value, parse_time
from stream.ratings.experience import ExperienceConfig, effective_skill
from stream.ratings.explain import Explanation
from stream.ratings.skill import PlayerState, Skill

__all__ = [
    "MAX_COUNT",
    "MAX_MAGNITUDE",
    "CachedRating",
    "Correction",
    "correction_of",
    "entry_problem",
]

# Beyond these no engine goes: ratings of every algorithm stay within a few thousand points
# (Elo, the unbounded one, moves at most max_gain per game), and a player would need a match
# every second for 30 years to reach a billion games or rating changes. A larger value is a
# corrupt or forged record; cached, it would sort first for good, and a version beyond the
# bound would make the key impossible to update (the writer keeps the highest version).
MAX_MAGNITUDE = 1e7  # |rating|, deviation, |volatility|, |rank_points|
MAX_COUNT = 1_000_000_000  # games, version

# The fields the cache needs; the event's others (outcome, previous, expected_score, algorithm)
# are not cached, so an event without them is still usable.
_REQUIRED = (
    "player_id",
    "mode",
    "match_id",
    "rating",
    "deviation",
    "volatility",
    "rank_points",
    "games",
    "version",
    "at",
)


@dataclass(frozen=True, slots=True)
class Correction:
    """A re-rate's word on a change (stream/corrections/handover.py): its generation, the
    operator's reason, who ran it (None in events from before it was recorded) and the version
    of the change it replaces."""

    generation: int
    reason: str
    by: str | None
    replaces: int

    def to_json(self) -> dict[str, Any]:
        return {
            "generation": self.generation,
            "reason": self.reason,
            "by": self.by,
            "replaces": self.replaces,
        }


def correction_of(value: object, name: str = "correction") -> Correction:
    """The correction an event's (or a history element's) ``name`` field holds; ValueError
    saying what is wrong."""
    if not isinstance(value, Mapping):
        raise ValueError(f"{name}: expected an object, got {describe_value(value)}")
    generation, reason = value.get("generation"), value.get("reason")
    by, replaces = value.get("by"), value.get("replaces")
    if (
        isinstance(generation, bool)
        or not isinstance(generation, int)
        or not 2 <= generation <= MAX_COUNT
        or isinstance(replaces, bool)
        or not isinstance(replaces, int)
        or not 1 <= replaces <= MAX_COUNT
        or not isinstance(reason, str)
        or not (by is None or isinstance(by, str))
        or len(reason) + len(by or "") > 700
    ):
        raise ValueError(
            f"{name}: expected generation (>= 2), reason, by and replaces (>= 1), got"
            f" {describe_value(value)}"
        )
    return Correction(generation, reason, by, replaces)


@dataclass(frozen=True, slots=True)
class CachedRating:
    """A player's rating in one mode after their latest cached match.

    ``version`` counts the player's rating changes in the mode (the writer keeps the highest);
    ``updated_at_ms`` is the event time of that match in epoch milliseconds. ``unknown``
    marks a player the cache does not know: the mode's defaults, version 0, never written.
    (Not the event's ``provisional``, fewer games than the mode's ``provisional_games``: that
    is :meth:`unsettled`.)
    The deviation is as of ``updated_at_ms``; growth from inactivity since is not applied.

    ``season`` and ``outcome`` are the event's (None when it has none, and for entries read
    back from the cache): they steer the write (which season's boards, what the history
    shows) and are not part of the cached state, so they are left out of comparisons.
    ``why`` and ``before`` (rating, deviation) are the event's explanation of the change,
    kept in the player's history for `skillstream ratings explain`; the same.
    """

    player_id: str
    mode: str
    rating: float
    deviation: float
    volatility: float | None
    rank_points: int
    games: int
    version: int
    updated_at_ms: int
    match_id: str | None
    unknown: bool = False
    season: int | None = field(default=None, compare=False)
    outcome: str | None = field(default=None, compare=False)
    why: Explanation | None = field(default=None, compare=False)
    before: tuple[float, float] | None = field(default=None, compare=False)
    # An operator's adjustment (outcome ``adjusted``): who made it and why.
    adjusted: tuple[str, str] | None = field(default=None, compare=False)
    # A result refunded after a ban (outcome ``refunded``): who banned, why, whom, the ban's id.
    refunded: tuple[str, str, str, str] | None = field(default=None, compare=False)
    # A re-rate's change (the event's ``generation``, 2 and up; None: the first), and when it
    # replaces one published before, the re-rate's word on it: the cache's history then shows
    # it in place of the change it replaces (stream/cache/writer.py).
    generation: int | None = field(default=None, compare=False)
    correction: Correction | None = field(default=None, compare=False)

    @property
    def skill(self) -> Skill:
        return Skill(self.rating, self.deviation, self.volatility)

    def conservative(self, k: float) -> float:
        """The conservative leaderboard score: a rating the player very probably has at least."""
        return self.rating - k * self.deviation

    def effective_skill(self, experience: ExperienceConfig) -> Skill:
        """The skill a matchmaker should compare: rating plus the mode's experience offset for
        the cached games (``RatingCache.modes.get(mode).experience``)."""
        return effective_skill(experience, self.skill, self.games)

    def unsettled(self, experience: ExperienceConfig) -> bool:
        """Whether the player has fewer rated games than the mode's ``provisional_games`` (a
        player the cache does not know has none)."""
        return experience.provisional(self.games)

    @classmethod
    def unknown_default(cls, mode: str, player_id: str, state: PlayerState) -> CachedRating:
        """A player the cache has never seen, with the mode's initial ``state``."""
        return cls.from_state(
            mode, player_id, state, games=0, version=0, updated_at_ms=0, match_id=None, unknown=True
        )

    @classmethod
    def from_state(
        cls,
        mode: str,
        player_id: str,
        state: PlayerState,
        *,
        games: int,
        version: int,
        updated_at_ms: int,
        match_id: str | None,
        unknown: bool = False,
    ) -> CachedRating:
        """An entry with ``state``'s rating, deviation, volatility and rank points, and the
        games, version, time and match given (not read from ``state``: a player the cache does
        not know counts no games, whatever the initial state says)."""
        return cls(
            player_id=player_id,
            mode=mode,
            rating=state.rating,
            deviation=state.deviation,
            volatility=state.volatility,
            rank_points=state.rank_points,
            games=games,
            version=version,
            updated_at_ms=updated_at_ms,
            match_id=match_id,
            unknown=unknown,
        )

    @classmethod
    def from_rating_changed(cls, event: Mapping[str, Any]) -> CachedRating:
        """The cache entry for a decoded rating-changed event.

        ValueError names every missing field at once, or the first field with a wrong type or
        value. Unknown extra fields are ignored, as the schema asks of consumers.
        """
        if not isinstance(event, Mapping):
            raise ValueError(f"rating-changed event must be an object, got {describe_value(event)}")
        missing = [name for name in _REQUIRED if name not in event]
        if missing:
            raise ValueError(f"rating-changed event is missing field(s): {', '.join(missing)}")
        volatility = event["volatility"]
        try:
            at_ms = _epoch_ms(event["at"])
        except ValueError as exc:
            raise ValueError(f"rating-changed field 'at': {exc}") from None
        return cls(
            player_id=_text(event, "player_id"),
            mode=_text(event, "mode"),
            rating=_number(event, "rating", -MAX_MAGNITUDE),
            deviation=_number(event, "deviation", 0.0),
            volatility=None if volatility is None else _number(event, "volatility", 0.0),
            rank_points=_integer(event, "rank_points", -round(MAX_MAGNITUDE), round(MAX_MAGNITUDE)),
            games=_integer(event, "games", 0, MAX_COUNT),
            version=_integer(event, "version", 1, MAX_COUNT),
            updated_at_ms=at_ms,
            match_id=_text(event, "match_id"),
            season=_optional_integer(event, "season"),
            outcome=_text(event, "outcome") if event.get("outcome") is not None else None,
            **_explained(event),
            **_corrected(event),
            **_refunded(event),
        )


def _explained(event: Mapping[str, Any]) -> dict[str, Any]:
    # Events written before the explanation have none: they are cached without it. An
    # adjustment has no terms: who made it and why, and the rating before, explain it.
    why = event.get("why")
    adjustment = event.get("adjustment")
    if why is None and adjustment is None:
        return {}
    explanation = None
    if why is not None:
        try:
            explanation = Explanation.from_json(why)
        except ValueError as exc:
            raise ValueError(f"rating-changed field {exc}") from None
    adjusted = None
    if adjustment is not None:
        by = adjustment.get("by") if isinstance(adjustment, Mapping) else None
        reason = adjustment.get("reason") if isinstance(adjustment, Mapping) else None
        if not (isinstance(by, str) and isinstance(reason, str) and len(by) + len(reason) < 700):
            raise ValueError(
                "rating-changed field 'adjustment': expected an object with 'by' and 'reason' "
                f"(strings), got {describe_value(adjustment)}"
            )
        adjusted = (by, reason)
    previous = event.get("previous")
    before = None
    if isinstance(previous, Mapping) and "rating" in previous and "deviation" in previous:
        before = (
            _number(previous, "rating", -MAX_MAGNITUDE),
            _number(previous, "deviation", 0.0),
        )
    return {"why": explanation, "before": before, "adjusted": adjusted}


def _refunded(event: Mapping[str, Any]) -> dict[str, Any]:
    # A refund has no terms either: the ban (who, why, whom) and the unchanged rating explain it.
    refund = event.get("refund")
    if refund is None:
        return {}
    names = ("by", "reason", "banned", "ban")
    values = [refund.get(n) if isinstance(refund, Mapping) else None for n in names]
    if not all(isinstance(v, str) for v in values) or sum(len(str(v)) for v in values) > 1000:
        raise ValueError(
            "rating-changed field 'refund': expected an object with 'by', 'reason', 'banned' "
            f"and 'ban' (strings), got {describe_value(refund)}"
        )
    by, reason, banned, ban = (str(v) for v in values)
    return {"refunded": (by, reason, banned, ban)}


def _corrected(event: Mapping[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    if event.get("generation") is not None:
        found["generation"] = _integer(event, "generation", 2, MAX_COUNT)
    if event.get("correction") is not None:
        try:
            found["correction"] = correction_of(event["correction"])
        except ValueError as exc:
            raise ValueError(f"rating-changed field {exc}") from None
    return found


def _optional_integer(event: Mapping[str, Any], name: str) -> int | None:
    # Absent or null: the mode has no seasons (or the event predates them).
    if event.get(name) is None:
        return None
    return _integer(event, name, 0, MAX_COUNT)


def _epoch_ms(value: object) -> int:
    # Integer epoch milliseconds are taken as they are: seconds-and-back could round.
    seconds = parse_time(value)
    if isinstance(value, int):
        return value
    return round(seconds * 1000.0)


def _text(event: Mapping[str, Any], name: str) -> str:
    value = event[name]
    if not isinstance(value, str) or not value or len(value) > MAX_ID_LENGTH:
        raise ValueError(
            f"rating-changed field {name!r}: expected a string of 1 to {MAX_ID_LENGTH} "
            f"characters, got {describe_value(value)}"
        )
    return value


def entry_problem(entry: CachedRating) -> str | None:
    """Why ``entry`` holds a value no engine could produce, or None: the same bounds as
    :meth:`CachedRating.from_rating_changed`, for entries built another way (the rebuild)."""
    for name, value, low in (
        ("rating", entry.rating, -MAX_MAGNITUDE),
        ("deviation", entry.deviation, 0.0),
        ("volatility", entry.volatility, 0.0),
    ):
        if value is not None and not (math.isfinite(value) and low <= value <= MAX_MAGNITUDE):
            return f"{name} {value!r} is outside {low:g}..{MAX_MAGNITUDE:g}"
    if not abs(entry.rank_points) <= MAX_MAGNITUDE:
        return f"rank_points {entry.rank_points} is outside +-{MAX_MAGNITUDE:g}"
    for name, count, low in (("games", entry.games, 0), ("version", entry.version, 1)):
        if not low <= count <= MAX_COUNT:
            return f"{name} {count} is outside {low}..{MAX_COUNT}"
    return None


def _number(event: Mapping[str, Any], name: str, minimum: float) -> float:
    value = event[name]
    # bool is an int subclass, but true is no rating.
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(
            f"rating-changed field {name!r}: expected a number, got {describe_value(value)}"
        )
    number = float(value)
    if not (math.isfinite(number) and minimum <= number <= MAX_MAGNITUDE):
        raise ValueError(
            f"rating-changed field {name!r}: {value!r} is outside {minimum:g}..{MAX_MAGNITUDE:g}"
        )
    return number


def _integer(event: Mapping[str, Any], name: str, minimum: int, maximum: int) -> int:
    value = event[name]
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(
            f"rating-changed field {name!r}: expected an integer, got {describe_value(value)}"
        )
    if not minimum <= value <= maximum:
        raise ValueError(f"rating-changed field {name!r}: {value} is outside {minimum}..{maximum}")
    return value
