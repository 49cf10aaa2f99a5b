"""A match entry's life, as transitions: (entry, input) -> (entry, effects).

Each input that reaches a match's home partition, a start, a finish, a player's snapshot or an
abandon request, is a function here of the entry the table holds (None: none) and the input,
returning the entry to keep and the :class:`Effects` the match side applies
(stream/pipeline/matches.py, in the order the fields of :class:`Effects` are listed). No
outbox, no table, no partition state, no clock but the event time given: the rules of a
match's life can be read and tested here alone. A transition never changes the entry it is
given: one that changes the match returns a new entry (stream/pipeline/decision.py composes
these with what event time makes of the entry).

What event time then makes of the entry (settle, give up, forget) is
:func:`stream.pipeline.matchentry.due`; who it settles, stream/pipeline/verdicts.py.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from stream.deadletters import DeadLetter
from stream.events import EventLimits, MatchFinished, MatchStarted, decode_match_finished
from stream.pipeline.matchentry import (
    copied,
    early_entry,
    is_early,
    lineup,
    new_entry,
    result_problem,
    split_early,
    waiting_letter,
)
from stream.protocol import Abandon, Finish, MatchEntry, Snapshot, StoredMessage, Waiting

__all__ = ["Effects", "Wait", "abandon_request", "finish", "snapshot", "start"]


@dataclass(frozen=True, slots=True)
class Wait:
    """A finish that waits for its start until ``until`` (event time); ``unjoined``: it has a
    line-up, whose joins go out only when the wait is over (the watermark to the player
    partitions stays below it meanwhile: stream/pipeline/watermarks.py, ``mark``)."""

    until: float
    unjoined: bool


@dataclass(frozen=True, slots=True)
class Effects:
    """What a transition asks of the match side, applied in this order."""

    letter: DeadLetter | None = None
    count: str | None = None
    # Early commands of players outside the line-up: cancel the match for them.
    release: MatchEntry | None = None
    # An abandon request or a snapshot for a match this partition does not have (any more):
    # release this player.
    release_player: str | None = None
    # A snapshot of a player the match has settled, from a player partition still waiting for
    # the verdict (it lost it with a table restored behind): send the player's verdict again.
    resend: str | None = None
    # A finish now waiting for its start: store the entry and queue its wait.
    wait: Wait | None = None
    # Ask every participant's partition for its snapshot.
    join: bool = False
    # Store the entry and act on what event time makes of it (matchentry.due).
    advance: bool = False


NOTHING = Effects()
ADVANCE = Effects(advance=True)


def start(
    entry: MatchEntry | None, event: MatchStarted, mode: str, limits: EventLimits
) -> tuple[MatchEntry | None, Effects]:
    """A match-started of mode ``mode`` at the match's home partition."""
    if entry is None or is_early(entry):
        mine = rest = None
        if entry is not None:
            players = {pid for team in event.teams for pid in team}
            mine, rest = split_early(entry, players)
        created = new_entry(mode, event.teams, event.started_at, mine)
        return created, Effects(release=rest, join=True, advance=True)
    if entry.teams is not None:
        return entry, Effects(count="duplicate_starts")
    # The finish came first: the start completes it.
    wait = entry.wait
    assert wait is not None  # an entry without teams is a waiting finish
    teams = [list(team) for team in event.teams]
    own = decode_match_finished(wait.message.value, limits).teams
    problem = None
    if own is not None:
        if lineup(own) != lineup(teams):
            problem = "teams differ from the match-started line-up"
        else:
            # The finish's team order is the one its ranks refer to.
            teams = [list(team) for team in own]
    problem = problem or result_problem(teams, entry.finish)
    letter = None
    fin = entry.finish
    if problem is not None:
        letter = waiting_letter(wait, f"match-finished: {problem}")
        fin = None
    started = dataclasses.replace(
        copied(entry), teams=teams, start=event.started_at, wait=None, finish=fin
    )
    return started, Effects(letter=letter, join=True, advance=True)


def finish(
    entry: MatchEntry | None,
    event: MatchFinished,
    mode: str,
    message: StoredMessage,
    *,
    grace_seconds: float,
    now: float | None,
) -> tuple[MatchEntry | None, Effects]:
    """A match-finished of mode ``mode`` at the match's home partition (``message``: its bytes
    and origin, kept while it waits and for its dead letter); ``grace_seconds``: the mode's."""

    def reject(reason: str) -> tuple[MatchEntry | None, Effects]:
        letter = DeadLetter(message.key, message.value, message.origin, f"match-finished: {reason}")
        return entry, Effects(letter=letter)

    fin = Finish(
        at=event.finished_at,
        # When the finish was produced (Kafka timestamp): the latency metric's start.
        ts=message.origin.timestamp_ms,
        ranks=list(event.ranks),
        quitters=sorted(event.quitters),
        stats=None if event.stats is None else dict(event.stats),
        parties=[list(party) for party in event.parties] or None,
    )
    if entry is None or is_early(entry):
        # No start seen yet: it may still be unread. Wait until event time has passed the
        # finish (every start up to then has been read), or a grace period more when the finish
        # has no line-up of its own; then rate without the start or dead-letter. Event times
        # carry milliseconds: one more and no start can still come.
        wait = 0.001 if event.teams is not None else grace_seconds
        # A finish that is itself late (event time is past it already) waits from now, as its
        # start may be just as late.
        until = (event.finished_at if now is None else max(event.finished_at, now)) + wait
        waiting = new_entry(mode, None, None, entry)
        waiting.finish = fin
        waiting.wait = Waiting(message, until)
        return waiting, Effects(wait=Wait(until, event.teams is not None))
    if entry.finish is not None or entry.done is not None:
        return entry, Effects(count="duplicate_finishes")
    if entry.mode != mode:
        return reject(f"mode {mode!r} differs from the match-started mode {entry.mode!r}")
    if entry.teams is None:
        return entry, Effects(count="duplicate_finishes")
    teams = entry.teams
    if event.teams is not None:
        if lineup(event.teams) != lineup(entry.teams):
            return reject("teams differ from the match-started line-up")
        # The finish's team order is the one its ranks refer to.
        teams = [list(team) for team in event.teams]
    problem = result_problem(teams, fin)
    if problem is not None:
        return reject(problem)
    return dataclasses.replace(copied(entry), teams=teams, finish=fin), ADVANCE


def snapshot(
    entry: MatchEntry | None, snap: Snapshot, now: float | None
) -> tuple[MatchEntry | None, Effects]:
    """A player partition's snapshot of a player for the match."""
    if entry is None and snap.at is not None and (now is None or now <= snap.at):
        # Read before the start that asked for it: kept for it (matchentry.early_entry). One
        # without its start (protocol version 4) is dropped, as before: it could not tell
        # when to give up waiting. An applied one too: the start read again after a restore
        # makes the entry anew, which would wait for good on a player who has the match and
        # has already said so.
        entry = early_entry(snap.at)
    pid = snap.player_id
    if entry is None:
        # The match is gone (forgotten, or given up): a player still waiting on it would wait
        # for good. One that has it already waits for nothing.
        return entry, Effects(count="late_snapshots", release_player=None if snap.applied else pid)
    if entry.done is not None:
        waiting = not snap.applied and pid in entry.settled
        return entry, Effects(count="late_snapshots", resend=pid if waiting else None)
    if (
        entry.late
        and entry.order is not None
        and snap.turn is not None
        and snap.turn != entry.order
        and not snap.applied
    ):
        # Taken for the late start's own time before its order came, which is later: the
        # player sends another once its turn comes (docs/event-time.md, "Late starts").
        return entry, Effects(count="snapshots_before_their_turn")
    if pid in entry.snaps:
        if snap.applied and pid not in entry.settled:
            # The player already has the match: whatever snapshot came first, no rate.
            entry = copied(entry)
            entry.settled.append(pid)
            return entry, ADVANCE
        return entry, NOTHING
    entry = copied(entry)
    if is_early(entry) and snap.at is not None:
        entry.start = snap.at if entry.start is None else min(entry.start, snap.at)
    entry.snaps[pid] = snap.state
    if snap.lineup is not None:
        entry.lines[pid] = snap.lineup
    if snap.applied and pid not in entry.settled:
        # The player already has this match (a duplicate after the retention period).
        entry.settled.append(pid)
    return entry, ADVANCE


def abandon_request(
    entry: MatchEntry | None, request: Abandon, now: float | None
) -> tuple[MatchEntry | None, Effects]:
    """A player partition asks to abandon the match for a player who started a newer one at
    ``request.since``."""
    if entry is None and (now is None or now <= request.since):
        # The start that made the player pending may still be unread here (a partition reads
        # its inputs again after a crash, in another order): keep the request for it until
        # event time has passed the newer start (matchentry.early_entry).
        entry = early_entry(None)
    if entry is None or entry.done is not None:
        # Nothing to abandon here: release the player's pending entry.
        return entry, Effects(release_player=request.player_id)
    pid = request.player_id
    if pid in entry.settled:
        return entry, NOTHING
    # Recorded even beside a result: a result timed after the abandonment loses to it
    # (stream.ratings.settling), whichever was read first.
    current = entry.abandons.get(pid)
    if current is not None and current <= request.since:
        return entry, NOTHING
    entry = copied(entry)
    entry.abandons[pid] = request.since
    return entry, ADVANCE
