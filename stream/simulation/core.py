"""A deterministic match-history simulator with known true skills.

Pure: no I/O, no clocks, all randomness from one ``random.Random(seed)``, so a seed always
gives the same history (same Python version). Used to check that a rating algorithm recovers
the hidden skills (``evaluate``), to tune parameters, and to feed demos.

The model, deliberately simple:

* Every player has a hidden true skill on the 1500-centred logistic scale, drawn from a
  normal distribution, optionally drifting by a random walk after each match played.
* The population grows: ``initial_players`` exist at the start and the rest join at evenly
  spaced points of the run.
* Matchmaking samples up to ``pool_size`` available players, takes the first as the anchor
  and fills the match with those whose current estimate is closest to the anchor's. The
  simulator has no rating engine, so a player's estimate is the true skill plus Gaussian
  noise (``matchmaking_noise``), redrawn after each of their matches: it stands in for an
  imperfect rating that moves as they play.
* Teams are balanced by a snake draft on the estimates. A team's strength is the mean true
  skill of its players; the finishing order is drawn by Plackett-Luce with weights
  ``10 ** (strength / 400)``, which for two teams is the logistic win probability at scale
  400/ln 10 (the Elo/Glicko curve). Neighbours in the order tie with ``draw_probability``.
* A quitter's team is placed behind every team without quitters.
* After each match a player starts a break with ``break_probability``, lasting an
  exponentially distributed number of days (mean ``break_days``), so inactivity matters.
* Match times form a Poisson process of ``matches_per_second`` (game time, not wall time),
  in whole milliseconds so that written files read back to identical floats.
* Team and FFA matches carry per-player stats: seconds played, and a score whose rate
  doubles for every 400 points of (noisy) performance, so ZoneStats has signal to find.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from stream.ratings.skill import PlayerStats

_MS_PER_DAY = 86_400_000
# 2026-01-01T00:00:00Z
DEFAULT_START = 1_767_225_600.0
# Per-match performance spread around the true skill, for stats only.
_PERFORMANCE_SD = 200.0
_POINTS_PER_MINUTE = 10.0


@dataclass(frozen=True, slots=True)
class SimulationConfig:
    """Knobs of the simulation; the defaults give a 1v1 history of 10,000 matches."""

    seed: int = 0
    matches: int = 10_000
    players: int = 1_000
    # None: a tenth of ``players``, but at least enough for one match.
    initial_players: int | None = None
    # None: derived from the format, e.g. "1v1", "2v2", "ffa8", "4x2" (4 teams of 2).
    mode: str | None = None
    team_size: int = 1
    teams: int = 2
    skill_mean: float = 1500.0
    skill_sd: float = 300.0
    # Standard deviation of the random walk of a player's true skill per match played.
    drift_sd: float = 0.0
    draw_probability: float = 0.0
    # About 1,700 matches a day: 10,000 matches span about six days.
    matches_per_second: float = 0.02
    start: float = DEFAULT_START
    break_probability: float = 0.005
    break_days: float = 7.0
    matchmaking_noise: float = 100.0
    pool_size: int = 16
    quit_probability: float = 0.0
    # None: stats for team and FFA matches only (1v1 ratings do not use them).
    stats: bool | None = None
    match_seconds: float = 900.0

    def __post_init__(self) -> None:
        _check(self.matches >= 0, f"matches must be >= 0, got {self.matches}")
        _check(self.team_size >= 1, f"team_size must be >= 1, got {self.team_size}")
        _check(self.teams >= 2, f"teams must be >= 2, got {self.teams}")
        need = self.team_size * self.teams
        _check(
            self.players >= need,
            f"players must be at least team_size * teams = {need}, got {self.players}",
        )
        if self.initial_players is not None:
            _check(
                need <= self.initial_players <= self.players,
                f"initial_players must be between {need} and players ({self.players}), "
                f"got {self.initial_players}",
            )
        _check(self.pool_size >= need, f"pool_size must be at least {need}, got {self.pool_size}")
        for name in ("skill_sd", "drift_sd", "matchmaking_noise"):
            value = getattr(self, name)
            _check(math.isfinite(value) and value >= 0, f"{name} must be >= 0, got {value}")
        for name in ("draw_probability", "break_probability", "quit_probability"):
            value = getattr(self, name)
            _check(0.0 <= value <= 1.0, f"{name} must be between 0 and 1, got {value}")
        for name in ("matches_per_second", "break_days", "match_seconds"):
            value = getattr(self, name)
            _check(math.isfinite(value) and value > 0, f"{name} must be > 0, got {value}")
        _check(math.isfinite(self.skill_mean), "skill_mean must be finite")
        _check(
            math.isfinite(self.start) and self.start >= 0,
            f"start must be epoch seconds >= 0, got {self.start}",
        )
        _check(self.mode is None or self.mode != "", "mode must not be empty")

    @property
    def mode_name(self) -> str:
        if self.mode is not None:
            return self.mode
        if self.teams == 2:
            return f"{self.team_size}v{self.team_size}"
        if self.team_size == 1:
            return f"ffa{self.teams}"
        return f"{self.teams}x{self.team_size}"

    @property
    def with_stats(self) -> bool:
        if self.stats is not None:
            return self.stats
        return self.team_size > 1 or self.teams > 2

    @property
    def starting_players(self) -> int:
        if self.initial_players is not None:
            return self.initial_players
        return max(self.team_size * self.teams, self.players // 10)


def _check(ok: bool, message: str) -> None:
    if not ok:
        raise ValueError(message)


@dataclass(frozen=True, slots=True)
class SimulatedMatch:
    """One simulated match, shaped like a history match plus the hidden truth.

    ``true_skills`` holds each participant's true skill when the match was played.
    """

    match_id: str
    mode: str
    at: float
    teams: tuple[tuple[str, ...], ...]
    ranks: tuple[int, ...]
    stats: Mapping[str, PlayerStats] | None
    quitters: frozenset[str]
    true_skills: Mapping[str, float]


class Simulator:
    """Runs one simulation; iterate it once. ``true_skills`` shows everyone's current skill."""

    def __init__(self, config: SimulationConfig) -> None:
        self.config = config
        self._rng = random.Random(config.seed)
        self._ids: list[str] = []
        self._skills: list[float] = []
        self._break_until: list[int] = []  # epoch ms
        self._estimates: list[float] = []  # matchmaking's view: true skill plus noise
        self._skill_by_id: dict[str, float] = {}
        self._started = False

    @property
    def true_skills(self) -> Mapping[str, float]:
        """Current true skill of every player who has joined so far (read-only, live)."""
        return MappingProxyType(self._skill_by_id)

    def __iter__(self) -> Iterator[SimulatedMatch]:
        if self._started:
            raise RuntimeError("a Simulator runs once; create a new one to run again")
        self._started = True
        return self._run()

    def _join(self) -> None:
        index = len(self._ids)
        player_id = f"p{index:06d}"
        skill = self._rng.gauss(self.config.skill_mean, self.config.skill_sd)
        self._ids.append(player_id)
        self._skills.append(skill)
        self._break_until.append(0)
        self._estimates.append(skill + self._rng.gauss(0.0, self.config.matchmaking_noise))
        self._skill_by_id[player_id] = skill

    def _run(self) -> Iterator[SimulatedMatch]:
        config = self.config
        rng = self._rng
        for _ in range(config.starting_players):
            self._join()
        joiners = config.players - config.starting_players
        # Player k of the joiners arrives before match floor((k + 1) * matches / (joiners + 1)).
        next_joiner = 0
        now_ms = round(config.start * 1000.0)
        mean_gap_ms = 1000.0 / config.matches_per_second
        mode = config.mode_name
        for number in range(config.matches):
            while (
                next_joiner < joiners
                and (next_joiner + 1) * config.matches // (joiners + 1) <= number
            ):
                self._join()
                next_joiner += 1
            now_ms += max(1, round(rng.expovariate(1.0) * mean_gap_ms))
            players = self._pick_players(now_ms)
            teams = self._form_teams(players)
            yield self._play(f"sim{config.seed}-{number + 1}", mode, now_ms, teams)

    def _pick_players(self, now_ms: int) -> list[tuple[float, int]]:
        """(matchmaking estimate, player index) of the players of the next match."""
        config = self.config
        need = config.team_size * config.teams
        count = len(self._ids)
        random_ = self._rng.random
        break_until = self._break_until
        # Draws with replacement, deduplicated in draw order: much cheaper than rng.sample.
        pool = dict.fromkeys(int(random_() * count) for _ in range(config.pool_size))
        available = [p for p in pool if break_until[p] <= now_ms]
        if len(available) < need:
            available = self._fallback_pool(now_ms, need)
        estimates = self._estimates
        anchor = estimates[available[0]]
        nearest = sorted([(abs(estimates[p] - anchor), p) for p in available])[:need]
        return [(estimates[p], p) for _, p in nearest]

    def _fallback_pool(self, now_ms: int, need: int) -> list[int]:
        """Available players when the random pool came up short (small or resting population)."""
        count = len(self._ids)
        break_until = self._break_until
        available = [p for p in range(count) if break_until[p] <= now_ms]
        if len(available) < need:
            # Too many on a break: call back the ones due back soonest.
            resting = sorted(
                (p for p in range(count) if break_until[p] > now_ms),
                key=lambda p: (break_until[p], p),
            )
            for p in resting[: need - len(available)]:
                break_until[p] = now_ms
                available.append(p)
        return self._rng.sample(available, min(self.config.pool_size, len(available)))

    def _form_teams(self, players: list[tuple[float, int]]) -> list[list[int]]:
        config = self.config
        players.sort(key=lambda item: (-item[0], item[1]))
        teams: list[list[int]] = [[] for _ in range(config.teams)]
        # Snake draft: 0,1,..,n-1,n-1,..,0,0,1,... balances estimated strength.
        for position, (_, player) in enumerate(players):
            lap, slot = divmod(position, config.teams)
            teams[slot if lap % 2 == 0 else config.teams - 1 - slot].append(player)
        # Otherwise the first team (CSV player_a) would always be the favourite.
        self._rng.shuffle(teams)
        return teams

    def _play(
        self, match_id: str, mode: str, now_ms: int, teams: list[list[int]]
    ) -> SimulatedMatch:
        config = self.config
        rng = self._rng
        skills = self._skills
        strengths = [sum(skills[p] for p in team) / len(team) for team in teams]
        order = _finishing_order(strengths, rng)
        quitters = [p for team in teams for p in team if rng.random() < config.quit_probability]
        if quitters:
            quit_set = set(quitters)
            has_quitter = [any(p in quit_set for p in team) for team in teams]
            order.sort(key=has_quitter.__getitem__)  # stable: keeps the drawn order otherwise
        ranks = [0] * len(teams)
        for position, team_index in enumerate(order):
            if position > 0 and rng.random() < config.draw_probability:
                ranks[team_index] = ranks[order[position - 1]]
            else:
                ranks[team_index] = position
        ids = self._ids
        truth = {ids[p]: skills[p] for team in teams for p in team}
        stats = self._stats(teams, set(quitters)) if config.with_stats else None
        match = SimulatedMatch(
            match_id=match_id,
            mode=mode,
            at=now_ms / 1000.0,
            teams=tuple(tuple(ids[p] for p in team) for team in teams),
            ranks=tuple(ranks),
            stats=stats,
            quitters=frozenset(ids[p] for p in quitters),
            true_skills=MappingProxyType(truth),
        )
        self._after_match(teams, now_ms)
        return match

    def _stats(self, teams: list[list[int]], quitters: set[int]) -> Mapping[str, PlayerStats]:
        config = self.config
        rng = self._rng
        duration = config.match_seconds * rng.uniform(0.7, 1.3)
        stats: dict[str, PlayerStats] = {}
        for team in teams:
            for p in team:
                seconds = duration * rng.uniform(0.1, 0.9) if p in quitters else duration
                performance = rng.gauss(self._skills[p], _PERFORMANCE_SD)
                rate = _POINTS_PER_MINUTE * 2.0 ** ((performance - config.skill_mean) / 400.0)
                stats[self._ids[p]] = PlayerStats(
                    round(rate * seconds / 60.0, 1), float(round(seconds))
                )
        return MappingProxyType(stats)

    def _after_match(self, teams: list[list[int]], now_ms: int) -> None:
        config = self.config
        rng = self._rng
        noise = config.matchmaking_noise
        for team in teams:
            for p in team:
                if config.drift_sd > 0.0:
                    skill = self._skills[p] + rng.gauss(0.0, config.drift_sd)
                    self._skills[p] = skill
                    self._skill_by_id[self._ids[p]] = skill
                self._estimates[p] = self._skills[p] + rng.gauss(0.0, noise)
                if rng.random() < config.break_probability:
                    days = rng.expovariate(1.0 / config.break_days)
                    self._break_until[p] = now_ms + round(days * _MS_PER_DAY)


def _finishing_order(strengths: list[float], rng: random.Random) -> list[int]:
    """Team indices best first, drawn by Plackett-Luce with weights 10 ** (strength / 400)."""
    top = max(strengths)
    weights = [10.0 ** ((s - top) / 400.0) for s in strengths]
    remaining = list(range(len(strengths)))
    order: list[int] = []
    while len(remaining) > 1:
        pick = rng.random() * sum(weights[i] for i in remaining)
        chosen = remaining[-1]  # guards against rounding leaving pick above the last sum
        for i in remaining:
            pick -= weights[i]
            if pick < 0.0:
                chosen = i
                break
        order.append(chosen)
        remaining.remove(chosen)
    order.extend(remaining)
    return order


def simulate(config: SimulationConfig) -> Iterator[SimulatedMatch]:
    """The matches of a fresh :class:`Simulator` run, in time order."""
    return iter(Simulator(config))
