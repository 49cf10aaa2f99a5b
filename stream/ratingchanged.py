"""The rating-changed event, the pipeline's output (commands and table records between the
steps: stream/protocol/), as events.py is its input: built here for the worker and for replay's
explanations alike, so the two publish the same bytes.

orjson writes the shortest representation that reads back to the same float, so the live
pipeline and ``skillstream replay`` can agree exactly.
"""

from __future__ import annotations

from typing import Any, cast

from stream.corrections.effects import PlayerChange, Refund
from stream.events import format_time
from stream.ratings.algorithm import DriftRate, PriorDeviation
from stream.ratings.explain import Explanation
from stream.ratings.modeconfig import ModeConfig
from stream.ratings.skill import PlayerState


def rating_changed(
    *,
    player_id: str,
    mode: ModeConfig,
    match_id: str,
    outcome: str,
    before: PlayerState,
    after: PlayerState,
    version: int,
    expected_score: float,
    at: float,
    why: Explanation,
) -> dict[str, Any]:
    """The rating-changed event (rating-changed.schema.json). No wall-clock time inside:
    processing the same input again produces the same bytes. ``season`` (the season of the
    match's time) is there only when the mode has seasons, so a mode without them keeps the
    exact bytes it had before seasons existed. ``why`` is the change's terms
    (stream.ratings.explain), what `skillstream ratings explain` words for a support agent.
    ``mode`` is the mode with the population in force; a mode that learns its population says
    which (``population``: the prior deviation, size edge, persistence, decisiveness, drift
    period, debut offset and party edge)."""
    event = _change(player_id, mode, match_id, outcome, before, after, version, expected_score)
    _dated(event, mode, at, "why", why.to_json())
    if mode.population.learns:
        event["population"] = population_of(mode)
    return event


def population_of(rules: ModeConfig) -> dict[str, float | None]:
    """The population a learning mode's match was rated with (``rules``: the mode with it in
    force): what the cache keeps per mode for the matchmakers' predictions."""
    algorithm = rules.algorithm
    population = rules.population
    deviates, drifts = _kinds(algorithm)
    return {
        "deviation": cast(PriorDeviation, algorithm).prior_deviation if deviates else None,
        "size_edge": population.size_edge,
        "persistence": population.persistence,
        "decisiveness": population.decisiveness,
        "drift_period": cast(DriftRate, algorithm).drift_period if drifts else None,
        "debut_offset": rules.experience.debut_offset,
        "party_edge": population.party_edge,
    }


# Per algorithm type: whether it has a prior deviation and a drift rate (_kinds).
_KINDS: dict[type, tuple[bool, bool]] = {}


def _kinds(algorithm: object) -> tuple[bool, bool]:
    """Whether ``algorithm`` has a prior deviation and a drift rate, checked once per type: a
    check against a runtime protocol walks the protocol's members on every call, 3 % of a
    worker's CPU when it was made for every rating change. Every configuration of one type has
    the same members: the algorithms' configurations are slotted dataclasses, whose members are
    their class's."""
    kind = type(algorithm)
    found = _KINDS.get(kind)
    if found is None:
        found = _KINDS[kind] = (
            isinstance(algorithm, PriorDeviation),
            isinstance(algorithm, DriftRate),
        )
    return found


def adjustment_changed(
    *,
    player_id: str,
    mode: ModeConfig,
    change: PlayerChange,
    before: PlayerState,
    after: PlayerState,
    version: int,
) -> dict[str, Any]:
    """The rating-changed event of an operator's change of a player (an adjustment,
    stream.corrections.effects.PlayerChange): ``outcome`` ``adjusted``, ``match_id`` the
    correction's id, ``at`` its effective time, ``expected_score`` null (no match was
    predicted) and ``adjustment``: who, why and what. Replay builds the same bytes
    (stream.offline.explaining)."""
    audit = change.audit
    event = _change(player_id, mode, audit.id, "adjusted", before, after, version, None)
    adjustment = {"by": audit.by, "reason": audit.reason, **change.described()}
    _dated(event, mode, change.effective, "adjustment", adjustment)
    return event


def refund_changed(
    *,
    player_id: str,
    mode: ModeConfig,
    match_id: str,
    state: PlayerState,
    version: int,
    at: float,
    refund: Refund,
) -> dict[str, Any]:
    """The rating-changed event of a result refunded (a ban's, stream.corrections.effects.
    Refund): ``outcome`` ``refunded``, the rating as the player had it before the match
    (``previous`` the same: the match no longer counts for them), ``expected_score`` null and
    ``refund``: who banned which player, why, and the ban's id. Published only to a player who
    lost to the banned player and has a rating in the mode. Replay builds the same bytes
    (stream.offline.explaining)."""
    audit = refund.audit
    event = _change(player_id, mode, match_id, "refunded", state, state, version, None)
    what = {"by": audit.by, "reason": audit.reason, "banned": refund.player, "ban": audit.id}
    _dated(event, mode, at, "refund", what)
    return event


def _change(
    player_id: str,
    mode: ModeConfig,
    match_id: str,
    outcome: str,
    before: PlayerState,
    after: PlayerState,
    version: int,
    expected_score: float | None,
) -> dict[str, Any]:
    """The fields every rating change has, in the order the events have always had them."""
    return {
        "player_id": player_id,
        "mode": mode.name,
        "match_id": match_id,
        "outcome": outcome,
        "rating": after.rating,
        "deviation": after.deviation,
        "volatility": after.volatility,
        "rank_points": after.rank_points,
        "games": after.games,
        "version": version,
        "previous": {
            "rating": before.rating,
            "deviation": before.deviation,
            "volatility": before.volatility,
            "rank_points": before.rank_points,
        },
        "expected_score": expected_score,
        # What a matchmaker compares: the experience offset is never stored in the rating.
        "effective_rating": after.rating + mode.experience.offset(after.games),
        "provisional": mode.experience.provisional(after.games),
        "algorithm": mode.algorithm.name,
    }


def _dated(event: dict[str, Any], mode: ModeConfig, at: float, name: str, what: object) -> None:
    """Add to ``event``, in the order every change has them, its time ``at``, what explains
    it (``name``: ``why``, ``adjustment`` or ``refund``) and the season of ``at`` when the
    mode has them."""
    event["at"] = format_time(at)
    event[name] = what
    seasons = mode.seasons
    if seasons is not None:
        event["season"] = seasons.season_of(at)
