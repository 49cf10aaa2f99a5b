"""Offline rating of a match history with the same engine the live workers use.

Matches apply in file order, each against the participants' states just before it, which is
what the live pipeline computes for matches that do not overlap in time.
"""

from __future__ import annotations

from collections import ChainMap
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from stream.config.modes import Modes
from stream.history import HistoryMatch, SeedRating, play_order
from stream.offline.learning import PopulationLearner, window_start
from stream.ratings.carryover import started_from, starting_state
from stream.ratings.engine import (
    MatchView,
    PlayerUpdate,
    duel_states,
    initial_state,
    match_parties,
    match_shares,
    rate_match,
    rate_player,
)
from stream.ratings.modeconfig import ModeConfig
from stream.ratings.population import Population
from stream.ratings.population.evidence import add_rated_duel, played_skills, rate_settled
from stream.ratings.probability import team_win_probability
from stream.ratings.resolution import rated_players
from stream.ratings.settling import Fate, Settled, fate, superseding_starts
from stream.ratings.skill import PlayerState
from stream.ratings.teams import score_against

if TYPE_CHECKING:
    from stream.corrections.effects import Refund

DEFAULT_MODE = "default"

# Asked for each rated player of a match (mode, player, teams, ranks, time): the refund that
# undoes their result, or None (stream.corrections.ledger.Ledger.refund_of).
RefundOf = Callable[[str, str, tuple[tuple[str, ...], ...], Sequence[int], float], "Refund | None"]
_NO_REFUNDS: dict[str, Refund] = {}


@dataclass(frozen=True, slots=True)
class FinalRating:
    """One line of replay output: a player's state in one mode."""

    player_id: str
    mode: str
    state: PlayerState

    def to_json(self) -> dict[str, object]:
        s = self.state
        out: dict[str, object] = {
            "player_id": self.player_id,
            "mode": self.mode,
            "rating": s.rating,
            "deviation": s.deviation,
        }
        if s.volatility is not None:
            out["volatility"] = s.volatility
        out["rank_points"] = s.rank_points
        out["games"] = s.games
        return out


class Replayer:
    """Holds every (mode, player) state and applies matches to them in order.

    ``mode_override`` rates every match as that mode (``--mode``); otherwise a match's own mode
    is used, ``default`` when the history has none. ``seeds`` give starting states, keyed by
    (player, mode) or (player, None) for every mode.
    """

    def __init__(
        self,
        modes: Modes,
        mode_override: str | None = None,
        seeds: Iterable[SeedRating] = (),
    ) -> None:
        self._modes = modes
        self._override = mode_override
        self._tables: dict[str, dict[str, PlayerState]] = {}
        self._known: dict[str, tuple[ModeConfig, dict[str, PlayerState]]] = {}
        self._learners: dict[str, PopulationLearner] = {}
        self._seeds: dict[tuple[str, str | None], SeedRating] = {
            (s.player_id, s.mode): s for s in seeds
        }
        # Set by a corrections file with refunds (stream.offline.corrected): each rated
        # player's result is asked about, and a refunded one's state is left as it was.
        self.refund_of: RefundOf | None = None
        # The players of the match applied last whose result was refunded, each with it.
        self.refunded: Mapping[str, Refund] = _NO_REFUNDS

    @property
    def seeds(self) -> Iterable[SeedRating]:
        """The seed ratings it starts players from."""
        return self._seeds.values()

    @property
    def mode_choice(self) -> tuple[Modes, str | None]:
        """The modes rated with, and the mode every match is forced into (or None)."""
        return self._modes, self._override

    def mode_name(self, match: HistoryMatch) -> str:
        """The mode ``match`` is rated in: ``--mode``, else its own, else ``default``."""
        return self._override or match.mode or DEFAULT_MODE

    def mode_of(self, match: HistoryMatch) -> tuple[str, ModeConfig, dict[str, PlayerState]]:
        return self._mode_named(self._override or match.mode or DEFAULT_MODE)

    def _mode_named(self, name: str) -> tuple[str, ModeConfig, dict[str, PlayerState]]:
        known = self._known.get(name)
        if known is None:
            known = self._known[name] = (self._modes.get(name), {})
            self._tables[name] = known[1]
            self._learners[name] = PopulationLearner(known[0])
        return name, known[0], known[1]

    def adjust(
        self, player_id: str, mode: str, change: Callable[[ModeConfig, PlayerState], PlayerState]
    ) -> tuple[ModeConfig, PlayerState, PlayerState]:
        """Replace ``player_id``'s state in ``mode`` (a new player: the mode's initial state,
        or their seed) by ``change(mode config, state)``: an operator's adjustment. Returns
        the mode's configuration and the states before and after."""
        name, config, table = self._mode_named(mode)
        state = table.get(player_id)
        if state is None:
            seed = self._seed_of(player_id, name)
            state = initial_state(config) if seed is None else seeded_state(config, seed)
        after = table[player_id] = change(config, state)
        return config, state, after

    def population_of(self, match: HistoryMatch) -> Population:
        """The population in force for ``match`` in its mode: its start's window's (a window's
        first match folds the windows two before it: stream.offline.learning)."""
        name = self._override or match.mode or DEFAULT_MODE
        learner = self._learners.get(name)
        if learner is None:
            self.mode_of(match)
            learner = self._learners[name]
        return learner.at(window_start(match.started_at, match.at))

    @property
    def learners(self) -> Mapping[str, PopulationLearner]:
        """Each mode's population learner (what it learned, window by window)."""
        return self._learners

    def state_before(self, match: HistoryMatch, player_id: str) -> PlayerState | None:
        """``player_id``'s stored state in ``match``'s mode just before it (a seed applied as
        :meth:`apply` would), None for a player the mode has not seen."""
        name, mode, table = self.mode_of(match)
        return self._states(name, mode, table, match).get(player_id)

    def rules_of(self, match: HistoryMatch) -> ModeConfig:
        """The rules ``match`` was rated with: its mode with the population in force."""
        return self.population_of(match).rules(self.mode_of(match)[1])

    def apply(self, match: HistoryMatch) -> dict[str, PlayerUpdate]:
        """Rate ``match`` and store the new states; returns the updates by player id."""
        return self._apply(match, *self.mode_of(match))

    def _apply(
        self, match: HistoryMatch, name: str, mode: ModeConfig, table: dict[str, PlayerState]
    ) -> dict[str, PlayerUpdate]:
        """:meth:`apply` in the mode ``name`` (its configuration and its table)."""
        states = self._states(name, mode, table, match)
        learner = self._learners[name]
        # The mode with its population in force: rate_player(mode, ..., population) as one
        # object, resolved once for the whole match (a mode that does not learn is its own).
        population = (
            learner.at(window_start(match.started_at, match.at)) if learner.learns else None
        )
        rules = mode if population is None else learner.rules
        if match.quitters:
            plan = rated_players(rules, match.teams, match.quitters)
            get = states.get
            updates = {
                pid: rate_player(rules, pid, get(pid), match, states, forced)
                for pid, forced in plan.items()
            }
        else:
            updates = rate_match(rules, match, states)
        held = self._held(match, name, updates, None)
        if population is not None:
            learner.observe(
                population,
                rules,
                match.teams,
                match.ranks,
                match.at,
                states,
                updates,
                as_played=not match.quitters,
                # Without quitters, rate_match rated the match from these states.
                rated_here=not match.quitters,
                held=held,
                played=match_shares(rules, match),
                parties=match.parties,
            )
        # Written back only after everyone is rated: each player meets the others' old states.
        for pid, update in updates.items():
            if pid not in held:
                table[pid] = update.state
        return updates

    def _held(
        self,
        match: HistoryMatch,
        name: str,
        rated: Iterable[str],
        fates: Mapping[str, Fate] | None,
    ) -> Mapping[str, Refund]:
        """The ``rated`` players of ``match`` whose result a refund undoes, each with it (also
        kept as :attr:`refunded`). A player settled by an abandonment or a timeout is asked
        as the worker rates them: the ranks all equal, at the time of that fate."""
        ask = self.refund_of
        if ask is None:
            return _NO_REFUNDS
        teams, ranks = match.teams, match.ranks
        held: dict[str, Refund] = {}
        for pid in rated:
            fated = None if fates is None else fates.get(pid)
            if fated is None or fated.how is Settled.RESULT:
                found = ask(name, pid, teams, ranks, match.at)
            else:
                found = ask(name, pid, teams, (0,) * len(teams), fated.at)
            if found is not None:
                held[pid] = found
        self.refunded = held
        return held

    def rate(self, match: HistoryMatch) -> None:
        """:meth:`apply` without the updates: the same states and the same evidence. A duel
        without quitters in a mode that learns its drift (the built-in defaults), between
        players the mode knows or without seeds or a start from another mode, takes
        :func:`~stream.ratings.engine.duel_states` and builds none of the updates, results and
        skills nobody reads: replay's hot path."""
        name, mode, table = self.mode_of(match)
        # With refunds, every match takes apply: the duel's path rates both players at once.
        if self.refund_of is not None or not self._rated_duel(match, name, mode, table):
            self._apply(match, name, mode, table)

    def _rated_duel(
        self, match: HistoryMatch, name: str, mode: ModeConfig, table: dict[str, PlayerState]
    ) -> bool:
        """:meth:`rate`'s duel, done (True), or False when ``match`` is not one it takes."""
        learner = self._learners[name]
        teams = match.teams
        if (
            not learner.learns
            or match.quitters
            or len(teams) != 2
            or len(teams[0]) != 1
            or len(teams[1]) != 1
        ):
            return False
        (a,), (b,) = teams
        state_a = table.get(a)
        state_b = table.get(b)
        # A newcomer may take a seed or a start from another mode (_states): apply does that.
        plain = (state_a is not None and state_b is not None) or (
            not self._seeds and mode.start is None
        )
        if not plain or a == b:
            return False
        population = learner.at(window_start(match.started_at, match.at))
        rules = learner.rules
        drift = rules.drift
        if drift is None:
            return False
        score_a = score_against(*match.ranks)
        after_a, after_b, seen, moves = duel_states(
            rules, drift, state_a, state_b, score_a, match.at
        )
        add_rated_duel(
            learner.open_sums(),
            rules,
            population,
            drift,
            (state_a, state_b),
            (after_a, after_b),
            seen,
            score_a,
            moves,
        )
        table[a] = after_a
        table[b] = after_b
        return True

    def apply_settled(
        self, match: HistoryMatch, fates: Mapping[str, Fate]
    ) -> dict[str, PlayerUpdate]:
        """Rate ``match`` as the live pipeline settles it (:mod:`stream.ratings.settling`): a player
        whose fate is an abandonment or a timeout takes a loss at that fate's time, without the
        result's ranks or stats; the others are rated from the result."""
        if all(f.how is Settled.RESULT for f in fates.values()):
            return self.apply(match)
        name, mode, table = self.mode_of(match)
        states = self._states(name, mode, table, match)
        learner = self._learners[name]
        # One population for the whole match, the one of its start's window.
        population = learner.at(window_start(match.started_at, match.at))
        mode = population.rules(mode)
        view = MatchView(match.teams, match.ranks, match.at, match.stats, match.parties)
        updates = rate_settled(mode, view, match.quitters, states, fates)
        held = self._held(match, name, updates, fates)
        # Evidence only from a result that settles someone, as a worker counts it (a match
        # whose players all timed out or were abandoned first is not one).
        if learner.learns and any(f.how is Settled.RESULT for f in fates.values()):
            learner.observe(
                population,
                mode,
                match.teams,
                match.ranks,
                match.at,
                states,
                updates,
                as_played=False,
                held=held,
                # What the worker passes (verdicts.py); unread without a prediction.
                played=match_shares(mode, match),
                parties=match.parties,
            )
        for pid, update in updates.items():
            if pid not in held:
                table[pid] = update.state
        return updates

    def predict(self, match: HistoryMatch) -> list[tuple[float, float]]:
        """(probability that team i beats team j, actual score) for every pair of teams, each
        player at their rating plus their experience offset (and the party edge for a member of
        a party), as the update sees them."""
        name, mode, table = self.mode_of(match)
        states = self._states(name, mode, table, match)
        rules = self.population_of(match).rules(mode)
        teams = played_skills(rules, states, match.teams, match.at, match_parties(rules, match))
        algorithm = rules.algorithm
        strategy = rules.team_rule
        edge = rules.population.size_edge
        decisiveness = rules.population.decisiveness
        ranks = match.ranks
        return [
            (
                team_win_probability(algorithm, teams[i], teams[j], strategy, edge, decisiveness),
                score_against(ranks[i], ranks[j]),
            )
            for i in range(len(teams))
            for j in range(i + 1, len(teams))
        ]

    def _seed_of(self, player_id: str, mode: str) -> SeedRating | None:
        """The player's seed for ``mode``, or their seed for every mode."""
        return self._seeds.get((player_id, mode)) or self._seeds.get((player_id, None))

    def _states(
        self, name: str, mode: ModeConfig, table: dict[str, PlayerState], match: HistoryMatch
    ) -> Mapping[str, PlayerState]:
        """The states ``match`` is rated from: the mode's table, a seed stored for each
        participant new to it, and over them, for a mode that starts from another, a new
        participant's start from their state there now (never stored: the live worker too
        derives it afresh until the player's first rating in the mode is stored)."""
        seeds = self._seeds
        start = mode.start
        if not seeds and start is None:
            # Nearly every replay and evaluation: nothing to look up per participant.
            return table
        started: dict[str, PlayerState] = {}
        for team in match.teams:
            for pid in team:
                if pid in table:
                    continue
                seed = self._seed_of(pid, name) if seeds else None
                if seed is not None:
                    table[pid] = seeded_state(mode, seed)
                elif start is not None:
                    source = self._mode_named(start.from_mode)[2].get(pid)
                    if source is not None:
                        started[pid] = started_from(mode, source)
        return ChainMap(started, table) if started else table

    def ratings(self) -> Iterator[FinalRating]:
        """Final states, by mode name, then rating from the top."""
        for name in sorted(self._tables):
            table = self._tables[name]
            for pid in sorted(table, key=lambda p: (-table[p].rating, p)):
                yield FinalRating(pid, name, table[pid])

    @property
    def tables(self) -> Mapping[str, Mapping[str, PlayerState]]:
        return self._tables


def seeded_state(mode: ModeConfig, seed: SeedRating) -> PlayerState:
    """A migrated player's starting state; Rank Points start at the seed's functional rating.

    Games: the seed's; a seed without any is an established player (the experience term's
    settled games, so the term does not take a migrated ladder for debutants; ``replay
    --seed-games new`` gives such seeds 0 games before they get here). The values are held to
    the mode's bounds (a deviation no larger than a new player's, then
    :func:`stream.ratings.carryover.starting_state`), so no seed can carry the engine outside
    the ranges it is proven finite on: stream.offline.seeding refuses or reports every seed
    this changes before anything is rated.
    """
    fresh = initial_state(mode)
    # Algorithms without a deviation or a volatility ignore the seed's.
    deviation = fresh.deviation
    if seed.deviation is not None and fresh.deviation > 0.0:
        deviation = min(seed.deviation, fresh.deviation)
    volatility = fresh.volatility
    if seed.volatility is not None and fresh.volatility is not None:
        volatility = seed.volatility
    games = mode.experience.settled_games if seed.games is None else seed.games
    return starting_state(mode, seed.rating, deviation, volatility, games, None)


def in_play_order(
    matches: Iterable[HistoryMatch], replayer: Replayer
) -> Iterator[tuple[HistoryMatch, dict[str, Fate]]]:
    """``matches`` in the live pipeline's order of play (by start where the history has it, by
    finish otherwise: :func:`stream.history.play_order`), each with every player's fate by the
    live rule (:func:`stream.ratings.settling.fate`): with starts known, a player whose next match
    started more than the grace period before this one's result is scored as abandoning it,
    and a result after the timeout times the match out. Reads the whole history first."""
    ordered = sorted(
        matches,
        key=lambda m: play_order(m.at if m.started_at is None else m.started_at, m.match_id),
    )
    superseded = superseding_starts(
        (m.match_id, m.started_at, m.teams) for m in ordered if m.started_at is not None
    )
    modes, override = replayer.mode_choice
    for match in ordered:
        started_at = match.started_at
        fates: dict[str, Fate] = {}
        if started_at is None:
            fates = {pid: Fate(Settled.RESULT, match.at) for team in match.teams for pid in team}
        else:
            pending = modes.pending(override or match.mode or DEFAULT_MODE)
            for team in match.teams:
                for pid in team:
                    found = fate(
                        started_at,
                        match.at,
                        superseded.get((pid, match.match_id)),
                        grace_seconds=pending.grace_seconds,
                        timeout_seconds=pending.timeout_seconds,
                    )
                    assert found is not None  # a match with a result is always decided
                    fates[pid] = found
        yield match, fates
