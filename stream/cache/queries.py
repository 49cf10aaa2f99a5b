"""What matchmakers ask the cache, as plans: the commands to send and what their replies mean.

No I/O here. A :class:`Plan` holds the commands for one pipelined round trip and a pure
function from their replies to the answer. The async and the sync client only execute plans,
so both answer identically by construction, and everything here is testable without a server.

Needs Redis >= 7.0 or Valkey (ZRANGE ... BYSCORE / REV, EVAL_RO): every read is one a read-only
user may send (stream/access/redis.py), and one a replica answers.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from stream.cache.codec import decode_entry, encode_float, score_pairs, text
from stream.cache.entry import CachedRating
from stream.cache.history import HistoryEntry, counted, decode_history
from stream.cache.keys import DEFAULT_LAYOUT, Board, KeyLayout, check_id
from stream.cache.population import rules_from
from stream.config.modes import Modes
from stream.ratings import probability
from stream.ratings.algorithm import AlgorithmConfig
from stream.ratings.engine import initial_state
from stream.ratings.modeconfig import ModeConfig
from stream.ratings.parties import partied
from stream.ratings.parttime import MIN_SHARE
from stream.ratings.skill import Skill, SkillLike
from stream.ratings.teams import TeamStrategy

__all__ = [
    "AROUND_SCRIPT",
    "Command",
    "LeaderboardEntry",
    "Plan",
    "RatingQueries",
    "Seasons",
    "UnknownModeError",
    "nearest_first",
]

# A measure of two teams: probability.team_win_probability or probability.match_quality.
TeamMeasure = Callable[
    [
        AlgorithmConfig,
        Sequence[SkillLike],
        Sequence[SkillLike],
        TeamStrategy,
        float,
        float,
        tuple[Sequence[float], Sequence[float]] | None,
    ],
    float,
]
# Each member's share of the match a matchmaker expects them to play (a backfill joining with
# 40% of the match left: 0.4), per team; None: everyone plays all of it.
TeamShares = tuple[Sequence[float], Sequence[float]] | None
T = TypeVar("T")
U = TypeVar("U")

Command = tuple[str | int, ...]

# Rank and neighbours must come from one state of the board, or a player moving between two
# reads would be missing from their own neighbourhood; a script reads both at once. Sent with
# EVAL_RO (the server caches it by SHA): one round trip, no SCRIPT LOAD dance for a read, and
# the read-only form, so a matchmaker's user needs no right to run scripts that write.
# KEYS: the board. ARGV: player id, n. Returns false, or {rank of first entry (0-based),
# flat member/score list, highest first}.
AROUND_SCRIPT = """-- skillstream rating cache: a player's neighbourhood on a board
local rank = redis.call('ZREVRANK', KEYS[1], ARGV[1])
if not rank then
  return false
end
local n = tonumber(ARGV[2])
local first = math.max(rank - n, 0)
return {first, redis.call('ZRANGE', KEYS[1], first, rank + n, 'REV', 'WITHSCORES')}
"""


class UnknownModeError(ValueError):
    """A mode the modes configuration rejects (``unlisted = "reject"`` and not listed)."""


@dataclass(frozen=True, slots=True)
class LeaderboardEntry:
    """A place on a board: ``rank`` 1 is the highest score. Equal scores get consecutive
    ranks, ordered by player id descending (byte order), as Redis orders them."""

    rank: int
    player_id: str
    score: float


@dataclass(frozen=True, slots=True)
class Seasons:
    """A mode's seasons in the cache: ``current`` (None: its events carry no season) and the
    past seasons whose final standings are kept, oldest first."""

    current: int | None
    past: list[int]


@dataclass(frozen=True)
class Plan(Generic[T]):
    """Commands for one pipeline, and the pure function that turns their replies into T."""

    commands: tuple[Command, ...]
    decode: Callable[[Sequence[Any]], T]

    def then(self, convert: Callable[[T], U]) -> Plan[U]:
        """The same commands, answered with ``convert`` applied to this plan's answer."""
        decode = self.decode
        return Plan(self.commands, lambda replies: convert(decode(replies)))


class RatingQueries:
    """Builds the plans behind every RatingCache / SyncRatingCache read: each method's
    docstring says what its plan answers, which is what the read of the same name returns."""

    def __init__(self, modes: Modes, layout: KeyLayout = DEFAULT_LAYOUT) -> None:
        self.modes = modes
        self.layout = layout

    def mode_config(self, mode: str) -> ModeConfig:
        """``mode``'s configuration; UnknownModeError if the configuration rejects it."""
        try:
            return self.modes.get(check_id(mode, "mode"))
        except KeyError:
            raise UnknownModeError(
                f"mode {mode!r} is not configured, and the modes configuration rejects "
                "unlisted modes"
            ) from None

    def rules(self, mode: str) -> Plan[ModeConfig]:
        """The mode as the workers rate it now: for a mode that learns its population, with the
        population of its latest cached event in force (stream/cache/population.py)."""
        config = self.mode_config(mode)
        if not config.population.learns:
            return Plan((), lambda replies: config)
        return Plan(
            (("HGETALL", self.layout.population(mode)),),
            lambda replies: rules_from(config, replies[0]),
        )

    def get_many(self, mode: str, player_ids: Iterable[str]) -> Plan[dict[str, CachedRating]]:
        """Each distinct player's cached rating, in the order given; unknown players get the
        mode's defaults with ``unknown=True``, version 0 and 0 games."""
        return self._players(mode, player_ids).then(lambda found: found[1])

    def _players(
        self, mode: str, player_ids: Iterable[str]
    ) -> Plan[tuple[ModeConfig, dict[str, CachedRating]]]:
        """The mode's rules and each player's entry (an unknown player: the rules' defaults)."""
        ids = _unique_ids(player_ids)
        commands = tuple(("HGETALL", self.layout.player(mode, p)) for p in ids)

        def decode(
            rules: ModeConfig, replies: Sequence[Any]
        ) -> tuple[ModeConfig, dict[str, CachedRating]]:
            default = initial_state(rules)
            found: dict[str, CachedRating] = {}
            for player_id, reply in zip(ids, replies, strict=True):
                entry = decode_entry(mode, player_id, reply)
                found[player_id] = entry or CachedRating.unknown_default(mode, player_id, default)
            return rules, found

        return joined(self.rules(mode), Plan(commands, list)).then(lambda both: decode(*both))

    def window(
        self, mode: str, rating: float, width: float, limit: int = 100
    ) -> Plan[list[tuple[str, float]]]:
        """Up to ``limit`` players rated within ``rating`` ± ``width`` (inclusive), nearest to
        ``rating`` first (ties: lower rating, then player id). Widen ``width`` as a player's
        wait grows."""
        if not math.isfinite(rating):
            raise ValueError(f"rating must be finite, got {rating!r}")
        if not math.isfinite(width) or width < 0:
            raise ValueError(f"width must be finite and >= 0, got {width!r}")
        _check_count(limit, "limit", minimum=1)
        key = self.layout.by_rating(mode)
        # Up to `limit` on each side of `rating`: the nearest `limit` overall are among them,
        # whereas one ascending range with LIMIT would keep the lowest, not the nearest.
        above = ("ZRANGE", key, encode_float(rating), encode_float(rating + width), "BYSCORE")
        below = ("ZRANGE", key, "(" + encode_float(rating), encode_float(rating - width))
        paging = ("LIMIT", 0, limit, "WITHSCORES")
        commands = ((*above, *paging), (*below, "BYSCORE", "REV", *paging))

        def decode(replies: Sequence[Any]) -> list[tuple[str, float]]:
            return nearest_first(
                rating, [*score_pairs(replies[0]), *score_pairs(replies[1])], limit
            )

        return Plan(commands, decode)

    def win_probability(self, mode: str, a: str, b: str) -> Plan[float]:
        """Probability that player ``a`` beats ``b`` (a draw counted as half), from their
        cached ratings as of their last match."""

        def decide(rules: ModeConfig, found: dict[str, CachedRating]) -> float:
            experience = rules.experience
            return probability.win_probability(
                rules.algorithm,
                found[a].effective_skill(experience),
                found[b].effective_skill(experience),
                rules.population.decisiveness,
            )

        return self._players(mode, (a, b)).then(lambda both: decide(*both))

    def team_win_probability(
        self,
        mode: str,
        team_a: Sequence[str],
        team_b: Sequence[str],
        shares: TeamShares = None,
        parties: Sequence[Sequence[str]] | None = None,
    ) -> Plan[float]:
        """Probability that ``team_a`` beats ``team_b``, as the mode rates the teams: its team
        strategy, size edge and decisiveness. ``shares``: the share of the match each member
        is expected to play, per team (a backfill: what is left of it; None: all of it), as
        part-time play is rated (stream.ratings.parttime). ``parties``: the players who
        queued together, each party within one team (stream.ratings.parties): each member of
        a party of two or more plays at the mode's party edge above their rating."""
        measure = probability.team_win_probability
        return self._team_plan(mode, team_a, team_b, measure, shares, parties)

    def match_quality(
        self,
        mode: str,
        team_a: Sequence[str],
        team_b: Sequence[str],
        shares: TeamShares = None,
        parties: Sequence[Sequence[str]] | None = None,
    ) -> Plan[float]:
        """A figure in (0, 1] to sort candidate matches by; higher is more even. As the mode
        rates the teams: its team strategy, size edge and decisiveness; ``shares`` and
        ``parties`` as for :meth:`team_win_probability` (a backfill into a match under way;
        the pre-made groups of a candidate match)."""
        return self._team_plan(mode, team_a, team_b, probability.match_quality, shares, parties)

    def _team_plan(
        self,
        mode: str,
        team_a: Sequence[str],
        team_b: Sequence[str],
        measure: TeamMeasure,
        shares: TeamShares = None,
        parties: Sequence[Sequence[str]] | None = None,
    ) -> Plan[float]:
        """``measure`` of the two teams with the mode's rules as the workers rate now."""
        checked = _checked_shares(shares, team_a, team_b)
        members = partied(_checked_parties(parties, team_a, team_b))

        def decide(rules: ModeConfig, a: list[Skill], b: list[Skill]) -> float:
            edge = rules.population.party_edge
            if members and edge != 0.0 and rules.pairwise is not None:
                # As the workers rate a match that names these parties (engine.match_parties).
                a = _partied(a, team_a, members, edge)
                b = _partied(b, team_b, members, edge)
            population = rules.population
            strategy, edge, decisive = (
                rules.team_rule,
                population.size_edge,
                population.decisiveness,
            )
            # As the workers rate: a mode that ignores the seconds, a duel or a free-for-all
            # (no team) and an algorithm that rates from the stats see every member whole.
            teamed = len(team_a) > 1 or len(team_b) > 1
            read = rules.part_time and teamed and rules.pairwise is not None
            shares = checked if read else None
            return measure(rules.algorithm, a, b, strategy, edge, decisive, shares)

        return self._teams(mode, team_a, team_b).then(lambda found: decide(*found))

    def top(
        self,
        mode: str,
        n: int,
        board: Board | str = Board.RANK_POINTS,
        season: int | None = None,
    ) -> Plan[list[LeaderboardEntry]]:
        """The ``n`` highest entries of ``board`` ("rank_points", "conservative" or
        "rating"), rank 1 first: the current season's (``season`` None), or ``season``'s,
        its final standings once it is over (empty if they are no longer kept)."""
        _check_count(n, "n", minimum=1)
        return self._on_season(
            mode,
            board,
            season,
            lambda key: ("ZRANGE", key, 0, n - 1, "REV", "WITHSCORES"),
            lambda reply: _ranked(0, reply),
        )

    def around(
        self,
        mode: str,
        player_id: str,
        n: int,
        board: Board | str = Board.RANK_POINTS,
        season: int | None = None,
    ) -> Plan[list[LeaderboardEntry]]:
        """The player's entry with up to ``n`` entries above and ``n`` below, highest first;
        an empty list if the player is not on the board (``season`` as in :meth:`top`)."""
        _check_count(n, "n", minimum=0)
        player = check_id(player_id, "player_id")

        def decode(reply: Any) -> list[LeaderboardEntry]:
            if reply is None or reply is False:
                return []
            first, entries = reply
            return _ranked(int(first), entries)

        return self._on_season(
            mode,
            board,
            season,
            lambda key: ("EVAL_RO", AROUND_SCRIPT, 1, key, player, n),
            decode,
        )

    def _on_season(
        self,
        mode: str,
        board: Board | str,
        season: int | None,
        command: Callable[[str], Command],
        decode: Callable[[Any], list[LeaderboardEntry]],
    ) -> Plan[list[LeaderboardEntry]]:
        """``command`` on the current board (``season`` None), or on ``season``'s: the current
        board if that is the season being played, else its final standings (empty when they
        were not kept). One round trip: both boards are read with the current season's number."""
        current = self.layout.board(mode, board)
        if season is None:
            return Plan((command(current),), lambda replies: decode(replies[0]))
        _check_count(season, "season", minimum=0)
        past = self.layout.past_board(mode, season, board)
        commands = (("GET", self.layout.season(mode)), command(current), command(past))

        def pick(replies: Sequence[Any]) -> list[LeaderboardEntry]:
            playing = None if replies[0] is None else int(text(replies[0]))
            return decode(replies[1] if playing == season else replies[2])

        return Plan(commands, pick)

    def seasons(self, mode: str) -> Plan[Seasons]:
        """The season being played in ``mode`` and the past ones whose standings are kept."""
        commands = (("GET", self.layout.season(mode)), ("ZRANGE", self.layout.seasons(mode), 0, -1))

        def decode(replies: Sequence[Any]) -> Seasons:
            current = None if replies[0] is None else int(text(replies[0]))
            return Seasons(current, sorted(int(text(s)) for s in replies[1] or []))

        return Plan(commands, decode)

    def history(self, mode: str, player_id: str, n: int = 20) -> Plan[list[HistoryEntry]]:
        """The player's last ``n`` rating changes in ``mode`` (at most as many as the writer
        keeps), newest first; empty for a player the cache does not know."""
        _check_count(n, "n", minimum=1)
        # The whole list (SKILLSTREAM_CACHE_HISTORY_LENGTH elements at most): the matches a
        # re-rate no longer counts are left out, and the n counted ones may lie beyond n.
        command = ("LRANGE", self.layout.history(mode, player_id), 0, -1)
        return Plan((command,), lambda replies: counted(decode_history(replies[0]))[:n])

    def explanation(
        self, mode: str, player_id: str, match_id: str | None = None
    ) -> Plan[HistoryEntry | None]:
        """The cached change of ``player_id`` by ``match_id`` (None: their latest counted one),
        or None when the cache does not keep it (an unknown player, or a match older than the
        history the writer keeps); :func:`stream.cache.history.worded` words it. A match a
        re-rate voided comes back with ``retracted`` set."""

        def pick(replies: Sequence[Any]) -> HistoryEntry | None:
            entries = decode_history(replies[0])
            if match_id is None:
                latest = counted(entries)
                return latest[0] if latest else None
            return next((e for e in entries if e.match_id == match_id), None)

        return Plan((("LRANGE", self.layout.history(mode, player_id), 0, -1),), pick)

    def _teams(
        self, mode: str, team_a: Sequence[str], team_b: Sequence[str]
    ) -> Plan[tuple[ModeConfig, list[Skill], list[Skill]]]:
        """The mode's rules and both teams' skills as the rating engine plays them: experience
        offsets included."""
        for name, team in (("team_a", team_a), ("team_b", team_b)):
            if isinstance(team, str) or not team:
                raise ValueError(f"{name} must be a non-empty sequence of player ids")

        def skills(
            rules: ModeConfig, found: dict[str, CachedRating]
        ) -> tuple[ModeConfig, list[Skill], list[Skill]]:
            experience = rules.experience
            return (
                rules,
                [found[p].effective_skill(experience) for p in team_a],
                [found[p].effective_skill(experience) for p in team_b],
            )

        return self._players(mode, (*team_a, *team_b)).then(lambda both: skills(*both))


def joined(first: Plan[T], second: Plan[U]) -> Plan[tuple[T, U]]:
    """Both plans' commands in one pipeline, and both answers."""
    n = len(first.commands)
    return Plan(
        first.commands + second.commands,
        lambda replies: (first.decode(replies[:n]), second.decode(replies[n:])),
    )


def nearest_first(
    center: float, candidates: Iterable[tuple[str, float]], limit: int
) -> list[tuple[str, float]]:
    """The ``limit`` candidates nearest to ``center``; ties by lower score, then player id."""
    ordered = sorted(candidates, key=lambda c: (abs(c[1] - center), c[1], c[0]))
    return ordered[:limit]


def _ranked(first: int, reply: object) -> list[LeaderboardEntry]:
    return [
        LeaderboardEntry(first + i + 1, player_id, score)
        for i, (player_id, score) in enumerate(score_pairs(reply))
    ]


def _unique_ids(player_ids: Iterable[str]) -> list[str]:
    # A lone string is iterable too, and would be read as one id per character.
    if isinstance(player_ids, str | bytes):
        raise TypeError("player_ids must be a collection of ids, not one string")
    return [check_id(p, "player_id") for p in dict.fromkeys(player_ids)]


def _check_count(value: int, name: str, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")


def _checked_parties(
    parties: Sequence[Sequence[str]] | None, team_a: Sequence[str], team_b: Sequence[str]
) -> list[list[str]] | None:
    """``parties`` checked against the teams (each member in one of them, a party within one
    team, nobody in two parties; ValueError names what is wrong)."""
    if parties is None:
        return None
    if isinstance(parties, str):
        raise ValueError("parties must be a sequence of parties, each a sequence of player ids")
    side = {pid: 0 for pid in team_a} | {pid: 1 for pid in team_b}
    seen: set[str] = set()
    out: list[list[str]] = []
    for i, given in enumerate(parties):
        party = [] if isinstance(given, str) else list(given)
        if not party or not all(isinstance(pid, str) for pid in party):
            raise ValueError(f"parties[{i}] must be a non-empty sequence of player ids")
        for pid in party:
            if pid not in side:
                raise ValueError(f"parties[{i}]: {pid!r} is in neither team")
            if pid in seen:
                raise ValueError(f"parties[{i}]: {pid!r} is in two parties")
            if side[pid] != side[party[0]]:
                raise ValueError(f"parties[{i}]: {pid!r} is not on the team of {party[0]!r}")
            seen.add(pid)
        out.append(party)
    return out


def _partied(
    skills: list[Skill], team: Sequence[str], members: frozenset[str], edge: float
) -> list[Skill]:
    """The team's skills with each party member's moved by the party edge."""
    return [
        Skill(s.rating + edge, s.deviation, s.volatility) if pid in members else s
        for pid, s in zip(team, skills, strict=True)
    ]


def _checked_shares(
    shares: TeamShares, team_a: Sequence[str], team_b: Sequence[str]
) -> tuple[tuple[float, ...], tuple[float, ...]] | None:
    """``shares`` checked against the teams (one per member, each in (0, 1]; ValueError
    names what is wrong) and floored as the ratings floor them (MIN_SHARE)."""
    if shares is None:
        return None
    if len(shares) != 2:
        raise ValueError(f"shares: one list per team (2), got {len(shares)}")
    out: list[tuple[float, ...]] = []
    for name, team, row in (("team_a", team_a, shares[0]), ("team_b", team_b, shares[1])):
        if len(row) != len(team):
            raise ValueError(f"shares of {name}: one per member ({len(team)}), got {len(row)}")
        for value in row:
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ValueError(f"shares of {name}: {value!r} is not a number")
            if not 0.0 < value <= 1.0:
                raise ValueError(f"shares of {name}: {value!r} is not within (0, 1]")
        out.append(tuple(max(float(v), MIN_SHARE) for v in row))
    return out[0], out[1]
