"""The ZoneStats player rating of MechWarrior 4: a multi-player, time-weighted logistic Elo.

Source: "Player Rating: Quick View of the Algorithm" and "Detail Equations" (ZoneStats). Every
pair of players on opposing teams (in free-for-all, every player is a team of one) is compared:

1. predicted_outcome = 1 / (1 + exp((opponent's rating - my rating) / T))
2. indiv_result = 1, 0.5 or 0 (my score per hour above, equal to or below the opponent's)
   minus predicted_outcome; score per hour (SPH) = score / hours in game
3. indiv_result *= GAME_MULT * min(MAX_GAME_LENGTH, my minutes, opponent's minutes)
4. rating_offset = sum of a player's indiv_results
5. scale = time_in_game * GAME_MULT / highest |rating_offset|, capped at 1.0, where
   time_in_game is that of the player whose offset is furthest from 0
6. final offset = rating_offset * scale, for everyone (the system stays zero-sum)

Decisions the document leaves open:

- A pair's adjustment is computed once and the opponent gets its negative. That is the
  document's Quick View (playerB_rating_adjustment = -rating_adjustment) and equals evaluating
  equations 1-3 from the other side, because the opponent's predicted outcome is 1 minus mine;
  it keeps every pair exactly zero-sum in floating point.
- ``stats`` missing (None), or lacking either player of a pair: that pair is compared by rank
  instead of SPH (lower rank is better, equal ranks tie) and both players count as in the game
  for ``max_game_minutes``.
- A player with 0 (or negative) seconds in the game is compared as a tie with time 0, so the
  pair contributes nothing and no score per hour is divided by zero.
- ``time_in_game`` in equation 5 is the player's recorded time, not capped by MAX_GAME_LENGTH
  (the document caps only the pair times of equation 3); a player who took part in a pair
  compared by rank counts at least ``max_game_minutes``. When several players share the highest
  |offset|, the shortest time among them (the strictest scale) is used, so the result does not
  depend on the order players are listed in.
- If every offset is 0 nothing is scaled. Players without a rating start at ``initial_rating``.

A match of n players makes O(n^2) comparisons.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import ClassVar

from stream.ratings.logistic import NoUncertainty
from stream.ratings.ranges import (
    INITIAL_RATING_WHY,
    MAX_ABS_RATING,
    TEMPERATURE_WHY,
    Range,
    check_ranges,
)
from stream.ratings.skill import PlayerStats, Rated

_SECONDS_PER_MINUTE = 60.0
_SECONDS_PER_HOUR = 3600.0


def predicted_outcome(config: ZoneStatsConfig, my_rating: float, opponent_rating: float) -> float:
    """Equation 1: 1 / (1 + exp((opponent's rating - my rating) / T))."""
    x = (opponent_rating - my_rating) / config.temperature
    # Only ever exponentiate a non-positive number: math.exp raises OverflowError past ~709.
    if x > 0.0:
        e = math.exp(-x)
        return e / (1.0 + e)
    return 1.0 / (1.0 + math.exp(x))


def _expected_score(config: ZoneStatsConfig, a: Rated, b: Rated) -> float:
    """Probability that ``a`` beats ``b``: the predicted outcome of equation 1."""
    return predicted_outcome(config, a.rating, b.rating)


def _compare(mine: float, theirs: float) -> float:
    if mine > theirs:
        return 1.0
    if mine < theirs:
        return 0.0
    return 0.5


def _pair_result_and_minutes(
    config: ZoneStatsConfig,
    my_stats: PlayerStats | None,
    opp_stats: PlayerStats | None,
    my_rank: int,
    opp_rank: int,
) -> tuple[float, float, bool]:
    """My result (1, 0.5, 0) against the opponent, the pair's minutes, and whether by rank."""
    if my_stats is None or opp_stats is None:
        # Ranks: lower is better, so the comparison is reversed.
        return _compare(opp_rank, my_rank), config.max_game_minutes, True
    if my_stats.seconds <= 0 or opp_stats.seconds <= 0:
        return 0.5, 0.0, False
    # Score / (seconds / 3600) would divide by zero for a subnormal number of seconds.
    my_sph = my_stats.score * _SECONDS_PER_HOUR / my_stats.seconds
    opp_sph = opp_stats.score * _SECONDS_PER_HOUR / opp_stats.seconds
    minutes = min(
        config.max_game_minutes,
        my_stats.seconds / _SECONDS_PER_MINUTE,
        opp_stats.seconds / _SECONDS_PER_MINUTE,
    )
    return _compare(my_sph, opp_sph), minutes, False


def offsets(
    config: ZoneStatsConfig,
    teams: Sequence[Sequence[str]],
    ratings: Mapping[str, float],
    ranks: Sequence[int],
    stats: Mapping[str, PlayerStats] | None,
) -> dict[str, float]:
    """Every player's final rating offset for the match (equations 1-6).

    ``teams`` lists player ids per team (one id per team in free-for-all), ``ranks`` the
    finishing rank of each team (lower is better), ``ratings`` the ratings before the match and
    ``stats`` each player's score and seconds in the game.
    """
    if len(ranks) != len(teams):
        raise ValueError(f"{len(teams)} teams but {len(ranks)} ranks")
    players: list[tuple[str, int]] = [
        (player, index) for index, team in enumerate(teams) for player in team
    ]
    if len({player for player, _ in players}) != len(players):
        raise ValueError("a player appears more than once in the match")

    rating = {player: ratings.get(player, config.initial_rating) for player, _ in players}
    player_stats: dict[str, PlayerStats | None] = {
        player: (stats.get(player) if stats is not None else None) for player, _ in players
    }
    offset = dict.fromkeys(rating, 0.0)
    # Time in game for equation 5: recorded minutes, raised by pairs compared by rank.
    minutes_in_game = {
        player: max(s.seconds, 0.0) / _SECONDS_PER_MINUTE if s is not None else 0.0
        for player, s in player_stats.items()
    }

    for i, (me, my_team) in enumerate(players):
        for opp, opp_team in players[i + 1 :]:
            if opp_team == my_team:
                continue
            result, minutes, by_rank = _pair_result_and_minutes(
                config, player_stats[me], player_stats[opp], ranks[my_team], ranks[opp_team]
            )
            adjustment = (
                (result - predicted_outcome(config, rating[me], rating[opp]))
                * config.game_mult
                * minutes
            )
            offset[me] += adjustment
            offset[opp] -= adjustment
            if by_rank:
                minutes_in_game[me] = max(minutes_in_game[me], minutes)
                minutes_in_game[opp] = max(minutes_in_game[opp], minutes)

    highest = max((abs(value) for value in offset.values()), default=0.0)
    if highest == 0.0:
        return offset
    time_in_game = min(minutes_in_game[p] for p, value in offset.items() if abs(value) == highest)
    scale = min(time_in_game * config.game_mult / highest, 1.0)
    if scale == 1.0:
        return offset
    return {player: value * scale for player, value in offset.items()}


# The live pipeline calls this positionally, in the order of offsets() plus config and player.
def rate_player(
    config: ZoneStatsConfig,
    player_id: str,
    teams: Sequence[Sequence[str]],
    ratings: Mapping[str, float],
    ranks: Sequence[int],
    stats: Mapping[str, PlayerStats] | None,
) -> float:
    """``player_id``'s rating after the match: previous rating (or the start one) plus offset."""
    match_offsets = offsets(config, teams, ratings, ranks, stats)
    if player_id not in match_offsets:
        raise ValueError(f"player {player_id!r} is not in the match")
    return ratings.get(player_id, config.initial_rating) + match_offsets[player_id]


@dataclass(frozen=True, slots=True)
class ZoneStatsConfig(NoUncertainty):
    """System parameters; the defaults are the document's T, GAME_MULT, MAX_GAME_LENGTH, 500."""

    name: ClassVar[str] = "zonestats"

    temperature: float = 120.0
    game_mult: float = 2.0
    max_game_minutes: float = 20.0
    initial_rating: float = 500.0

    RANGES: ClassVar[Mapping[str, Range]] = {
        "temperature": Range(1.0, 100_000.0, TEMPERATURE_WHY),
        "game_mult": Range(
            0.0, 100.0, "rating points per minute of play (ZoneStats: 2)", low_open=True
        ),
        "max_game_minutes": Range(
            0.0, 1440.0, "ZoneStats caps a pair at 20 minutes; a day is the most", low_open=True
        ),
        "initial_rating": Range(-MAX_ABS_RATING, MAX_ABS_RATING, INITIAL_RATING_WHY),
    }

    def __post_init__(self) -> None:
        check_ranges(self, self.RANGES)

    # The module's functions double as methods (NoUncertainty adds the rest), so the config is
    # usable wherever a rating algorithm is expected, without a second call per match.
    offsets = offsets
    rate_player = rate_player
    expected_score = _expected_score
