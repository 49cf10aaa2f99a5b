"""A deterministic match-history simulator with known true skills.

Pure: no I/O, no clocks, all randomness from one ``random.Random(seed)``, so a seed always
gives the same history (same Python version). Used to check that a rating algorithm recovers
the hidden skills (``evaluate``), to tune parameters, to compare team models, and to feed demos.
docs/simulator.md describes the model and every knob; in short:

* Every player has a hidden true skill on the 1500-centred logistic scale: an eventual skill
  drawn from a normal distribution that drifts by a random walk after each match, minus a
  newcomer's deficit that shrinks as they play (the players present at the start are veterans).
* The population grows: ``initial_players`` exist at the start and the rest join at evenly
  spaced points of the run. A joining player may join the party of the one before them.
* Matchmaking samples up to ``pool_size`` free players, takes the first as the anchor, brings
  the anchor's free party members, and fills the match with the players whose estimate is
  closest to the anchor's (stream.simulation.matchmaker: the estimate is the matchmaker's own
  Elo, or the truth for the ``oracle`` control). Teams are balanced on the estimates.
* The outcome comes from the players' performances (stream.simulation.outcome). Neighbours in
  the finishing order tie with ``draw_probability``; a quitter's team finishes behind every
  team without quitters.
* With ``party_probability`` a side of a team match may hold a party that queued together:
  its members perform ``party_edge`` above their skill in that match, and the match names it.
* A match lasts about ``match_seconds``; a player is in one match at a time, and after a match
  starts a break with ``break_probability`` (exponential, mean ``break_days``).
* Match times (finishes) form a Poisson process of ``matches_per_second`` (game time), in whole
  milliseconds so that written files read back to identical floats; a match waits when too few
  players are free.
* Team and FFA matches carry per-player stats: seconds played, and a score whose rate doubles
  for every 400 points of the player's performance, so ZoneStats has signal to find.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from stream.ratings.skill import PlayerStats
from stream.simulation.config import DEFAULT_START, Matchmaker, SimulationConfig
from stream.simulation.matchmaker import balance, elo_changes
from stream.simulation.outcome import finishing_order, performance, team_performance

__all__ = ["DEFAULT_START", "SimulatedMatch", "SimulationConfig", "Simulator", "simulate"]

_MS_PER_DAY = 86_400_000
_POINTS_PER_MINUTE = 10.0


@dataclass(frozen=True, slots=True)
class SimulatedMatch:
    """One simulated match, shaped like a history match plus the hidden truth.

    ``at`` is the finish; the match started ``seconds`` earlier. ``true_skills`` holds each
    participant's true skill when the match was played (without a party's edge: that belongs
    to the party, not the player). ``parties`` names the players of one side who queued
    together (each party sorted, the parties by their first id; empty: nobody partied).
    """

    match_id: str
    mode: str
    at: float
    teams: tuple[tuple[str, ...], ...]
    ranks: tuple[int, ...]
    stats: Mapping[str, PlayerStats] | None
    quitters: frozenset[str]
    true_skills: Mapping[str, float]
    seconds: float = 0.0
    parties: tuple[tuple[str, ...], ...] = ()


class Simulator:
    """Runs one simulation; iterate it once. ``true_skills`` shows everyone's current skill."""

    def __init__(self, config: SimulationConfig) -> None:
        self.config = config
        self._rng = random.Random(config.seed)
        self._ids: list[str] = []
        self._eventual: list[float] = []  # skill once learnt; the drift moves it
        self._deficit: list[float] = []  # a newcomer's gap at their first match
        self._games: list[int] = []
        self._skills: list[float] = []  # current true skill
        self._busy_until: list[int] = []  # epoch ms: the end of their last match
        self._break_until: list[int] = []  # epoch ms
        self._rating: list[float] = []  # the matchmaker's Elo
        self._estimates: list[float] = []  # the matchmaker's view: Elo (or truth) plus noise
        self._party: list[list[int] | None] = []  # shared list per party
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

    def _join(self, veteran: bool) -> None:
        config = self.config
        rng = self._rng
        index = len(self._ids)
        player_id = f"p{index:06d}"
        eventual = rng.gauss(config.skill_mean, config.skill_sd)
        deficit = 0.0 if veteran else config.newcomer_deficit
        self._ids.append(player_id)
        self._eventual.append(eventual)
        self._deficit.append(deficit)
        self._games.append(0)
        self._skills.append(eventual - deficit)
        self._busy_until.append(0)
        self._break_until.append(0)
        self._rating.append(config.skill_mean)
        self._estimates.append(self._view(index))  # reads the skill and rating just appended
        self._skill_by_id[player_id] = eventual - deficit
        party: list[int] | None = None
        if index > 0 and config.party_cap > 1 and rng.random() < config.party_rate:
            before = self._party[index - 1]
            if before is None:
                before = [index - 1]
                self._party[index - 1] = before
            if len(before) < config.party_cap:
                before.append(index)
                party = before
        self._party.append(party)

    def _view(self, p: int) -> float:
        config = self.config
        base = self._skills[p] if config.matchmaker is Matchmaker.ORACLE else self._rating[p]
        if config.matchmaking_noise > 0.0:
            return base + self._rng.gauss(0.0, config.matchmaking_noise)
        return base

    def _run(self) -> Iterator[SimulatedMatch]:
        config = self.config
        rng = self._rng
        for _ in range(config.starting_players):
            self._join(veteran=True)
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
                self._join(veteran=False)
                next_joiner += 1
            now_ms += max(1, round(rng.expovariate(1.0) * mean_gap_ms))
            length_ms = max(1, round(config.match_seconds * rng.uniform(0.7, 1.3) * 1000.0))
            sizes = self._sizes()
            now_ms, parties, solo = self._pick_players(now_ms, length_ms, sizes)
            teams = balance(parties, solo, self._estimates, sizes)
            # Otherwise the first team (CSV player_a) would always hold the party or favourite.
            rng.shuffle(teams)
            yield self._play(f"sim{config.seed}-{number + 1}", mode, now_ms, length_ms, teams)

    def _sizes(self) -> tuple[int, ...]:
        """This match's team sizes: the configured ones, or one drawn from ``size_range`` for
        every team; in an uneven match one team has a player more or fewer."""
        config = self.config
        rng = self._rng
        sizes = list(config.sizes)
        if config.size_range is not None:
            low, high = config.size_range
            sizes = [rng.randint(low, high)] * config.teams
        if config.uneven_rate > 0.0 and rng.random() < config.uneven_rate:
            team = rng.randrange(len(sizes))
            change = 1 if sizes[team] == 1 or rng.random() < 0.5 else -1
            sizes[team] += change
        return tuple(sizes)

    def _free(self, p: int, start_ms: int) -> bool:
        return self._busy_until[p] <= start_ms and self._break_until[p] <= start_ms

    def _pick_players(
        self, now_ms: int, length_ms: int, sizes: tuple[int, ...]
    ) -> tuple[int, list[list[int]], list[int]]:
        """(finish time, the parties, the solo players) of the next match.

        The first party holds the anchor (alone if they have no party). A pooled player whose
        party has free members comes with them, as a party of its own team, while a team is
        left without a party and the match has room; otherwise they wait, unless the pool runs
        short. The finish moves later than ``now_ms`` only when too few players are out of a
        match.
        """
        config = self.config
        need = sum(sizes)
        count = len(self._ids)
        random_ = self._rng.random
        start_ms = now_ms - length_ms
        # Draws with replacement, deduplicated in draw order: much cheaper than rng.sample.
        pool = dict.fromkeys(int(random_() * count) for _ in range(config.pool_size))
        available = [p for p in pool if self._free(p, start_ms)]
        if len(available) < need:
            now_ms = max(now_ms, sorted(self._busy_until)[need - 1] + length_ms)
            start_ms = now_ms - length_ms
            available = self._fallback_pool(start_ms, need)
        anchor = available[0]
        parties = [[anchor, *self._free_mates(anchor, start_ms, set())]]
        chosen = set(parties[0])
        solo: list[int] = []
        waiting: list[int] = []
        estimates = self._estimates
        target = estimates[anchor]
        for _, p in sorted((abs(estimates[q] - target), q) for q in available if q != anchor):
            if len(chosen) == need:
                break
            if p in chosen:
                continue
            mates = self._free_mates(p, start_ms, chosen)
            if not mates:
                solo.append(p)
                chosen.add(p)
            elif (
                len(parties) < len(sizes)
                and len(chosen) + 1 + len(mates) <= need
                and 1 + len(mates) <= sizes[len(parties)]
            ):
                parties.append([p, *mates])
                chosen.update(parties[-1])
            else:
                waiting.append(p)
        for p in waiting:
            if len(chosen) == need:
                break
            if p not in chosen:
                solo.append(p)
                chosen.add(p)
        return now_ms, parties, solo

    def _free_mates(self, p: int, start_ms: int, taken: set[int]) -> list[int]:
        """The members of ``p``'s party, other than ``p``, free at ``start_ms`` and not taken."""
        party = self._party[p]
        if party is None:
            return []
        return [m for m in party if m != p and m not in taken and self._free(m, start_ms)]

    def _fallback_pool(self, start_ms: int, need: int) -> list[int]:
        """Free players when the random pool came up short (small, busy or resting population).

        At least ``need`` players are out of a match at ``start_ms`` (the caller waited for them).
        """
        count = len(self._ids)
        available = [p for p in range(count) if self._free(p, start_ms)]
        if len(available) < need:
            # Too many on a break: call back the ones due back soonest.
            resting = sorted(
                (p for p in range(count) if self._busy_until[p] <= start_ms < self._break_until[p]),
                key=lambda p: (self._break_until[p], p),
            )
            for p in resting[: need - len(available)]:
                self._break_until[p] = start_ms
                available.append(p)
        return self._rng.sample(available, min(self.config.pool_size, len(available)))

    def _play(
        self, match_id: str, mode: str, now_ms: int, length_ms: int, teams: list[list[int]]
    ) -> SimulatedMatch:
        config = self.config
        rng = self._rng
        skills = self._skills
        performances = {p: performance(skills[p], rng) for team in teams for p in team}
        played = self._part_time(teams)
        # Drawn after the performances and part-time shares, so a match draws those the same
        # with and without parties: only the edge and the draws after the parties differ.
        parties = self._parties(teams)
        for party in parties:
            for p in party:
                # Noise plus skill plus edge: the same as drawing at skill + edge.
                performances[p] += config.party_edge
        team_scores = _team_scores(teams, performances, played, config)
        order = finishing_order(team_scores)
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
        seconds = length_ms / 1000.0
        stats = (
            self._stats(teams, set(quitters), seconds, performances, played)
            if config.with_stats
            else None
        )
        match = SimulatedMatch(
            match_id=match_id,
            mode=mode,
            at=now_ms / 1000.0,
            teams=tuple(tuple(ids[p] for p in team) for team in teams),
            ranks=tuple(ranks),
            stats=stats,
            quitters=frozenset(ids[p] for p in quitters),
            true_skills=MappingProxyType(truth),
            seconds=seconds,
            parties=tuple(sorted(tuple(sorted(ids[p] for p in party)) for party in parties)),
        )
        self._after_match(teams, ranks, now_ms)
        return match

    def _stats(
        self,
        teams: list[list[int]],
        quitters: set[int],
        duration: float,
        performances: Mapping[int, float],
        played: Mapping[int, float],
    ) -> Mapping[str, PlayerStats]:
        config = self.config
        rng = self._rng
        stats: dict[str, PlayerStats] = {}
        for team in teams:
            for p in team:
                if p in quitters:
                    seconds = duration * rng.uniform(0.1, 0.9)
                else:
                    seconds = duration * played.get(p, 1.0)
                rate = _POINTS_PER_MINUTE * 2.0 ** ((performances[p] - config.skill_mean) / 400.0)
                stats[self._ids[p]] = PlayerStats(
                    round(rate * seconds / 60.0, 1), float(max(1, round(seconds)))
                )
        return MappingProxyType(stats)

    def _part_time(self, teams: list[list[int]]) -> dict[int, float]:
        """The players of a team match who play only part of it, with their share (no draw
        at all without ``part_time_probability``: a seed's history stays what it was)."""
        chance = self.config.part_time_probability
        if chance == 0.0 or all(len(team) == 1 for team in teams):
            return {}
        rng = self._rng
        return {p: rng.uniform(0.2, 0.9) for team in teams for p in team if rng.random() < chance}

    def _parties(self, teams: list[list[int]]) -> list[list[int]]:
        """This match's parties: for each side of at least two players, with
        ``party_probability``, one of a size drawn uniformly in 2..side and members drawn from
        the side (no draw at all without ``party_probability``: a seed's history stays what it
        was)."""
        chance = self.config.party_probability
        if chance == 0.0:
            return []
        rng = self._rng
        return [
            rng.sample(team, rng.randint(2, len(team)))
            for team in teams
            if len(team) >= 2 and rng.random() < chance
        ]

    def _after_match(self, teams: list[list[int]], ranks: list[int], now_ms: int) -> None:
        config = self.config
        rng = self._rng
        if config.matchmaker is Matchmaker.ELO:
            means = [sum(self._rating[p] for p in team) / len(team) for team in teams]
            for team, change in zip(
                teams, elo_changes(means, ranks, config.matchmaking_k), strict=True
            ):
                for p in team:
                    self._rating[p] += change
        for team in teams:
            for p in team:
                self._games[p] += 1
                if config.drift_sd > 0.0:
                    self._eventual[p] += rng.gauss(0.0, config.drift_sd)
                skill = self._eventual[p] - self._deficit[p] * math.exp(
                    -self._games[p] / config.learning_matches
                )
                self._skills[p] = skill
                self._skill_by_id[self._ids[p]] = skill
                self._estimates[p] = self._view(p)
                self._busy_until[p] = now_ms
                if rng.random() < config.break_probability:
                    days = rng.expovariate(1.0 / config.break_days)
                    self._break_until[p] = now_ms + round(days * _MS_PER_DAY)


def simulate(config: SimulationConfig) -> Iterator[SimulatedMatch]:
    """The matches of a fresh :class:`Simulator` run, in time order."""
    return iter(Simulator(config))


def _team_scores(
    teams: list[list[int]],
    performances: Mapping[int, float],
    played: Mapping[int, float],
    config: SimulationConfig,
) -> list[float]:
    """Each team's performance (stream.simulation.outcome), part-time players at their share."""
    carry, edge = config.carry, config.extra_player_edge
    if not played:
        mean_size = sum(len(team) for team in teams) / len(teams)
        return [
            team_performance([performances[p] for p in team], carry, edge, mean_size)
            for team in teams
        ]
    shares = [[played.get(p, 1.0) for p in team] for team in teams]
    mean_size = sum(sum(row) for row in shares) / len(teams)
    return [
        team_performance([performances[p] for p in team], carry, edge, mean_size, row)
        for team, row in zip(teams, shares, strict=True)
    ]
