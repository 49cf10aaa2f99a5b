"""Why a rating moved: the terms of one rating change, from what rating it already computed.

A change is explained in the order the engine applies it (stream.ratings.engine):

1. ``reset``: a season's soft reset, when the player's last match was in an earlier season
   (rating and deviation after it);
2. ``inactive``: the deviation grown by inactivity since the player's last match (the rating
   does not move; the bigger deviation makes the step larger);
3. ``offset``: the player's experience offset (negative for newcomers: every opponent is met
   that much stronger, so a newcomer is expected to score less and gains more from a win);
4. the match itself: the ``score`` against what the update ``expected``, and ``step``, the
   rating points one unit of surprise was worth at the player's and the opponents'
   uncertainties;
5. ``bound``: ``"low"`` or ``"high"`` when the rating ended on the algorithm's bound (a
   clamp; only Glicko-2 clamps);
6. ``played``: the share of the match the player played when it was part of it (part-time
   play: stream.ratings.parttime), the share of the result's information they took;
7. ``performance``: rating points the player moved within their side for their share of its
   score (stream.ratings.performance), after the step;
8. ``party``: in a match that named a party, the party edge every partied player played at
   (stream.ratings.parties) and whether the player was one of them (``member``).

For the pairwise algorithms (Glicko-2, Glicko-1, Elo) ``expected`` and ``score`` are the means
over the results the update weighed, each weighted by its slope (the algorithm's
``update_terms``) times the share of it the player took, so ``rating after = rating at the
match + step * (score - expected) + performance`` exactly (up to the bound and float
rounding) and ``step`` is never negative: in a duel it is
Glickman's ``phi'^2 g(phi_j)`` in public points, Elo's largest change. ``expected`` is not
the event's ``expected_score``: that one is the prediction, both uncertainties combined; this
one is what the update compared the result with, the opponent's uncertainty only. ZoneStats
rates the whole match at once: its changes carry no ``step`` and ``expected`` is the event's.
``step`` is None when the result was exactly as expected, which moves no rating.

Pure: no clock, no I/O; the live worker and ``skillstream replay --explain`` call the same
function on the same values, so both explain a change alike.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from stream.ratings.engine import PlayerUpdate, season_entered
from stream.ratings.modeconfig import ModeConfig
from stream.ratings.skill import PlayerState, Result

__all__ = ["Explanation", "describe", "explain"]

# A surprise smaller than this moves a rating by well under a thousandth of a point, a change
# whose last digits are float rounding: the step derived from it would be noise (a draw
# between ratings 1e-6 apart gave an Elo step of 32.00007), so none is.
_NO_SURPRISE = 1e-6
# Beyond this no engine goes (the cache's own bound on every number it reads).
_MAX_MAGNITUDE = 1e7


@dataclass(frozen=True, slots=True)
class Explanation:
    """The terms of one rating change (module docstring); None where a term did not apply.

    ``correction`` is the reason of an operator's correction that replaced the change, None for
    a match's own change.
    """

    score: float
    expected: float
    step: float | None
    reset: tuple[float, float] | None = None
    inactive: float | None = None
    offset: float | None = None
    bound: str | None = None
    correction: str | None = None
    played: float | None = None
    performance: float | None = None
    party: tuple[float, bool] | None = None

    def to_json(self) -> dict[str, Any]:
        """The compact form carried by rating-changed as ``why`` (absent terms left out)."""
        out: dict[str, Any] = {"score": self.score, "expected": self.expected, "step": self.step}
        if self.reset is not None:
            out["reset"] = list(self.reset)
        if self.inactive is not None:
            out["inactive"] = self.inactive
        if self.offset is not None:
            out["offset"] = self.offset
        if self.bound is not None:
            out["bound"] = self.bound
        if self.correction is not None:
            out["correction"] = self.correction
        if self.played is not None:
            out["played"] = self.played
        if self.performance is not None:
            out["performance"] = self.performance
        if self.party is not None:
            out["party"] = {"edge": self.party[0], "member": self.party[1]}
        return out

    @classmethod
    def from_json(cls, value: object) -> Explanation:
        """Read the compact form back; ValueError names what is wrong (the cache writer trusts
        nothing on the topic, so every number is checked to be finite and in range). Fields
        this version does not know are ignored, as the schema asks of every consumer: a newer
        worker may add a term during a rolling upgrade."""
        if not isinstance(value, Mapping):
            raise ValueError(f"'why' must be an object, got {type(value).__name__}")
        reset = value.get("reset")
        if reset is not None:
            if not isinstance(reset, list) or len(reset) != 2:
                raise ValueError("'why.reset' must be [rating, deviation]")
            reset = (_number(reset[0], "reset"), _number(reset[1], "reset"))
        bound = value.get("bound")
        if bound not in (None, "low", "high"):
            raise ValueError(f"'why.bound' must be 'low' or 'high', got {bound!r}")
        correction = value.get("correction")
        if correction is not None and (not isinstance(correction, str) or len(correction) > 500):
            raise ValueError("'why.correction' must be a reason of at most 500 characters")
        score, expected = _score(value, "score"), _score(value, "expected")
        played = _optional(value.get("played"), "played")
        if played is not None and not 0.0 < played <= 1.0:
            raise ValueError(f"'why.played' must be within 0..1, got {played!r}")
        return cls(
            score=score,
            expected=expected,
            step=_optional(value.get("step"), "step"),
            reset=reset,
            inactive=_optional(value.get("inactive"), "inactive"),
            offset=_optional(value.get("offset"), "offset"),
            bound=bound,
            correction=correction,
            played=played,
            performance=_optional(value.get("performance"), "performance"),
            party=_party(value.get("party")),
        )


def explain(
    mode: ModeConfig, before: PlayerState | None, update: PlayerUpdate, at: float
) -> Explanation:
    """The terms of the change from ``before`` (the stored state; None for a new player) to
    ``update`` (what :func:`stream.ratings.engine.rate_player` returned for the match at
    ``at``). ``mode`` must be the rules the update was rated with (the population in force
    applied), so the offset and the bounds are the ones that acted."""
    stored = mode.initial if before is None else before
    reset: tuple[float, float] | None = None
    entered = stored
    if mode.seasons is not None:
        entered = season_entered(mode, stored, at)
        if entered is not stored:
            reset = (entered.rating, entered.deviation)
    own = update.own
    # The deviation at the match, after inactivity (and the reset, which applied it first).
    inactive = own.deviation if own.deviation > entered.deviation else None
    experience = mode.experience
    offset = experience.offset(entered.games) if experience.active else None
    # The move within the side came after the step: the step explains the rest.
    performance = update.performance or None
    after = update.state.rating - update.performance
    score, expected = update.score, update.expected_score
    pairwise = mode.pairwise
    step: float | None = None
    played: float | None = None
    if pairwise is not None and update.opponents:
        # The results as the update weighed them: each by its slope (and the share of it the
        # player took), so the change is the step times this surprise whatever the results'
        # scores, weights and shares.
        weight = weighted_score = weighted_expected = 0.0
        for result in update.opponents:
            assert isinstance(result, Result)  # a pairwise update's opponents are its results
            e, slope = pairwise.update_terms(own, result)
            slope *= result.share
            weight += slope
            weighted_score += slope * result.score
            weighted_expected += slope * e
        score, expected = weighted_score / weight, weighted_expected / weight
        surprise = score - expected
        if abs(surprise) > _NO_SURPRISE:
            step = (after - own.rating) / surprise
        played = update.played if update.played < 1.0 else None
    low, high = mode.rating_bounds
    final = update.state.rating
    bound = "low" if final == low else "high" if final == high else None
    return Explanation(
        score,
        expected,
        step,
        reset,
        inactive,
        offset,
        bound,
        played=played,
        performance=performance,
        party=update.party,
    )


def describe(
    why: Explanation,
    *,
    player_id: str,
    match_id: str | None,
    outcome: str | None,
    before: tuple[float, float] | None,
    after: tuple[float, float],
) -> list[str]:
    """The change worded for a support agent: one sentence a line, ratings rounded to points.

    ``before`` and ``after`` are (rating, deviation), ``before`` None when not known."""
    lines: list[str] = []
    if why.correction is not None:
        lines.append(f"An operator corrected this rating: {why.correction}.")
    what = f"match {match_id}" + (f" (a {outcome})" if outcome in ("win", "loss", "draw") else "")
    if outcome in ("abandoned", "timeout"):
        what += f" ({outcome}: scored as a loss)"
    if before is not None:
        lines.append(
            f"Before {what}, {player_id} was rated {before[0]:.0f} (uncertainty {before[1]:.0f})."
        )
    if why.reset is not None:
        lines.append(
            f"A new season had started since their last match: its soft reset moved them to "
            f"{why.reset[0]:.0f} (uncertainty {why.reset[1]:.0f})."
        )
    if why.inactive is not None:
        lines.append(
            f"Time without playing raised the uncertainty to {why.inactive:.0f}, which makes "
            f"this match count for more."
        )
    if why.offset is not None and abs(why.offset) >= 0.5:
        side = "below" if why.offset < 0 else "above"
        lines.append(
            f"With few games played, they are taken to play {abs(why.offset):.0f} points "
            f"{side} their rating, so results against them are expected accordingly."
        )
    if why.party is not None:
        edge, member = why.party
        who = "they queued in one" if member else "they played alone"
        where = "above" if edge >= 0 else "below"
        lines.append(
            f"Players who queued together in this match were taken to play {abs(edge):.0f} "
            f"points {where} their ratings (the mode's party edge): {who}."
        )
    if why.played is not None:
        lines.append(
            f"They played {why.played:.0%} of the match, so it counted for {why.played:.0%} "
            f"of a whole one, and each side was as strong as the time its players were in it."
        )
    lines.append(
        f"They were expected to score {why.expected:.2f} (1 = win, 0.5 = draw, 0 = loss) "
        f"and scored {why.score:.2f}."
    )
    if why.step is None:
        lines.append("The result was what was expected, so the match moved no rating.")
    else:
        surprise = why.score - why.expected
        lines.append(
            f"At their and their opponents' uncertainty, each unit of surprise was worth "
            f"{why.step:.0f} points: {surprise:+.2f} x {why.step:.0f} = "
            f"{surprise * why.step:+.1f}."
        )
    if why.performance is not None:
        better = "above" if why.performance > 0 else "below"
        lines.append(
            f"Their score per minute was {better} their side's typical one: "
            f"{why.performance:+.1f} points within the side (its players' moves for their "
            f"scores add up to zero)."
        )
    if why.bound is not None:
        lines.append(f"The rating stopped at the {why.bound}est rating the mode allows.")
    lines.append(f"After it: {after[0]:.0f} (uncertainty {after[1]:.0f}).")
    return lines


def _party(value: object) -> tuple[float, bool] | None:
    """``why.party`` read back: {"edge": points, "member": bool}, or None when absent."""
    if value is None:
        return None
    if not isinstance(value, Mapping) or not isinstance(value.get("member"), bool):
        raise ValueError("'why.party' must be {edge: number, member: true or false}")
    return _number(value.get("edge"), "party.edge"), bool(value["member"])


def _score(value: Mapping[str, Any], name: str) -> float:
    if name not in value:
        raise ValueError(f"'why' is missing {name!r}")
    number = _number(value[name], name)
    if not 0.0 <= number <= 1.0:
        raise ValueError(f"'why.{name}' must be within 0..1, got {number!r}")
    return number


def _number(value: object, name: str) -> float:
    # bool is an int subclass, but true is no number.
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"'why.{name}' must be a number, got {type(value).__name__}")
    number = float(value)
    if not (math.isfinite(number) and abs(number) <= _MAX_MAGNITUDE):
        raise ValueError(f"'why.{name}' is out of range: {value!r}")
    return number


def _optional(value: object, name: str) -> float | None:
    return None if value is None else _number(value, name)
