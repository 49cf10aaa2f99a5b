"""The experience term: a newcomer plays below the rating the algorithm gives them.

In real histories players in their first matches win far less often than a default-rated
newcomer is predicted to. TrueSkill 2 (Minka, Cleven, Zaykov 2018) adds to each player's skill an
offset learned per number of games played; here the offset is a two-parameter curve::

    offset(games) = debut_offset * exp(-games / games_scale)

in rating points, added to the stored rating wherever a rating is *used* (predictions, the
expected score of an update, every participant's snapshot) and never stored: an update meets
every other participant moved by their offset minus the player's own, which the pairwise
algorithms (functions of rating differences) rate exactly as if everyone were shifted, while
the rating bounds keep applying to the stored rating. The offset needs nothing but each
player's games count, which every state and every snapshot carries, so a live update on one
partition and the offline replay compute the same thing.

Quick start::

    >>> from stream.ratings.experience import ExperienceConfig
    >>> term = ExperienceConfig(debut_offset=-150.0, games_scale=4.0)
    >>> round(term.offset(0), 1), round(term.offset(4), 1), term.provisional(5)
    (-150.0, -55.2, False)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import ClassVar

from stream.ratings.ranges import Range, check_ranges
from stream.ratings.skill import Skill, SkillLike


@dataclass(frozen=True, slots=True)
class ExperienceConfig:
    """Per-mode parameters; ``debut_offset = 0`` switches the term off (the published formulas).

    ``debut_offset``: rating points added to a player with no games (negative: newcomers are
    weaker than their rating says). ``games_scale``: games over which the offset shrinks by a
    factor e. ``provisional_games``: a player with fewer games is flagged provisional for
    matchmakers.
    """

    debut_offset: float = 0.0
    games_scale: float = 4.0
    provisional_games: int = 5

    RANGES: ClassVar[Mapping[str, Range]] = {
        "debut_offset": Range(
            -2000.0,
            2000.0,
            "rating points at debut (0: off); measured on real play: about -300 on the "
            "Glicko scale; beyond 2000 points every debut would be a certain loss or win",
        ),
        "games_scale": Range(
            0.0, 1000.0, "games over which the offset fades by a factor e", low_open=True
        ),
        "provisional_games": Range(
            0, 100_000, "games before a player is no longer flagged provisional", integer=True
        ),
    }

    def __post_init__(self) -> None:
        check_ranges(self, self.RANGES)

    @property
    def active(self) -> bool:
        return self.debut_offset != 0.0

    def offset(self, games: int) -> float:
        """Rating points added to the stored rating of a player with ``games`` rated games."""
        if self.debut_offset == 0.0:
            return 0.0
        return self.debut_offset * math.exp(-games / self.games_scale)

    def provisional(self, games: int) -> bool:
        """Whether a matchmaker should treat the player's rating as not yet settled."""
        return games < self.provisional_games

    @property
    def settled_games(self) -> int:
        """The fewest games of an established player: no longer provisional, and the offset
        within half a rating point of 0 (a player whose games are not known, taken as one)."""
        if self.debut_offset == 0.0:
            return self.provisional_games
        fading = math.ceil(self.games_scale * math.log(2.0 * abs(self.debut_offset)))
        return max(self.provisional_games, fading, 0)


def shifted(skill: SkillLike, offset: float) -> SkillLike:
    """``skill`` with ``offset`` added to its rating (``skill`` itself when the offset is 0)."""
    if offset == 0.0:
        return skill
    return Skill(skill.rating + offset, skill.deviation, skill.volatility)


def effective_skill(experience: ExperienceConfig, skill: SkillLike, games: int) -> Skill:
    """The skill a matchmaker should compare: rating plus the offset for ``games``."""
    return Skill(skill.rating + experience.offset(games), skill.deviation, skill.volatility)
