"""The knobs of a simulation, their defaults and their checks (docs/simulator.md explains each)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum

# 2026-01-01T00:00:00Z
DEFAULT_START = 1_767_225_600.0


class Matchmaker(StrEnum):
    # A running Elo rating fed by the reported results: newcomers enter at the population mean.
    ELO = "elo"
    # True skill plus ``matchmaking_noise``: a matchmaker that knows the truth (a control).
    ORACLE = "oracle"


# Bounds that keep a simulation within a machine: a simulated player holds about 350 bytes
# (1,000,000 players: 344 MB), matches are written as they are made (time, not memory), and a
# match is at most what a worker accepts (stream.events.EventLimits: 64 teams, 256 players).
MAX_PLAYERS = 10_000_000
MAX_MATCHES = 1_000_000_000
MAX_TEAMS = 64
MAX_TEAM_SIZE = 256
# A party's edge beyond this is a typo: 1000 points turn an even match into a 99.7% win.
MAX_PARTY_EDGE = 1000.0


@dataclass(frozen=True, slots=True)
class SimulationConfig:
    """Knobs of the simulation; the defaults give a 1v1 history of 10,000 matches."""

    seed: int = 0
    matches: int = 10_000
    players: int = 1_000
    # None: a tenth of ``players``, but at least enough for one match.
    initial_players: int | None = None
    # None: derived from the format, e.g. "1v1", "2v2", "2v3", "ffa8", "4x2" (4 teams of 2).
    mode: str | None = None
    team_size: int = 1
    teams: int = 2
    # One size per team, for uneven teams (e.g. (2, 3)); None: ``teams`` teams of ``team_size``.
    team_sizes: tuple[int, ...] | None = None
    # (fewest, most): every match draws one size for all its teams from this range (a casual
    # mode that starts with whoever is there); None: the sizes above.
    size_range: tuple[int, int] | None = None
    # Share of matches where one team (drawn at random) has one player more or one fewer than
    # its size, as when a player leaves or joins late.
    uneven_rate: float = 0.0
    skill_mean: float = 1500.0
    skill_sd: float = 300.0
    # Standard deviation of the random walk of a player's true skill per match played.
    drift_sd: float = 5.0
    # A newcomer's true skill starts this far below their eventual skill ...
    newcomer_deficit: float = 250.0
    # ... and the gap shrinks by a factor e every this many matches played.
    learning_matches: float = 4.0
    draw_probability: float = 0.0
    # About 1,700 matches a day: 10,000 matches span about six days.
    matches_per_second: float = 0.02
    start: float = DEFAULT_START
    break_probability: float = 0.005
    break_days: float = 7.0
    matchmaker: Matchmaker = Matchmaker.ELO
    # K factor of the matchmaker's Elo (points per unit of surprise).
    matchmaking_k: float = 32.0
    # Gaussian noise on the matchmaker's view of a player, redrawn after each of their matches:
    # the compromises a queue makes to start matches in time.
    matchmaking_noise: float = 50.0
    pool_size: int = 16
    # Weight of the team's best performance against its mean: 0 = the mean alone decides.
    carry: float = 0.25
    # Points a team gains per player above the match's mean team size (what the game's
    # handicap for uneven teams leaves over); 0 = a perfect handicap.
    extra_player_edge: float = 50.0
    # Share of joining players who join the party of the player who joined before them.
    party_rate: float = 0.3
    quit_probability: float = 0.0
    # Chance that a player of a team match plays only part of it (a late joiner, a backfill,
    # an early leaver the game does not count as a quitter): a share drawn in 0.2..0.9, their
    # side weaker for the rest (stream.simulation.outcome).
    part_time_probability: float = 0.0
    # Chance that a side of at least two players in a team match holds a party that queued
    # together and coordinates (the event's ``parties``): one party a side at most, its size
    # drawn uniformly in 2..side, its members at random. Drawn per match, apart from the
    # matchmaker's parties of ``party_rate`` (from the same generator: turned on, the later
    # matches' line-ups differ; at 0 nothing is drawn and a seed's history is as before).
    party_probability: float = 0.0
    # Rating points each member of such a party performs above their skill in that match: what
    # coordination adds, and what the rating engine's party edge should learn back.
    party_edge: float = 100.0
    # None: stats for team and FFA matches only (1v1 ratings do not use them).
    stats: bool | None = None
    match_seconds: float = 900.0

    def __post_init__(self) -> None:
        _check(
            0 <= self.matches <= MAX_MATCHES,
            f"matches must be between 0 and {MAX_MATCHES:,}, got {self.matches}",
        )
        _check(
            self.players <= MAX_PLAYERS,
            f"players must be at most {MAX_PLAYERS:,} (each takes about 350 bytes of memory),"
            f" got {self.players}",
        )
        _check(
            1 <= self.team_size <= MAX_TEAM_SIZE,
            f"team_size must be between 1 and {MAX_TEAM_SIZE}, got {self.team_size}",
        )
        _check(
            2 <= self.teams <= MAX_TEAMS,
            f"teams must be between 2 and {MAX_TEAMS}, got {self.teams}",
        )
        if self.team_sizes is not None:
            # A list from a caller becomes a tuple, so the config stays hashable.
            object.__setattr__(self, "team_sizes", tuple(self.team_sizes))
            _check(
                2 <= len(self.team_sizes) <= MAX_TEAMS
                and all(1 <= size <= MAX_TEAM_SIZE for size in self.team_sizes),
                f"team_sizes must be 2 to {MAX_TEAMS} sizes of 1 to {MAX_TEAM_SIZE}, got"
                f" {self.team_sizes}",
            )
        if self.size_range is not None:
            object.__setattr__(self, "size_range", tuple(self.size_range))
            low, high = self.size_range
            _check(
                1 <= low <= high <= MAX_TEAM_SIZE,
                f"size_range must be (fewest, most) with 1 <= fewest <= most <="
                f" {MAX_TEAM_SIZE}, got {low}-{high}",
            )
        self._check_players()
        self._check_numbers()
        _check(self.mode is None or self.mode != "", "mode must not be empty")
        _check(
            self.matchmaker in tuple(Matchmaker),
            f"matchmaker must be one of {', '.join(Matchmaker)}, got {self.matchmaker!r}",
        )
        # A plain string from a caller becomes the member, so identity checks hold.
        object.__setattr__(self, "matchmaker", Matchmaker(self.matchmaker))

    def _check_players(self) -> None:
        need = self.players_per_match
        _check(
            self.players >= need,
            f"players must be at least the players of one match ({need}), got {self.players}",
        )
        if self.initial_players is not None:
            _check(
                need <= self.initial_players <= self.players,
                f"initial_players must be between {need} and players ({self.players}), "
                f"got {self.initial_players}",
            )
        _check(self.pool_size >= need, f"pool_size must be at least {need}, got {self.pool_size}")

    def _check_numbers(self) -> None:
        for name in (
            "skill_sd",
            "drift_sd",
            "matchmaking_noise",
            "matchmaking_k",
            "newcomer_deficit",
            "extra_player_edge",
        ):
            value = getattr(self, name)
            _check(math.isfinite(value) and value >= 0, f"{name} must be >= 0, got {value}")
        for name in (
            "draw_probability",
            "break_probability",
            "quit_probability",
            "part_time_probability",
            "party_probability",
            "carry",
            "party_rate",
            "uneven_rate",
        ):
            value = getattr(self, name)
            _check(0.0 <= value <= 1.0, f"{name} must be between 0 and 1, got {value}")
        for name in ("matches_per_second", "break_days", "match_seconds", "learning_matches"):
            value = getattr(self, name)
            _check(math.isfinite(value) and value > 0, f"{name} must be > 0, got {value}")
        _check(
            math.isfinite(self.party_edge) and abs(self.party_edge) <= MAX_PARTY_EDGE,
            f"party_edge must be between -{MAX_PARTY_EDGE:g} and {MAX_PARTY_EDGE:g},"
            f" got {self.party_edge}",
        )
        _check(math.isfinite(self.skill_mean), "skill_mean must be finite")
        _check(
            math.isfinite(self.start) and self.start >= 0,
            f"start must be epoch seconds >= 0, got {self.start}",
        )

    @property
    def sizes(self) -> tuple[int, ...]:
        """The size of each team of a match (the largest of the range with ``size_range``,
        before an uneven match changes one team's)."""
        if self.team_sizes is not None:
            return self.team_sizes
        if self.size_range is not None:
            return (self.size_range[1],) * self.teams
        return (self.team_size,) * self.teams

    @property
    def players_per_match(self) -> int:
        """The most players a match can have."""
        return sum(self.sizes) + (self.uneven_rate > 0.0)

    @property
    def smallest_team(self) -> int:
        """The fewest players a team can have."""
        low = self.size_range[0] if self.size_range is not None else min(self.sizes)
        return max(1, low - (self.uneven_rate > 0.0))

    @property
    def party_cap(self) -> int:
        """The largest party: one that fits in the smallest team (1: no parties)."""
        return self.smallest_team

    @property
    def one_on_one(self) -> bool:
        """Whether every match is two single players (a history a CSV can hold)."""
        return self.sizes == (1, 1) and self.uneven_rate == 0.0

    @property
    def mode_name(self) -> str:
        if self.mode is not None:
            return self.mode
        if self.size_range is not None:
            low, high = self.size_range
            return f"{low}-{high}-a-side" if self.teams == 2 else f"{self.teams}x{low}-{high}"
        sizes = self.sizes
        if len(set(sizes)) > 1 or len(sizes) == 2:
            return "v".join(str(size) for size in sizes)
        if sizes[0] == 1:
            return f"ffa{len(sizes)}"
        return f"{len(sizes)}x{sizes[0]}"

    @property
    def with_stats(self) -> bool:
        if self.stats is not None:
            return self.stats
        return self.players_per_match > 2

    @property
    def starting_players(self) -> int:
        if self.initial_players is not None:
            return self.initial_players
        return max(self.players_per_match, self.players // 10)


def _check(ok: bool, message: str) -> None:
    if not ok:
        raise ValueError(message)
