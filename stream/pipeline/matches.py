"""The match side: line-ups, rating snapshots, results, abandonment and timeouts.

One match lives on its *home* partition (Kafka's default partitioner on the match id). Its
entry in the match table holds the line-up, each participant's rating snapshot as their player
partition reported it, the result once it arrives, and which players have been settled. When
every snapshot is in and a player's fate is known, one ``rate`` or ``cancel`` command per player
partition goes out; the player side does the rating.

A player is settled exactly once per match:
- by the result (rated from the ranks, or a forced loss for a quitter, or cancelled),
- or, with no result yet, as ``abandoned`` once the match partition's event time passes the
  grace period after the player started a newer match,
- or, with no result at all, as ``timeout`` when the partition's event time passes the start
  plus the mode's timeout.

Event time is the partition's clock (:class:`PartitionClock`): match events arrive on the home
partition in the order the fleet produced them, so "the result has not arrived within the grace
period" means exactly that, however fast or slow the stream is being processed.

On replay: every handler is idempotent. A duplicate start or finish, a repeated snapshot or
abandon request finds the entry already changed and does nothing; a settled match is kept for
``retention_seconds`` of event time to recognise late duplicates.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from stream.config.modes import Modes
from stream.deadletters import DeadLetter, Origin
from stream.events import (
    DEFAULT_LIMITS,
    EventError,
    EventLimits,
    MatchFinished,
    MatchStarted,
    decode_match_finished,
    decode_match_started,
)
from stream.pipeline.outbox import Outbox
from stream.pipeline.partitioning import partition_for
from stream.pipeline.timekeeping import Deadlines, PartitionClock
from stream.pipeline.view import StateView
from stream.ratings.modes import ModeConfig
from stream.ratings.resolution import Outcome, rated_players

STARTED = "started"
FINISHED = "finished"


class MatchProcessor:
    """Handles match events and commands for the match partitions this worker owns."""

    def __init__(
        self,
        modes: Modes,
        *,
        partitions: int,
        retention_seconds: float = 3600.0,
        limits: EventLimits = DEFAULT_LIMITS,
        max_future_seconds: float | None = None,
    ) -> None:
        self.modes = modes
        self.partitions = partitions
        self.retention = retention_seconds
        self.limits = limits
        # An event time this far past the wall clock is refused (None: no check). One event
        # from a server with a broken clock would otherwise move the partition's event time
        # on, and every match pending there would be abandoned or timed out.
        self.max_future_seconds = max_future_seconds
        self.clocks: dict[int, PartitionClock] = {}
        self.deadlines: defaultdict[int, Deadlines] = defaultdict(Deadlines)

    # --- clocks and deadlines -----------------------------------------------------------------

    def clock(self, partition: int, wall: float, stored: float | None = None) -> PartitionClock:
        found = self.clocks.get(partition)
        if found is None:
            found = self.clocks[partition] = PartitionClock(stored, wall)
        return found

    def rebuild(self, partition: int, entries: list[tuple[str, dict[str, Any]]]) -> None:
        """Recreate the partition's deadlines from its table entries (after recovery)."""
        deadlines = self.deadlines[partition] = Deadlines()
        for match_id, entry in entries:
            at = self._next_deadline(entry)
            if at is not None:
                deadlines.add(at, match_id)

    # --- inputs -------------------------------------------------------------------------------

    def on_event(
        self,
        view: StateView,
        out: Outbox,
        partition: int,
        kind: str,
        key: bytes | None,
        value: bytes | None,
        origin: Origin,
        wall: float,
    ) -> None:
        """A match-started or match-finished message (``kind``), or one forwarded home."""
        size = len(key or b"") + len(value or b"")
        if size > self.limits.max_bytes:
            # Before parsing, and the key too: a forwarded event carries both in one command.
            reason = (
                f"match-{kind}: event is {size} bytes (key {len(key or b'')}, value "
                f"{len(value or b'')}), over the limit of {self.limits.max_bytes} bytes "
                "(SKILLSTREAM_MAX_EVENT_BYTES)"
            )
            out.dead_letter(DeadLetter(key, value, origin, reason))
            return
        decode = decode_match_started if kind == STARTED else decode_match_finished
        try:
            event = decode(value or b"", self.limits)
            mode = self._mode(event.mode)
        except EventError as exc:
            out.dead_letter(DeadLetter(key, value, origin, f"match-{kind}: {exc}"))
            return
        home = partition_for(event.match_id, self.partitions)
        if home != partition:
            out.to_match(home, _forward(kind, key, value, origin))
            out.count("forwarded")
            return
        at = event.started_at if isinstance(event, MatchStarted) else event.finished_at
        if self.max_future_seconds is not None and at > wall + self.max_future_seconds:
            field = "started_at" if kind == STARTED else "finished_at"
            reason = (
                f"match-{kind}: {field} is {at - wall:,.0f} s ahead of the worker's clock "
                f"(limit {self.max_future_seconds:g} s, SKILLSTREAM_MAX_FUTURE_SECONDS)"
            )
            out.dead_letter(DeadLetter(key, value, origin, reason))
            return
        clock = self.clock(partition, wall)
        if isinstance(event, MatchStarted):
            clock.observe(event.started_at, wall)
            self._start(view, out, partition, event, mode)
        else:
            clock.observe(event.finished_at, wall)
            self._finish(view, out, partition, event, mode, key, value, origin)
        self.run_due(view, out, partition)

    def on_commands(
        self,
        view: StateView,
        out: Outbox,
        partition: int,
        commands: list[list[Any]],
        origin: Origin,
        wall: float,
    ) -> None:
        """A packed message of commands for this match partition."""
        for command in commands:
            kind = command[0]
            if kind == "snap":
                _, match_id, player_id, state, applied = command
                self._snapshot(view, out, partition, match_id, player_id, state, applied)
            elif kind == "abandon":
                _, match_id, player_id, since = command
                self._abandon_request(view, out, partition, match_id, player_id, since)
            elif kind == "fwd":
                _, what, message = command
                key, value, where = _restored(message)
                self.on_event(view, out, partition, what, key, value, where, wall)
            elif kind == "tick":
                self.clock(partition, wall).tick(wall)
            else:
                raise ValueError(f"unknown match command {kind!r}")
        self.run_due(view, out, partition)

    def run_due(self, view: StateView, out: Outbox, partition: int) -> None:
        """Act on every match whose deadline the partition's event time has passed."""
        clock = self.clocks.get(partition)
        if clock is None:
            return
        for match_id in self.deadlines[partition].due(clock.value):
            entry = view.get(match_id)
            if entry is not None:
                self._advance(view, out, partition, match_id, entry)

    # --- handlers -----------------------------------------------------------------------------

    def _mode(self, name: str) -> ModeConfig:
        try:
            return self.modes.get(name)
        except KeyError:
            raise EventError(
                f"mode: {name!r} is not in the modes file, which rejects unlisted modes"
            ) from None

    def _start(
        self,
        view: StateView,
        out: Outbox,
        partition: int,
        event: MatchStarted,
        mode: ModeConfig,
    ) -> None:
        entry = view.get(event.match_id)
        if entry is None:
            entry = _new_entry(mode.name, event.teams, event.started_at)
            self._join(out, event.match_id, entry, partition)
        elif entry["teams"] is None:
            # The finish came first without a line-up: the start completes it.
            wait = entry["wait"]
            teams = [list(team) for team in event.teams]
            entry["teams"] = teams
            entry["start"] = event.started_at
            entry["wait"] = None
            problem = _result_problem(teams, entry["fin"])
            if problem is not None:
                out.dead_letter(_waiting_letter(wait, f"match-finished: {problem}"))
                entry["fin"] = None
            self._join(out, event.match_id, entry, partition)
        else:
            out.count("duplicate_starts")
            return
        self._advance(view, out, partition, event.match_id, entry)

    def _finish(
        self,
        view: StateView,
        out: Outbox,
        partition: int,
        event: MatchFinished,
        mode: ModeConfig,
        key: bytes | None,
        value: bytes | None,
        origin: Origin,
    ) -> None:
        match_id = event.match_id
        entry = view.get(match_id)

        def reject(reason: str) -> None:
            out.dead_letter(DeadLetter(key, value, origin, f"match-finished: {reason}"))

        fin = {
            "at": event.finished_at,
            # When the finish was produced (Kafka timestamp): the latency metric's start.
            "ts": origin.timestamp_ms,
            "ranks": list(event.ranks),
            "quitters": sorted(event.quitters),
            "stats": None
            if event.stats is None
            else {pid: [s.score, s.seconds] for pid, s in event.stats.items()},
        }
        if entry is None:
            if event.teams is None:
                # No line-up yet: wait a grace period for the start, then dead-letter.
                entry = _new_entry(mode.name, None, None)
                entry["fin"] = fin
                clock = self.clocks[partition].value or event.finished_at
                entry["wait"] = {
                    "message": _stored(key, value, origin),
                    "until": clock + self.modes.pending(mode.name).grace_seconds,
                }
                view.put(match_id, entry)
                self.deadlines[partition].add(entry["wait"]["until"], match_id)
                return
            # No start seen (late, or never sent): the finish's line-up stands in for it, and
            # the snapshots are taken now.
            entry = _new_entry(mode.name, event.teams, event.finished_at)
            entry["fin"] = fin
            self._join(out, match_id, entry, partition)
            out.count("finished_without_start")
        elif entry["fin"] is not None or entry["done"] is not None:
            out.count("duplicate_finishes")
            return
        elif entry["mode"] != mode.name:
            reject(f"mode {mode.name!r} differs from the match-started mode {entry['mode']!r}")
            return
        elif entry["teams"] is None:
            out.count("duplicate_finishes")
            return
        else:
            if event.teams is not None:
                if _lineup(event.teams) != _lineup(entry["teams"]):
                    reject("teams differ from the match-started line-up")
                    return
                # The finish's team order is the one its ranks refer to.
                entry["teams"] = [list(team) for team in event.teams]
            problem = _result_problem(entry["teams"], fin)
            if problem is not None:
                reject(problem)
                return
            entry["fin"] = fin
        self._advance(view, out, partition, match_id, entry)

    def _snapshot(
        self,
        view: StateView,
        out: Outbox,
        partition: int,
        match_id: str,
        player_id: str,
        state: list[Any] | None,
        applied: bool,
    ) -> None:
        entry = view.get(match_id)
        if entry is None or entry["done"] is not None or entry["teams"] is None:
            out.count("late_snapshots")
            return
        snaps = entry["snaps"]
        if player_id in snaps:
            return
        snaps[player_id] = state
        if applied and player_id not in entry["settled"]:
            # The player already has this match (a duplicate after the retention period).
            entry["settled"].append(player_id)
        self._advance(view, out, partition, match_id, entry)

    def _abandon_request(
        self,
        view: StateView,
        out: Outbox,
        partition: int,
        match_id: str,
        player_id: str,
        since: float,
    ) -> None:
        entry = view.get(match_id)
        if entry is None or entry["done"] is not None or entry["teams"] is None:
            # Nothing to abandon here: release the player's pending entry.
            out.to_player(
                partition_for(player_id, self.partitions), ["cancel", match_id, [player_id]]
            )
            return
        if player_id in entry["settled"] or entry["fin"] is not None:
            return
        current = entry["aband"].get(player_id)
        if current is not None and current <= since:
            return
        entry["aband"][player_id] = since
        self._advance(view, out, partition, match_id, entry)

    # --- the decision ---------------------------------------------------------------------------

    def _advance(
        self, view: StateView, out: Outbox, partition: int, match_id: str, entry: dict[str, Any]
    ) -> None:
        """Settle whoever can be settled now, store the entry, and queue its next deadline."""
        now = self.clocks[partition].value
        done = entry["done"]
        if done is not None:
            if now is not None and now >= done + self.retention:
                view.delete(match_id)
                return
        elif entry["teams"] is None:
            wait = entry["wait"]
            if now is not None and now >= wait["until"]:
                out.dead_letter(
                    _waiting_letter(
                        wait,
                        "match-finished: no teams, and no match-started arrived within the "
                        "grace period",
                    )
                )
                view.delete(match_id)
                return
        else:
            self._settle(out, match_id, entry, now)
        view.put(match_id, entry)
        at = self._next_deadline(entry)
        if at is not None:
            self.deadlines[partition].add(at, match_id)

    def _settle(self, out: Outbox, match_id: str, entry: dict[str, Any], now: float | None) -> None:
        teams = entry["teams"]
        players = [pid for team in teams for pid in team]
        snaps = entry["snaps"]
        if len(snaps) < len(players):
            return
        settled = set(entry["settled"])
        mode = self.modes.get(entry["mode"])
        fin = entry["fin"]
        if fin is not None:
            rated = rated_players(mode, _tuples(teams), fin["quitters"])
            to_rate = [[pid, rated[pid], None] for pid in players if pid in rated]
            to_cancel = [pid for pid in players if pid not in rated]
            self._send(out, match_id, entry, fin["at"], to_rate, to_cancel, settled)
            entry["settled"] = players
            entry["done"] = fin["at"] if now is None else max(now, fin["at"])
            return
        if now is None:
            return
        pending = self.modes.pending(mode.name)
        abandoned = sorted(
            (since, pid)
            for pid, since in entry["aband"].items()
            if pid not in settled and now >= since + pending.grace_seconds
        )
        for since, pid in abandoned:
            self._send(
                out, match_id, entry, since, [[pid, 0.0, Outcome.ABANDONED.value]], [], settled
            )
            settled.add(pid)
        timeout_at = entry["start"] + pending.timeout_seconds
        if now >= timeout_at:
            timed_out = [[pid, 0.0, Outcome.TIMEOUT.value] for pid in players if pid not in settled]
            self._send(out, match_id, entry, timeout_at, timed_out, [], settled)
            settled.update(players)
            out.count("timed_out_matches")
        entry["settled"] = [pid for pid in players if pid in settled]
        if len(settled) == len(players):
            entry["done"] = now

    def _send(
        self,
        out: Outbox,
        match_id: str,
        entry: dict[str, Any],
        at: float,
        to_rate: list[list[Any]],
        to_cancel: list[str],
        settled: set[str],
    ) -> None:
        """One rate and one cancel command per player partition, skipping settled players."""
        fin = entry["fin"]
        ranks = fin["ranks"] if fin is not None else [0] * len(entry["teams"])
        stats = fin["stats"] if fin is not None else None
        by_partition: defaultdict[int, list[list[Any]]] = defaultdict(list)
        for item in to_rate:
            if item[0] not in settled:
                by_partition[partition_for(item[0], self.partitions)].append(item)
        for target, items in by_partition.items():
            out.to_player(
                target,
                [
                    "rate",
                    match_id,
                    entry["mode"],
                    at,
                    entry["teams"],
                    ranks,
                    stats,
                    entry["snaps"],
                    items,
                    None if fin is None else fin.get("ts"),
                ],
            )
        cancels: defaultdict[int, list[str]] = defaultdict(list)
        for pid in to_cancel:
            if pid not in settled:
                cancels[partition_for(pid, self.partitions)].append(pid)
        for target, pids in cancels.items():
            out.to_player(target, ["cancel", match_id, pids])
        if cancels:
            out.count("cancelled_players", sum(len(p) for p in cancels.values()))

    def _next_deadline(self, entry: dict[str, Any]) -> float | None:
        done = entry["done"]
        if done is not None:
            return float(done) + self.retention
        if entry["teams"] is None:
            return float(entry["wait"]["until"])
        if entry["fin"] is not None:
            return None
        pending = self.modes.pending(entry["mode"])
        candidates = [entry["start"] + pending.timeout_seconds]
        settled = set(entry["settled"])
        candidates += [
            since + pending.grace_seconds
            for pid, since in entry["aband"].items()
            if pid not in settled
        ]
        return float(min(candidates))

    def _join(self, out: Outbox, match_id: str, entry: dict[str, Any], home: int) -> None:
        """Ask every participant's partition for its snapshot (and to note the match pending)."""
        for team in entry["teams"]:
            for pid in team:
                out.to_player(
                    partition_for(pid, self.partitions),
                    ["join", match_id, pid, entry["mode"], entry["start"], home],
                )


def _new_entry(
    mode: str, teams: tuple[tuple[str, ...], ...] | None, started_at: float | None
) -> dict[str, Any]:
    return {
        "mode": mode,
        "teams": None if teams is None else [list(team) for team in teams],
        "start": started_at,
        "snaps": {},
        "fin": None,
        "wait": None,
        "aband": {},
        "settled": [],
        "done": None,
    }


def _forward(what: str, key: bytes | None, value: bytes | None, origin: Origin) -> list[Any]:
    return ["fwd", what, _stored(key, value, origin)]


def _stored(key: bytes | None, value: bytes | None, origin: Origin) -> dict[str, Any]:
    """An input message as JSON, to forward or keep, with its bytes and origin intact."""
    return {
        # Keys can be any bytes: latin-1 maps each byte to one character and back. The value
        # parsed as JSON, which orjson accepts only as UTF-8.
        "key": None if key is None else key.decode("latin-1"),
        "value": (value or b"").decode(),
        "origin": [origin.topic, origin.partition, origin.offset, origin.timestamp_ms],
    }


def _restored(message: dict[str, Any]) -> tuple[bytes | None, bytes, Origin]:
    key = message["key"]
    return (
        None if key is None else key.encode("latin-1"),
        message["value"].encode(),
        Origin(*message["origin"]),
    )


def _result_problem(teams: list[list[str]], fin: dict[str, Any] | None) -> str | None:
    """Why a result does not fit the line-up, or None."""
    if fin is None:
        return None
    if len(fin["ranks"]) != len(teams):
        return f"ranks: expected one rank per team ({len(teams)}), got {len(fin['ranks'])}"
    players = {pid for team in teams for pid in team}
    for pid in [*fin["quitters"], *(fin["stats"] or {})]:
        if pid not in players:
            return f"player {pid!r} is not in the match's teams"
    return None


def _waiting_letter(wait: dict[str, Any], reason: str) -> DeadLetter:
    key, value, origin = _restored(wait["message"])
    return DeadLetter(key, value, origin, reason)


def _lineup(teams: Any) -> list[list[str]]:
    return sorted(sorted(team) for team in teams)


def _tuples(teams: list[list[str]]) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(team) for team in teams)
