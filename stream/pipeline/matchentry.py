"""A match entry's pure helpers: how an entry is made, read, split and checked, and when it is
next due. No outbox, no table, no partition: the match side (stream/pipeline/matches.py)
decides with these and applies the effects itself."""

from __future__ import annotations

import dataclasses
from enum import Enum

from stream.config.modes import PendingConfig
from stream.deadletters import DeadLetter
from stream.protocol import Finish, MatchEntry, Waiting
from stream.ratings.parties import Parties

__all__ = [
    "Due",
    "copied",
    "due",
    "early_entry",
    "is_early",
    "lineup",
    "missing",
    "missing_snapshots",
    "new_entry",
    "next_deadline",
    "result_problem",
    "split_early",
    "stand_in",
    "tuples",
    "waiting_letter",
]


def new_entry(
    mode: str,
    teams: tuple[tuple[str, ...], ...] | None,
    started_at: float | None,
    early: MatchEntry | None = None,
) -> MatchEntry:
    """A new entry; with what ``early`` (an early entry's share, :func:`split_early`) holds of
    commands read before the start."""
    entry = MatchEntry(
        mode=mode,
        teams=None if teams is None else [list(team) for team in teams],
        start=started_at,
    )
    if early is not None:
        entry.snaps = dict(early.snaps)
        entry.lines = dict(early.lines)
        entry.abandons = dict(early.abandons)
        entry.settled = list(early.settled)
    return entry


def early_entry(start: float | None) -> MatchEntry:
    """An entry for commands read before their match's start. After a crash a partition reads
    its inputs again from the last commit, each input in order but the inputs in any order,
    while what it sent before the crash stays sent: a snapshot or an abandon request answering
    a join may be read before the start that sent the join. Dropped, the snapshot would be
    asked for again and come back with the player's state after the match; the abandon request
    would cancel a match the player did play."""
    return MatchEntry(mode="", teams=None, start=start)


def is_early(entry: MatchEntry) -> bool:
    """Whether the entry only holds commands read before the match's start."""
    return entry.teams is None and entry.wait is None


def split_early(early: MatchEntry, players: set[str] | None) -> tuple[MatchEntry, MatchEntry]:
    """What was read before the start, split in two early entries: the commands of
    ``players`` (None: all), for the match's new entry, and the rest (players outside the
    line-up: no such match for them)."""
    mine = MatchEntry(mode=early.mode, teams=None, start=early.start)
    rest = MatchEntry(mode=early.mode, teams=None, start=early.start)
    for pid, snap in early.snaps.items():
        (mine.snaps if players is None or pid in players else rest.snaps)[pid] = snap
    for pid, key in early.lines.items():
        (mine.lines if players is None or pid in players else rest.lines)[pid] = key
    for pid, since in early.abandons.items():
        (mine.abandons if players is None or pid in players else rest.abandons)[pid] = since
    mine.settled = [p for p in early.settled if players is None or p in players]
    return mine, rest


def next_deadline(
    entry: MatchEntry, pending: PendingConfig | None, retention: float
) -> float | None:
    """The event time at which the entry must be looked at again (None: only when a command
    comes): its retention once done, a waiting finish's wait, an early entry's give-up time,
    else the match's timeout or a player's grace after an abandon request (``pending``, the
    mode's policy, needed only then)."""
    if entry.done is not None:
        return float(entry.done) + retention
    if entry.teams is None:
        if entry.wait is not None:
            return float(entry.wait.until)
        # Commands read before the start: once event time passes the start a snapshot names,
        # or the newer start an abandon request names, the start cannot come.
        early = list(entry.abandons.values())
        if entry.start is not None:
            early.append(entry.start)
        return None if not early else min(early) + 0.001
    if entry.finish is not None:
        return None
    assert entry.start is not None  # an entry with teams has its start
    assert pending is not None  # a running match is timed by its mode's policy
    candidates = [entry.start + pending.timeout_seconds]
    settled = set(entry.settled)
    candidates += [
        since + pending.grace_seconds for pid, since in entry.abandons.items() if pid not in settled
    ]
    return float(min(candidates))


def missing_snapshots(entry: MatchEntry) -> list[str]:
    """The players of a match with a line-up whose snapshots have not arrived."""
    assert entry.teams is not None
    return [p for team in entry.teams for p in team if p not in entry.snaps]


def missing(entry: MatchEntry) -> str:
    """What a decided match still waits for, in words (the liveness monitor's log line)."""
    if entry.late and entry.order is None and entry.teams is not None:
        # A start read late: its order first (docs/event-time.md, "Late starts").
        unsaid = [p for team in entry.teams for p in team if p not in entry.positions]
        return f"the positions of {_few(unsaid)} (a start read late)"
    absent = missing_snapshots(entry)
    if absent:
        return f"the snapshots of {_few(absent)}"
    return "every player partition's abandon watermark"


def _few(players: list[str]) -> str:
    return ", ".join(players[:5]) + (f" and {len(players) - 5} more" if len(players) > 5 else "")


def result_problem(teams: list[list[str]], fin: Finish | None) -> str | None:
    """Why a result does not fit the line-up, or None."""
    if fin is None:
        return None
    if len(fin.ranks) != len(teams):
        return f"ranks: expected one rank per team ({len(teams)}), got {len(fin.ranks)}"
    players = {pid for team in teams for pid in team}
    for pid in [*fin.quitters, *(fin.stats or {})]:
        if pid not in players:
            return f"player {pid!r} is not in the match's teams"
    # A finish without its line-up had its parties checked for everything but the sides.
    side = {pid: t for t, team in enumerate(teams) for pid in team}
    for party in fin.parties or ():
        for pid in party:
            if pid not in side:
                return f"parties: player {pid!r} is not in the match's teams"
            if side[pid] != side[party[0]]:
                return (
                    f"parties: player {pid!r} is not on the side of {party[0]!r}:"
                    " a party plays on one side"
                )
    return None


def waiting_letter(wait: Waiting, reason: str) -> DeadLetter:
    """The dead letter of a waiting finish: its own bytes and origin."""
    message = wait.message
    return DeadLetter(message.key, message.value, message.origin, reason)


def lineup(teams: list[list[str]] | tuple[tuple[str, ...], ...]) -> list[list[str]]:
    """The line-up regardless of the order of teams and players (to compare two)."""
    return sorted(sorted(team) for team in teams)


def tuples(teams: list[list[str]]) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(team) for team in teams)


def parties_of(parties: list[list[str]] | None) -> Parties | None:
    """A finish's or a rate command's parties as the engine reads them (None: none named)."""
    return None if parties is None else tuples(parties)


class Due(Enum):
    """What event time makes of an entry now (:func:`due`)."""

    KEEP = "keep"  # nothing to do but keep it (and look again at its next deadline)
    SETTLE = "settle"  # a match with its line-up: settle whoever event time decides
    FORGET = "forget"  # settled, and past its retention: delete it
    GIVE_UP = "give up"  # commands read before a start that cannot come any more
    NO_START = "no start"  # a finish that waited for its start in vain


def due(
    entry: MatchEntry,
    now: float | None,
    pending: PendingConfig | None,
    retention: float,
    *,
    kept: bool = False,
) -> Due:
    """The decision on ``entry`` at event time ``now`` (None: not known yet), with no effect:
    the match side applies it (stream/pipeline/matches.py, ``_advance``). ``kept``: a settled
    match whose evidence about its mode's population has not gone out yet stays until it has
    (stream/pipeline/learnedpopulation.py), past its retention."""
    if entry.done is not None:
        past = now is not None and now >= entry.done + retention
        return Due.FORGET if past and not kept else Due.KEEP
    if is_early(entry):
        until = next_deadline(entry, pending, retention)
        # Event time has passed every start these commands could answer.
        past = now is not None and until is not None and now >= until
        return Due.GIVE_UP if past else Due.KEEP
    if entry.teams is None:
        wait = entry.wait
        assert wait is not None  # an entry without teams is a waiting finish
        return Due.NO_START if now is not None and now >= wait.until else Due.KEEP
    return Due.SETTLE


def stand_in(
    entry: MatchEntry, teams: tuple[tuple[str, ...], ...]
) -> tuple[MatchEntry, str | None]:
    """A waiting finish whose start never came: its own line-up (``teams``) stands in for the
    start, which it dates at the finish. The entry so, and the reason it cannot (or None)."""
    fin = entry.finish
    assert fin is not None  # a waiting finish keeps its result
    lined = [list(team) for team in teams]
    stood = dataclasses.replace(entry, teams=lined, start=fin.at, wait=None)
    return stood, result_problem(lined, fin)


def copied(entry: MatchEntry) -> MatchEntry:
    """A copy of ``entry`` whose line-up, snapshots, abandon requests, settled players and
    line-up keys can be changed without changing ``entry`` (the rest is never changed in
    place)."""
    return dataclasses.replace(
        entry,
        teams=None if entry.teams is None else [list(team) for team in entry.teams],
        snaps=dict(entry.snaps),
        abandons=dict(entry.abandons),
        settled=list(entry.settled),
        lines=dict(entry.lines),
    )
