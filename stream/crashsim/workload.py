"""What a schedule's game fleet plays and publishes, and what an offline replay of it rates.

Matches come in waves: each wave's matches start at one event time (1v1, teams of two or
three, free-for-all of three to five, in three modes that all learn their population), no
player in two matches of a wave and every match over before its players' next wave, so the
history is one whose live ratings must equal ``skillstream replay --in-play-order`` exactly
(docs/event-time.md). Waves follow one another a second, a minute, an hour or thirteen hours
apart in event time: idle hours close learning windows and move event time in leaps.

Each wave goes out in a style drawn for it: every start then every finish, each match's start
and finish together, finishes first, all shuffled, or finishes only (no match-started at all);
some events twice; some on a partition other than their match's (forwarded home). Half the
squad matches say how long each player played, some of them part of it (part-time play:
stream.ratings.parttime), and half name a party (stream.ratings.parties), each drawn from the
match's id so that the schedules drawn before these were added draw the same waves.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import dataclass

import orjson

from stream.config.modes import Modes
from stream.history import HistoryMatch
from stream.offline.replayer import Replayer, in_play_order
from stream.pipeline.partitioning import partition_for
from stream.ratings.parties import Parties
from stream.ratings.skill import PlayerState, PlayerStats

__all__ = ["Publication", "Workload", "draw_workload", "mixed"]

# 2026-03-01T00:00:00Z, far from the simulated wall clock (a year later), as real fleets'
# events are from a worker's clock after a backlog.
T0 = 1_772_323_200.0
MODES = ("duel", "squad", "ffa")
GAPS = (1.0, 60.0, 3600.0, 13 * 3600.0)
DURATIONS = (0.0, 0.0, 60.0, 180.0)
STYLES = ("starts-first", "together", "finishes-first", "shuffled", "finishes-only")


@dataclass(frozen=True, slots=True)
class Publication:
    """One event as the fleet publishes it: its topic and partition, and its bytes."""

    topic: str
    partition: int
    value: bytes


@dataclass
class Workload:
    """The matches (as the replay reads them) and the waves of events that publish them."""

    matches: list[HistoryMatch]
    waves: list[list[Publication]]
    styles: list[str]

    def expected(
        self, modes: Modes
    ) -> tuple[set[tuple[str, str]], Mapping[str, Mapping[str, PlayerState]]]:
        """What an offline replay in the order of play rates: every (player, match), and every
        player's final state per mode."""
        replayer = Replayer(modes)
        pairs: set[tuple[str, str]] = set()
        for match, fates in in_play_order(self.matches, replayer):
            for pid in replayer.apply_settled(match, fates):
                pairs.add((pid, match.match_id))
        return pairs, replayer.tables


def draw_workload(
    rng: random.Random,
    *,
    partitions: int,
    started_topic: str,
    finished_topic: str,
    players: int,
    waves: int,
    duplicates: float,
    misrouted: float,
) -> Workload:
    """A workload drawn from ``rng``: ``players`` players, ``waves`` waves; ``duplicates``:
    each event's chance to go out twice; ``misrouted``: its chance to land on a partition
    other than its match's."""
    names = [f"p{i:02d}" for i in range(players)]
    matches: list[HistoryMatch] = []
    out: list[list[Publication]] = []
    styles: list[str] = []
    at = T0
    for w in range(waves):
        at += rng.choice(GAPS)
        duration = rng.choice(DURATIONS)
        style = rng.choice(STYLES)
        pool = names[:]
        rng.shuffle(pool)
        wave_matches: list[HistoryMatch] = []
        while pool:
            mode = rng.choice(MODES)
            size, teams_n = {"duel": (1, 2), "squad": (rng.choice((2, 3)), 2), "ffa": (1, 0)}[mode]
            if mode == "ffa":
                teams_n = rng.randint(3, 5)
            need = size * teams_n
            if len(pool) < need:
                if len(pool) < 2:
                    break
                mode, size, teams_n = "duel", 1, 2
                need = 2
            chosen, pool = pool[:need], pool[need:]
            teams = tuple(tuple(chosen[i * size : (i + 1) * size]) for i in range(teams_n))
            ranks = list(range(teams_n))
            rng.shuffle(ranks)
            if teams_n == 2 and rng.random() < 0.15:
                ranks = [0, 0]
            match_id = f"w{w}-m{len(wave_matches)}"
            finished = at + duration
            wave_matches.append(
                HistoryMatch(
                    0,
                    match_id,
                    mode,
                    finished,
                    teams,
                    tuple(ranks),
                    _played(match_id, teams) if mode == "squad" else None,
                    frozenset(),
                    None if style == "finishes-only" else at,
                    _queued(match_id, teams) if mode == "squad" else None,
                )
            )
        matches.extend(wave_matches)
        styles.append(style)
        out.append(
            _publications(
                rng,
                wave_matches,
                style,
                partitions,
                started_topic,
                finished_topic,
                duplicates,
                misrouted,
            )
        )
        at += duration
    return Workload(matches, out, styles)


def mixed(
    waves: list[list[Publication]], window: int, rng: random.Random
) -> list[list[Publication]]:
    """``waves`` with the events of each ``window`` consecutive waves shuffled together and
    dealt back into those waves' slots, as many to each as it had: a fleet whose events reach
    the broker in no particular order across matches (starts after their players' next
    matches, finishes before their starts), the late starts a backlog of them is made of."""
    out: list[list[Publication]] = []
    for first in range(0, len(waves), window):
        group = waves[first : first + window]
        pooled = [event for wave in group for event in wave]
        rng.shuffle(pooled)
        for wave in group:
            out.append(pooled[: len(wave)])
            pooled = pooled[len(wave) :]
    return out


def _publications(
    rng: random.Random,
    matches: list[HistoryMatch],
    style: str,
    partitions: int,
    started_topic: str,
    finished_topic: str,
    duplicates: float,
    misrouted: float,
) -> list[Publication]:
    starts: list[Publication] = []
    finishes: list[Publication] = []

    def where(match_id: str) -> int:
        home = partition_for(match_id, partitions)
        if partitions > 1 and rng.random() < misrouted:
            return rng.choice([p for p in range(partitions) if p != home])
        return home

    for match in matches:
        teams = [list(team) for team in match.teams]
        if match.started_at is not None:
            start = {
                "match_id": match.match_id,
                "mode": match.mode,
                "started_at": _stamp(match.started_at),
                "teams": teams,
            }
            starts.append(Publication(started_topic, where(match.match_id), orjson.dumps(start)))
        finish: dict[str, object] = {
            "match_id": match.match_id,
            "mode": match.mode,
            "finished_at": _stamp(match.at),
            "teams": teams,
            "ranks": list(match.ranks),
        }
        if match.stats is not None:
            finish["stats"] = {
                p: {"score": s.score, "seconds": s.seconds} for p, s in match.stats.items()
            }
        if match.parties is not None:
            finish["parties"] = [list(party) for party in match.parties]
        finishes.append(Publication(finished_topic, where(match.match_id), orjson.dumps(finish)))
    if style == "together":
        events = [e for pair in zip(starts, finishes, strict=True) for e in pair]
    elif style == "finishes-first":
        events = finishes + starts
    elif style == "shuffled":
        events = starts + finishes
        rng.shuffle(events)
    else:  # starts-first, finishes-only (no starts)
        events = starts + finishes
    twice = [e for e in events if rng.random() < duplicates]
    return events + twice


def _played(match_id: str, teams: tuple[tuple[str, ...], ...]) -> dict[str, PlayerStats] | None:
    """Half the squad matches' stats: 600 seconds each, a third of the players only part of
    them (from their own generator, seeded with the match's id: the schedule's draws stay as
    they were)."""
    rng = random.Random(match_id)
    if rng.random() < 0.5:
        return None
    return {
        pid: PlayerStats(10.0, 600.0 if rng.random() < 0.67 else float(rng.randint(30, 540)))
        for team in teams
        for pid in team
    }


def _queued(match_id: str, teams: tuple[tuple[str, ...], ...]) -> Parties | None:
    """Half the squad matches' parties: the first side's first two players, and the whole
    second side in half of those (from their own generator, seeded with the match's id and
    apart from the stats': the schedule's draws stay as they were)."""
    rng = random.Random(f"{match_id} parties")
    if rng.random() < 0.5:
        return None
    first, second = teams
    return (first[:2], second) if rng.random() < 0.5 else (first[:2],)


def _stamp(at: float) -> int:
    """Event time as epoch milliseconds (the events' integer form)."""
    return round(at * 1000)
