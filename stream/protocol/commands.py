"""The commands between the match and player partitions: checked, since they arrive on a topic.

Positional JSON lists led by their kind (compact: a packed message holds thousands of them).
Every field is checked when decoded: a malformed command raises ProtocolError and is
dead-lettered alone."""

from __future__ import annotations

from dataclasses import dataclass

import orjson

from stream.protocol.checks import (
    ProtocolError,
    arity,
    as_bool,
    as_dict,
    as_int,
    as_ints,
    as_list,
    as_number,
    as_optional_number,
    as_str,
    as_strings,
)
from stream.protocol.state import (
    StoredMessage,
    decode_message,
    decode_optional_state,
    decode_stats,
    decode_teams,
    encode_message,
    encode_optional_state,
    encode_stats,
)
from stream.ratings.fastinit import fast_init
from stream.ratings.skill import PlayerState, PlayerStats

# Version 1: ``rate`` had 9 elements. Version 2 added the 10th, the finish's Kafka timestamp
# (ms), which the latency metric starts from. Version 3 added ``progress`` and ``wm`` (event-time
# watermarks, docs/event-time.md); a version 2 worker dead-letters them as unknown commands, so
# upgrade every worker of a group together (docs/operations.md). Decoders accept every version up
# to this one, and ignore trailing ``rate`` elements and unknown record fields a later version
# may add. Version 4 added ``awm`` (a player partition's abandon requests are all out, so a
# result timed after an abandonment is settled by event time, not by arrival), with the same
# upgrade rule. Version 5 added the match's start as the 6th ``snap`` element (a match side
# that reads a snapshot before its start keeps it until the start comes), same rule: a version
# 4 worker dead-letters those snapshots as malformed.
PROTOCOL_VERSION = 5


# --- match side commands -------------------------------------------------------------------------


@fast_init
@dataclass(frozen=True, slots=True)
class Snapshot:
    """A player's state for a match (None: no rating yet); ``applied``: the player already
    has this match (a duplicate after the retention period); ``at``: the match's start, as the
    join gave it (None from workers before it was sent: a match side that reads the snapshot
    before the start keeps it until the start comes, see stream/pipeline/matches.py)."""

    match_id: str
    player_id: str
    state: PlayerState | None
    applied: bool
    at: float | None = None


@fast_init
@dataclass(frozen=True, slots=True)
class Abandon:
    """The player started a newer match at ``since``: abandon this one after the grace period."""

    match_id: str
    player_id: str
    since: float


@fast_init
@dataclass(frozen=True, slots=True)
class Forward:
    """A match event that arrived on another partition than its match's home."""

    kind: str  # "started" or "finished"
    message: StoredMessage


@fast_init
@dataclass(frozen=True, slots=True)
class Tick:
    """The leader's wall time: moves a quiet partition's event time on."""

    wall: float


@fast_init
@dataclass(frozen=True, slots=True)
class Progress:
    """How far match partition ``source`` has read its inputs (docs/event-time.md), sent to
    every other match partition at the end of a batch, after any event it forwarded there: a
    batch that read the leader's tick, and a busy batch at most every
    SKILLSTREAM_PROGRESS_SECONDS. ``round``: the leader's wall time in that tick, the same for
    every partition, or the batch's wall time when no tick arrived in it.

    Per input topic (``started``, ``finished``): the latest event time processed while records
    are still waiting there (0.0: none read yet), or None once it has read everything the
    broker holds. ``latest``: the latest event time read on any of its inputs (None: none yet).
    """

    source: int
    round: float
    started: float | None
    finished: float | None
    latest: float | None


@fast_init
@dataclass(frozen=True, slots=True)
class AbandonWatermark:
    """Player partition ``source`` has sent the abandon request of every match superseded by
    a start before ``at`` (sent to every match partition, after those requests, when the
    watermarks it received move it on, at most once a tick; docs/event-time.md). A match
    holding a result timed after a possible abandonment waits for it."""

    source: int
    at: float


MatchCommand = Snapshot | Abandon | Forward | Tick | Progress | AbandonWatermark


# --- player side commands ------------------------------------------------------------------------


@fast_init
@dataclass(frozen=True, slots=True)
class Join:
    """The player is in a match: note it pending, send the snapshot when its turn comes."""

    match_id: str
    player_id: str
    mode: str
    started_at: float
    home: int  # the match's partition, where snapshots and abandon requests go


@fast_init
@dataclass(frozen=True, slots=True)
class RatedPlayer:
    """One player a ``rate`` command rates: a forced score (None: from the ranks) and the
    outcome label of the rating-changed event (None: from the score)."""

    player_id: str
    forced: float | None
    label: str | None


@fast_init
@dataclass(frozen=True, slots=True)
class Rate:
    match_id: str
    mode: str
    at: float
    teams: list[list[str]]
    ranks: list[int]
    stats: dict[str, PlayerStats] | None
    snapshots: dict[str, PlayerState | None]
    players: list[RatedPlayer]
    # The finish's Kafka timestamp (ms); absent in version 1 commands.
    finished_ms: int | None = None


@fast_init
@dataclass(frozen=True, slots=True)
class Cancel:
    """The match is settled without a rating for these players."""

    match_id: str
    players: list[str]


@fast_init
@dataclass(frozen=True, slots=True)
class Watermark:
    """Match partition ``source`` has sent the join of every match homed there that started
    before ``at`` (sent to every player partition at the end of a batch that read or made a
    progress report, whenever that moves it; after those joins; docs/event-time.md)."""

    source: int
    at: float


PlayerCommand = Join | Rate | Cancel | Watermark
Command = MatchCommand | PlayerCommand


def encode_command(command: Command) -> list[object]:
    """The command's wire form: a positional list led by its kind."""
    match command:
        case Snapshot(match_id, player_id, state, applied, at):
            snap: list[object] = ["snap", match_id, player_id, encode_optional_state(state)]
            return [*snap, applied] if at is None else [*snap, applied, at]
        case Abandon(match_id, player_id, since):
            return ["abandon", match_id, player_id, since]
        case Forward(kind, message):
            return ["fwd", kind, encode_message(message)]
        case Tick(wall):
            return ["tick", wall]
        case Progress(source, round_, started, finished, latest):
            return ["progress", source, round_, started, finished, latest]
        case Watermark(source, at):
            return ["wm", source, at]
        case AbandonWatermark(source, at):
            return ["awm", source, at]
        case Join(match_id, player_id, mode, started_at, home):
            return ["join", match_id, player_id, mode, started_at, home]
        case Rate():
            return [
                "rate",
                command.match_id,
                command.mode,
                command.at,
                command.teams,
                command.ranks,
                encode_stats(command.stats),
                {pid: encode_optional_state(s) for pid, s in command.snapshots.items()},
                [[p.player_id, p.forced, p.label] for p in command.players],
                command.finished_ms,
            ]
        case Cancel(match_id, players):
            return ["cancel", match_id, players]


def _items(data: object, side: str) -> tuple[str, list[object]]:
    items = as_list(data, f"{side} command")
    if not items or not isinstance(items[0], str):
        raise ProtocolError(f"{side} command: expected a list led by its kind, got {data!r:.80}")
    return items[0], items


def decode_match_command(data: object) -> MatchCommand:
    """A match side command from its parsed JSON; ProtocolError if malformed or unknown."""
    kind, items = _items(data, "match")
    # The reasons are spelt out per kind, not formatted: this runs for every command.
    if kind == "snap":
        what = "snap command"
        arity(items, what, 5, 6)
        return Snapshot(
            as_str(items[1], what),
            as_str(items[2], what),
            decode_optional_state(items[3]),
            as_bool(items[4], what),
            as_number(items[5], what) if len(items) == 6 else None,
        )
    if kind == "abandon":
        what = "abandon command"
        arity(items, what, 4)
        return Abandon(as_str(items[1], what), as_str(items[2], what), as_number(items[3], what))
    if kind == "fwd":
        what = "fwd command"
        arity(items, what, 3)
        return Forward(as_str(items[1], what), decode_message(items[2]))
    if kind == "tick":
        what = "tick command"
        arity(items, what, 2)
        return Tick(as_number(items[1], what))
    if kind == "progress":
        what = "progress command"
        arity(items, what, 6)
        return Progress(
            as_int(items[1], what),
            as_number(items[2], what),
            as_optional_number(items[3], what),
            as_optional_number(items[4], what),
            as_optional_number(items[5], what),
        )
    if kind == "awm":
        what = "awm command"
        arity(items, what, 3)
        return AbandonWatermark(as_int(items[1], what), as_number(items[2], what))
    raise ProtocolError(f"unknown match command {kind!r}")


def decode_player_command(data: object) -> PlayerCommand:
    """A player side command from its parsed JSON; ProtocolError if malformed or unknown."""
    kind, items = _items(data, "player")
    if kind == "join":
        what = "join command"
        arity(items, what, 6)
        return Join(
            as_str(items[1], what),
            as_str(items[2], what),
            as_str(items[3], what),
            as_number(items[4], what),
            as_int(items[5], what),
        )
    if kind == "rate":
        what = "rate command"
        # Version 1 commands (9 elements) may still be in the topic during an upgrade, and a
        # newer release may add elements: readers ignore what they do not know.
        if len(items) < 9:
            raise ProtocolError(f"{what}: expected at least 9 elements, got {len(items)}")
        snapshots = {
            pid: decode_optional_state(state) for pid, state in as_dict(items[7], what).items()
        }
        players = []
        for item in as_list(items[8], what):
            rated = as_list(item, "rate command player")
            arity(rated, "rate command player", 3)
            pid, forced, label = rated
            players.append(
                RatedPlayer(
                    as_str(pid, what),
                    None if forced is None else as_number(forced, what),
                    None if label is None else as_str(label, what),
                )
            )
        finished_ms = items[9] if len(items) > 9 else None
        return Rate(
            match_id=as_str(items[1], what),
            mode=as_str(items[2], what),
            at=as_number(items[3], what),
            teams=decode_teams(items[4], what),
            ranks=as_ints(items[5], what),
            stats=decode_stats(items[6], what),
            snapshots=snapshots,
            players=players,
            finished_ms=None if finished_ms is None else as_int(finished_ms, what),
        )
    if kind == "cancel":
        what = "cancel command"
        arity(items, what, 3)
        return Cancel(as_str(items[1], what), as_strings(items[2], what))
    if kind == "wm":
        what = "wm command"
        arity(items, what, 3)
        return Watermark(as_int(items[1], what), as_number(items[2], what))
    raise ProtocolError(f"unknown player command {kind!r}")


def decode_commands(value: bytes | None) -> list[object]:
    """A packed message's commands, still undecoded; ProtocolError if it is not a JSON array."""
    try:
        commands = orjson.loads(value or b"")
    except orjson.JSONDecodeError as exc:
        raise ProtocolError(f"not valid JSON: {exc}") from None
    if not isinstance(commands, list):
        raise ProtocolError(f"expected a JSON array of commands, got {type(commands).__name__}")
    return commands
