"""The soak harness's plan for one seed (pure, seeded): the traffic and where each kill lands.

A seed's run is a sequence of waves of matches (no player twice in a wave; the next wave goes
out once the last is rated, so the live ratings must equal an offline replay) with kills at
planned waves. Every kill is one of :data:`PHASES`, the moments of a worker's life a crash can
interrupt (docs/guarantees.md, "What a crash can interrupt"):

- ``early``: a SIGKILL from outside, 0-2.5 s after the worker became ready and 0-0.5 s after a
  wave went out: before the worker's first commit, with the wave in flight (a victim already
  older, which rated the waves before, is first stopped cleanly and its successor killed);
- ``soon-after``: the same, 0.5-5 s after the replacement of the previous kill became ready;
- the crash points (stream/pipeline/crashpoints.py): the worker is started with
  ``SKILLSTREAM_CRASH_AT=point:n`` and kills itself the n-th time it passes the point, exactly
  between two effects: ``processed`` (mid-batch, nothing sent), ``delivering`` (outputs handed
  to the producer, not acked), ``written`` (outputs acked, state held, before the changelog
  flush), ``flushing`` (one table's changelog writes sent, the others not), ``flushed``
  (changelogs written, offsets not committed), ``committed`` (right after a commit);
- ``rebalance``: a second worker joins while the first is armed at ``revoked``: the first dies
  inside the rebalance, after flushing its held writes and before its partitions go.

Each wave's publication is drawn too: starts then finishes, finishes first, shuffled, with
duplicates; matches that end at their start (instant), last a minute, or last longer than the
grace period for abandonment (then results wait for the abandon watermarks).

Each seed also draws the deployment around the kills (issue 44: an outside check broke the crash
promise on every seed with what the soak never drew): the workers' environment, the local
stack's (4 partitions, a 4 s session) or the one an operator gives them (the servers' addresses
and the deployment's names only: 8 partitions, the default 6 s session, every other default);
waves 1,000 s of event time apart, or as far apart as the match side's retention (an hour: each
wave's matches are forgotten as the next arrives); the first wave published before the first
worker is ready, or after; and a fleet that keys its events by match id (murmur2, as Java
clients), or one that puts them anywhere (most land off their match's home partition and are
forwarded there).

The phases are dealt so that any run of ``len(PHASES)`` consecutive seeds covers every phase
at least once; the rest of each seed's draws come from ``random.Random(seed)``.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = [
    "ENVIRONMENTS",
    "PHASES",
    "POINT_PHASES",
    "Kill",
    "SoakPlan",
    "WaveStyle",
    "plan_seed",
]

POINT_PHASES = ("processed", "delivering", "written", "flushing", "flushed", "committed")
PHASES = ("early", *POINT_PHASES, "soon-after", "rebalance")

# The orders a wave's events may go out in, and how long its matches last.
ORDERS = ("starts-first", "finishes-first", "shuffled", "duplicated")
DURATIONS = (0.0, 60.0, 180.0)  # instant, a minute, longer than the 60 s grace period
# The workers' environment: the local stack's, or what an operator gives a worker.
ENVIRONMENTS = ("local", "operator")
# Event time between waves: well apart, or the match side's retention (its default).
GAPS = (1000.0, 3600.0)


@dataclass(frozen=True, slots=True)
class WaveStyle:
    order: str
    duration: float


@dataclass(frozen=True, slots=True)
class Kill:
    """One kill: before wave ``wave`` is published (time phases) or armed on the worker that
    rates it (crash points, ``n``-th passage). ``delay``: seconds after the wave went out;
    ``age``: seconds after the victim was ready, at least."""

    phase: str
    wave: int
    n: int = 1
    delay: float = 0.0
    age: float = 0.0

    @property
    def crash_at(self) -> str | None:
        """SKILLSTREAM_CRASH_AT for the victim (None: killed from outside)."""
        if self.phase in POINT_PHASES:
            return f"{self.phase}:{self.n}"
        if self.phase == "rebalance":
            return "revoked:1"
        return None

    def describe(self) -> str:
        if self.crash_at is not None:
            return f"{self.phase} at wave {self.wave} ({self.crash_at})"
        return (
            f"{self.phase} at wave {self.wave} ({self.age:.1f} s after ready, "
            f"+{self.delay:.2f} s after the wave)"
        )


@dataclass(frozen=True)
class SoakPlan:
    """``waves``: the planned waves, then as many spare ones, published only while a kill has
    not landed yet (kills land in plan order, a crash point when the worker gets there)."""

    seed: int
    players: int
    team_size: int
    waves: list[WaveStyle]
    kills: list[Kill] = field(default_factory=list)
    planned: int = 0
    environment: str = "local"
    gap: float = 1000.0
    early_publish: bool = False
    keyed: bool = True

    def describe(self) -> str:
        sizes = f"{self.players // (2 * self.team_size)} matches of {self.team_size}v"
        sizes += f"{self.team_size} per wave"
        setup = (
            f"{self.environment} environment, waves {self.gap:g} s apart"
            + (", the first before the worker is ready" if self.early_publish else "")
            + ("" if self.keyed else ", events on any partition")
        )
        return f"seed {self.seed}: {len(self.waves)} waves, {sizes}, {setup}; kills: " + ", ".join(
            k.describe() for k in self.kills
        )


def plan_seed(
    seed: int,
    kills: int = 3,
    waves_between: int = 2,
    *,
    phases: Sequence[str] | None = None,
    matches: int | None = None,
    team_size: int | None = None,
    order: str | None = None,
    environment: str | None = None,
) -> SoakPlan:
    """The plan of seed ``seed``: ``kills`` kills, each followed by ``waves_between`` waves
    without one (the stream must go on after a kill; a soon-after kill comes at the next wave),
    and two quiet waves at each end. ``phases`` (one per kill), ``matches`` per wave,
    ``team_size``, every wave's ``order`` and the workers' ``environment`` replace what the seed
    would draw."""
    if kills < 1 or waves_between < 1:
        raise ValueError(f"need kills >= 1 and waves_between >= 1, got {kills}, {waves_between}")
    if phases is not None and (len(phases) != kills or not set(phases) <= set(PHASES)):
        raise ValueError(
            f"phases: need {kills} (one per kill) among {', '.join(PHASES)}, got {','.join(phases)}"
        )
    if environment is not None and environment not in ENVIRONMENTS:
        raise ValueError(
            f"environment: must be one of {', '.join(ENVIRONMENTS)}, got {environment!r}"
        )
    if order is not None and order not in ORDERS:
        raise ValueError(f"order: must be one of {', '.join(ORDERS)}, got {order!r}")
    if (matches is not None and matches < 1) or (team_size is not None and team_size < 1):
        raise ValueError(f"matches and team size must be at least 1, got {matches}, {team_size}")
    rng = random.Random(seed)
    drawn_size = rng.choice((1, 1, 1, 2))
    drawn_matches = rng.randint(8, 15)
    size = drawn_size if team_size is None else team_size
    players = 2 * size * (drawn_matches if matches is None else matches)
    if phases is None:
        phases = [PHASES[(seed + i) % len(PHASES)] for i in range(kills)]
    phases = list(phases)
    # A soon-after kill hits the replacement of a kill: it never comes first.
    if phases[0] == "soon-after":
        phases = ["early"] if kills == 1 else [phases[1], phases[0], *phases[2:]]
    planned: list[Kill] = []
    wave = 2
    for phase in phases:
        if phase == "soon-after" and planned:
            # Right after the previous kill's replacement: no quiet waves in between.
            wave = planned[-1].wave + 1
        n = rng.randint(1, 4) if phase in POINT_PHASES else 1
        delay = round(rng.uniform(0.0, 0.5), 3)
        age = rng.uniform(0.5, 5.0) if phase == "soon-after" else rng.uniform(0.0, 2.5)
        planned.append(Kill(phase, wave, n=n, delay=delay, age=round(age, 3)))
        wave += 1 + waves_between
    count = wave + 2
    styles = [
        WaveStyle(rng.choice(ORDERS) if order is None else order, rng.choice(DURATIONS))
        for _ in range(2 * count)
    ]
    # Drawn from a generator of their own: the draws above stay what they were for a seed.
    setup = random.Random(seed * 31 + 7)
    drawn_environment = setup.choice(ENVIRONMENTS)
    return SoakPlan(
        seed,
        players,
        size,
        styles,
        planned,
        count,
        environment=drawn_environment if environment is None else environment,
        gap=setup.choice(GAPS),
        early_publish=setup.random() < 0.3,
        keyed=setup.random() < 0.6,
    )


# Event time of the first wave; each wave starts the plan's gap after the one before, later than
# any match of it ends, so a player's matches never overlap.
T0 = 1_780_000_000.0
MODE = "soak"


@dataclass(frozen=True, slots=True)
class SoakMatch:
    match_id: str
    teams: tuple[tuple[str, ...], ...]
    ranks: tuple[int, int]
    started_at: float
    finished_at: float

    def events(self) -> tuple[dict[str, object], dict[str, object]]:
        """(match-started, match-finished); the finish carries the line-up too, so one read
        before its start can be checked against it."""
        teams = [list(team) for team in self.teams]
        start = {
            "match_id": self.match_id,
            "mode": MODE,
            "started_at": round(self.started_at * 1000),
            "teams": teams,
        }
        finish = {
            "match_id": self.match_id,
            "mode": MODE,
            "finished_at": round(self.finished_at * 1000),
            "teams": teams,
            "ranks": list(self.ranks),
        }
        return start, finish

    def history_line(self) -> dict[str, object]:
        """The match as `skillstream replay` reads it (a match-finished JSON line)."""
        start, finish = self.events()
        return {**finish, "started_at": start["started_at"]}


def plan_matches(plan: SoakPlan) -> list[list[SoakMatch]]:
    """Every wave's matches: all players, shuffled into teams, each match with a seeded winner
    (a tenth are draws); the same plan gives the same matches."""
    rng = random.Random(plan.seed * 7919 + 1)
    players = [f"s{plan.seed}p{i:03d}" for i in range(plan.players)]
    waves: list[list[SoakMatch]] = []
    for w, style in enumerate(plan.waves):
        order = list(players)
        rng.shuffle(order)
        size = plan.team_size
        wave = []
        for k in range(len(order) // (2 * size)):
            group = order[2 * size * k : 2 * size * (k + 1)]
            teams = (tuple(sorted(group[:size])), tuple(sorted(group[size:])))
            draw = rng.random() < 0.1
            ranks = (0, 0) if draw else rng.choice(((0, 1), (1, 0)))
            start = T0 + w * plan.gap + k * 0.01
            wave.append(
                SoakMatch(f"s{plan.seed}w{w}m{k:02d}", teams, ranks, start, start + style.duration)
            )
        waves.append(wave)
    return waves


def wave_events(
    wave: list[SoakMatch], style: WaveStyle, rng: random.Random
) -> list[tuple[str, dict[str, object]]]:
    """The wave's events in the order the style gives ("started" or "finished", event)."""
    starts = [("started", m.events()[0]) for m in wave]
    finishes = [("finished", m.events()[1]) for m in wave]
    if style.order == "finishes-first":
        return finishes + starts
    if style.order == "shuffled":
        events = starts + finishes
        rng.shuffle(events)
        return events
    if style.order == "duplicated":
        again = [e for e in starts + finishes if rng.random() < 0.5]
        return starts + finishes + again
    return starts + finishes
