"""What the pipeline's steps say to each other and keep in their tables: types and codecs.

Commands travel between the match and player partitions as positional JSON lists (compact: a
packed message holds thousands of them); table records are JSON objects with short keys (a
rating record is held for every player, so its size is the table's size). Both layouts are
written and read here only, as typed values in the code:

- match side commands: :class:`Snapshot` (``snap``), :class:`Abandon` (``abandon``),
  :class:`Forward` (``fwd``), :class:`Tick` (``tick``), :class:`Progress` (``progress``),
  :class:`AbandonWatermark` (``awm``);
- player side commands: :class:`Join` (``join``), :class:`Rate` (``rate``), :class:`Cancel`
  (``cancel``), :class:`Watermark` (``wm``);
- table records: :class:`RatingRecord` (table ``ratings``), :class:`PendingRecord` (table
  ``pending``), :class:`MatchEntry` (table ``matches``).

The bytes are those the pipeline wrote before these types existed (tests/unit/test_protocol.py
holds them literally), so a worker upgraded mid-stream reads what the old one wrote. Decoding
takes the parsed JSON as ``object`` and checks every field: a malformed command raises
:class:`ProtocolError`, whose message is the dead letter's reason.

Floats are written by orjson in their shortest exact form, so a state that goes through a
table, a changelog and a recovery is bit-for-bit the state that was stored.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, NotRequired, TypedDict, TypeVar, cast

import orjson

from stream.deadletters import Origin
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

# How many of a player's latest match ids the rating record keeps to recognise redeliveries.
RECENT_MATCHES = 16


class ProtocolError(ValueError):
    """A command or record that does not have the protocol's layout (the reason says where)."""


# --- checked reading of parsed JSON ----------------------------------------------------------


def _list(data: object, what: str) -> list[object]:
    if not isinstance(data, list):
        raise ProtocolError(f"{what}: expected a list, got {_kind(data)}")
    return data


def _dict(data: object, what: str) -> dict[str, object]:
    if not isinstance(data, dict):
        raise ProtocolError(f"{what}: expected an object, got {_kind(data)}")
    return data


def _str(data: object, what: str) -> str:
    if not isinstance(data, str):
        raise ProtocolError(f"{what}: expected a string, got {_kind(data)}")
    return data


def _int(data: object, what: str) -> int:
    if isinstance(data, bool) or not isinstance(data, int):
        raise ProtocolError(f"{what}: expected an integer, got {_kind(data)}")
    return data


def _number(data: object, what: str) -> float:
    # Kept as read (an int stays an int): the bytes written back are the bytes read.
    if isinstance(data, bool) or not isinstance(data, int | float):
        raise ProtocolError(f"{what}: expected a number, got {_kind(data)}")
    return data


def _optional_number(data: object, what: str) -> float | None:
    return None if data is None else _number(data, what)


def _bool(data: object, what: str) -> bool:
    if not isinstance(data, bool):
        raise ProtocolError(f"{what}: expected true or false, got {_kind(data)}")
    return data


def _field(data: dict[str, object], name: str, what: str) -> object:
    try:
        return data[name]
    except KeyError:
        raise ProtocolError(f"{what}: field {name!r} is missing") from None


def _strings(data: object, what: str) -> list[str]:
    items = _list(data, what)
    # One pass with no call per element (match ids in every record): the common, valid case.
    if all(type(item) is str for item in items):
        return cast("list[str]", items)
    return [_str(item, what) for item in items]


def _ints(data: object, what: str) -> list[int]:
    items = _list(data, what)
    if all(type(item) is int for item in items):
        return cast("list[int]", items)
    return [_int(item, what) for item in items]


def _kind(data: object) -> str:
    return "null" if data is None else type(data).__name__


def _arity(items: list[object], what: str, *counts: int) -> None:
    if len(items) not in counts:
        expected = " or ".join(str(c) for c in counts)
        raise ProtocolError(f"{what}: expected {expected} elements, got {len(items)}")


# --- player states and table keys -------------------------------------------------------------


def encode_state(state: PlayerState) -> list[object]:
    """[rating, deviation, volatility | None, rank_points, games, last_played | None]"""
    return [
        state.rating,
        state.deviation,
        state.volatility,
        state.rank_points,
        state.games,
        state.last_played,
    ]


def decode_state(data: object) -> PlayerState:
    # The hottest decoder (every rating record and snapshot): converted as before the protocol
    # had types, a wrong element turned into ProtocolError.
    if not isinstance(data, list) or len(data) != 6:
        raise ProtocolError(f"state: expected a list of 6 elements, got {data!r:.80}")
    rating, deviation, volatility, rank_points, games, last_played = data
    try:
        return PlayerState(
            float(rating),
            float(deviation),
            None if volatility is None else float(volatility),
            int(rank_points),
            int(games),
            None if last_played is None else float(last_played),
        )
    except (TypeError, ValueError) as exc:
        raise ProtocolError(f"state: {exc}") from None


def _optional_state(data: object) -> PlayerState | None:
    return None if data is None else decode_state(data)


def _encode_optional_state(state: PlayerState | None) -> list[object] | None:
    return None if state is None else encode_state(state)


def rating_key(player_id: str, mode: str) -> str:
    """The rating table's key: unambiguous for any player id and mode."""
    return orjson.dumps([player_id, mode]).decode()


def decode_rating_key(data: object) -> tuple[str, str]:
    """(player id, mode) from a rating table key (as :func:`rating_key` wrote it)."""
    try:
        items = _list(orjson.loads(_str(data, "rating key")), "rating key")
    except orjson.JSONDecodeError as exc:
        raise ProtocolError(f"rating key: not valid JSON: {exc}") from None
    _arity(items, "rating key", 2)
    return _str(items[0], "rating key player"), _str(items[1], "rating key mode")


def _encode_stats(stats: dict[str, PlayerStats] | None) -> dict[str, list[float]] | None:
    return None if stats is None else {pid: [s.score, s.seconds] for pid, s in stats.items()}


def _decode_stats(data: object, what: str) -> dict[str, PlayerStats] | None:
    if data is None:
        return None
    stats: dict[str, PlayerStats] = {}
    for pid, pair in _dict(data, what).items():
        items = _list(pair, what)
        _arity(items, what, 2)
        stats[pid] = PlayerStats(_number(items[0], what), _number(items[1], what))
    return stats


def _teams(data: object, what: str) -> list[list[str]]:
    return [_strings(team, what) for team in _list(data, what)]


# --- an input message kept or forwarded --------------------------------------------------------


@fast_init
@dataclass(frozen=True, slots=True)
class StoredMessage:
    """An input message as JSON, with its bytes and origin intact."""

    key: bytes | None
    value: bytes
    origin: Origin


def encode_message(message: StoredMessage) -> dict[str, object]:
    key, origin = message.key, message.origin
    return {
        # Keys can be any bytes: latin-1 maps each byte to one character and back. The value
        # parsed as JSON, which orjson accepts only as UTF-8.
        "key": None if key is None else key.decode("latin-1"),
        "value": message.value.decode(),
        "origin": [origin.topic, origin.partition, origin.offset, origin.timestamp_ms],
    }


def decode_message(data: object) -> StoredMessage:
    what = "stored message"
    fields = _dict(data, what)
    key = _field(fields, "key", what)
    origin = _list(_field(fields, "origin", what), f"{what} origin")
    _arity(origin, f"{what} origin", 4)
    topic, partition, offset, timestamp_ms = origin
    return StoredMessage(
        None if key is None else _str(key, f"{what} key").encode("latin-1"),
        _str(_field(fields, "value", what), f"{what} value").encode(),
        Origin(
            _str(topic, f"{what} origin"),
            _int(partition, f"{what} origin"),
            _int(offset, f"{what} origin"),
            None if timestamp_ms is None else _int(timestamp_ms, f"{what} origin"),
        ),
    )


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
            snap: list[object] = ["snap", match_id, player_id, _encode_optional_state(state)]
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
                _encode_stats(command.stats),
                {pid: _encode_optional_state(s) for pid, s in command.snapshots.items()},
                [[p.player_id, p.forced, p.label] for p in command.players],
                command.finished_ms,
            ]
        case Cancel(match_id, players):
            return ["cancel", match_id, players]


def _items(data: object, side: str) -> tuple[str, list[object]]:
    items = _list(data, f"{side} command")
    if not items or not isinstance(items[0], str):
        raise ProtocolError(f"{side} command: expected a list led by its kind, got {data!r:.80}")
    return items[0], items


def decode_match_command(data: object) -> MatchCommand:
    """A match side command from its parsed JSON; ProtocolError if malformed or unknown."""
    kind, items = _items(data, "match")
    # The reasons are spelt out per kind, not formatted: this runs for every command.
    if kind == "snap":
        what = "snap command"
        _arity(items, what, 5, 6)
        return Snapshot(
            _str(items[1], what),
            _str(items[2], what),
            _optional_state(items[3]),
            _bool(items[4], what),
            _number(items[5], what) if len(items) == 6 else None,
        )
    if kind == "abandon":
        what = "abandon command"
        _arity(items, what, 4)
        return Abandon(_str(items[1], what), _str(items[2], what), _number(items[3], what))
    if kind == "fwd":
        what = "fwd command"
        _arity(items, what, 3)
        return Forward(_str(items[1], what), decode_message(items[2]))
    if kind == "tick":
        what = "tick command"
        _arity(items, what, 2)
        return Tick(_number(items[1], what))
    if kind == "progress":
        what = "progress command"
        _arity(items, what, 6)
        return Progress(
            _int(items[1], what),
            _number(items[2], what),
            _optional_number(items[3], what),
            _optional_number(items[4], what),
            _optional_number(items[5], what),
        )
    if kind == "awm":
        what = "awm command"
        _arity(items, what, 3)
        return AbandonWatermark(_int(items[1], what), _number(items[2], what))
    raise ProtocolError(f"unknown match command {kind!r}")


def decode_player_command(data: object) -> PlayerCommand:
    """A player side command from its parsed JSON; ProtocolError if malformed or unknown."""
    kind, items = _items(data, "player")
    if kind == "join":
        what = "join command"
        _arity(items, what, 6)
        return Join(
            _str(items[1], what),
            _str(items[2], what),
            _str(items[3], what),
            _number(items[4], what),
            _int(items[5], what),
        )
    if kind == "rate":
        what = "rate command"
        # Version 1 commands (9 elements) may still be in the topic during an upgrade, and a
        # newer release may add elements: readers ignore what they do not know.
        if len(items) < 9:
            raise ProtocolError(f"{what}: expected at least 9 elements, got {len(items)}")
        snapshots = {pid: _optional_state(state) for pid, state in _dict(items[7], what).items()}
        players = []
        for item in _list(items[8], what):
            rated = _list(item, "rate command player")
            _arity(rated, "rate command player", 3)
            pid, forced, label = rated
            players.append(
                RatedPlayer(
                    _str(pid, what),
                    None if forced is None else _number(forced, what),
                    None if label is None else _str(label, what),
                )
            )
        finished_ms = items[9] if len(items) > 9 else None
        return Rate(
            match_id=_str(items[1], what),
            mode=_str(items[2], what),
            at=_number(items[3], what),
            teams=_teams(items[4], what),
            ranks=_ints(items[5], what),
            stats=_decode_stats(items[6], what),
            snapshots=snapshots,
            players=players,
            finished_ms=None if finished_ms is None else _int(finished_ms, what),
        )
    if kind == "cancel":
        what = "cancel command"
        _arity(items, what, 3)
        return Cancel(_str(items[1], what), _strings(items[2], what))
    if kind == "wm":
        what = "wm command"
        _arity(items, what, 3)
        return Watermark(_int(items[1], what), _number(items[2], what))
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


# --- table records -------------------------------------------------------------------------------
#
# Table records are trusted: only this module's encoders write them, into tables and changelogs
# that only the worker writes. Their decoders check the shape (a missing field or a value of the
# wrong kind where it is used raises ProtocolError) but do not re-check the type of every
# field, as the command decoders do for what arrives on a topic. Every batch reads its records
# this way; checked field by field a match entry took 12.3 µs to decode against 3.6 µs now
# (orjson alone: 1.9), a pending record 3.5 against 2.0 and a rating record 2.6 against 1.7
# (timeit, best of 5, this repository's commit 812a804 against its parent). The layouts, as
# JSON, are these TypedDicts.


class _RatingFields(TypedDict):
    s: list[object]
    v: int
    r: NotRequired[list[str]]


class _PendingMatchFields(TypedDict):
    mode: str
    at: float
    home: int
    snap: bool
    req: NotRequired[bool]


class _PendingFields(TypedDict):
    m: dict[str, _PendingMatchFields]
    done: list[str]


class _FinishFields(TypedDict):
    at: float
    ts: NotRequired[int | None]
    ranks: list[int]
    quitters: list[str]
    stats: dict[str, tuple[float, float]] | None


class _WaitingFields(TypedDict):
    message: object
    until: float


class _MatchFields(TypedDict):
    mode: str
    teams: list[list[str]] | None
    start: float | None
    snaps: dict[str, list[object] | None]
    fin: _FinishFields | None
    wait: _WaitingFields | None
    aband: dict[str, float]
    settled: list[str]
    done: float | None


def _malformed(what: str, data: object, exc: Exception) -> ProtocolError:
    return ProtocolError(f"{what}: malformed ({type(exc).__name__}: {exc}): {data!r:.120}")


@dataclass(slots=True)
class RatingRecord:
    """Table ``ratings``, per (player, mode): ``{"s": state, "v": version, "r": recent ids}``.
    The recent match ids are what make a redelivered result a no-op."""

    state: PlayerState
    version: int
    recent: list[str]


def encode_rating(record: RatingRecord) -> dict[str, object]:
    return {"s": encode_state(record.state), "v": record.version, "r": record.recent}


def decode_rating(data: object) -> RatingRecord:
    try:
        fields = cast("_RatingFields", data)
        return RatingRecord(decode_state(fields["s"]), fields["v"], fields.get("r", []))
    except (KeyError, TypeError, AttributeError) as exc:
        raise _malformed("rating record", data, exc) from None


@dataclass(slots=True)
class PendingMatch:
    """One match a player started and has not settled (``snap``: snapshot sent; ``req``:
    abandonment requested)."""

    mode: str
    at: float
    home: int
    snap: bool = False
    req: bool = False


@dataclass(slots=True)
class PendingRecord:
    """Table ``pending``, per player: ``{"m": {match id: entry}, "done": [cancelled ids]}``."""

    matches: dict[str, PendingMatch] = field(default_factory=dict)
    done: list[str] = field(default_factory=list)


def encode_pending(record: PendingRecord) -> dict[str, object]:
    matches: dict[str, object] = {}
    for match_id, entry in record.matches.items():
        fields: dict[str, object] = {
            "mode": entry.mode,
            "at": entry.at,
            "home": entry.home,
            "snap": entry.snap,
        }
        if entry.req:  # written only once requested, as before the protocol had types
            fields["req"] = True
        matches[match_id] = fields
    return {"m": matches, "done": record.done}


def decode_pending(data: object) -> PendingRecord:
    try:
        fields = cast("_PendingFields", data)
        matches = {
            match_id: PendingMatch(e["mode"], e["at"], e["home"], e["snap"], e.get("req", False))
            for match_id, e in fields["m"].items()
        }
        return PendingRecord(matches, fields["done"])
    except (KeyError, TypeError, AttributeError) as exc:
        raise _malformed("pending record", data, exc) from None


@dataclass(slots=True)
class Finish:
    """A match's result as the match entry keeps it (``fin``)."""

    at: float
    ts: int | None  # the finish's Kafka timestamp (ms): the latency metric's start
    ranks: list[int]
    quitters: list[str]
    stats: dict[str, PlayerStats] | None


@dataclass(slots=True)
class Waiting:
    """A finish with no line-up, waiting for its start until ``until`` (``wait``)."""

    message: StoredMessage
    until: float


@dataclass(slots=True)
class MatchEntry:
    """Table ``matches``, per match id: the line-up, snapshots, result and who is settled.

    Without ``teams`` it is either a finish waiting for its start (``wait``) or, with neither,
    the snapshots and abandon requests read before the start they answer (a partition reading
    its inputs again after a crash reads them in another order), with ``start`` when a
    snapshot named it.
    """

    mode: str
    teams: list[list[str]] | None
    start: float | None
    snaps: dict[str, PlayerState | None] = field(default_factory=dict)
    fin: Finish | None = None
    wait: Waiting | None = None
    aband: dict[str, float] = field(default_factory=dict)  # player id: newer match's start
    settled: list[str] = field(default_factory=list)
    done: float | None = None  # event time it was settled at


def encode_match(entry: MatchEntry) -> dict[str, object]:
    fin, wait = entry.fin, entry.wait
    return {
        "mode": entry.mode,
        "teams": entry.teams,
        "start": entry.start,
        "snaps": {pid: _encode_optional_state(s) for pid, s in entry.snaps.items()},
        "fin": None
        if fin is None
        else {
            "at": fin.at,
            "ts": fin.ts,
            "ranks": fin.ranks,
            "quitters": fin.quitters,
            "stats": _encode_stats(fin.stats),
        },
        "wait": None
        if wait is None
        else {"message": encode_message(wait.message), "until": wait.until},
        "aband": entry.aband,
        "settled": entry.settled,
        "done": entry.done,
    }


def decode_match(data: object) -> MatchEntry:
    try:
        fields = cast("_MatchFields", data)
        fin, wait, snaps = fields["fin"], fields["wait"], fields["snaps"]
        stats = None if fin is None else fin["stats"]
        return MatchEntry(
            mode=fields["mode"],
            teams=fields["teams"],
            start=fields["start"],
            snaps={pid: None if s is None else decode_state(s) for pid, s in snaps.items()},
            fin=None
            if fin is None
            else Finish(
                fin["at"],
                fin.get("ts"),  # absent in entries written before the latency metric
                fin["ranks"],
                fin["quitters"],
                None
                if stats is None
                else {pid: PlayerStats(score, seconds) for pid, (score, seconds) in stats.items()},
            ),
            wait=None if wait is None else Waiting(decode_message(wait["message"]), wait["until"]),
            aband=fields["aband"],
            settled=fields["settled"],
            done=fields["done"],
        )
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise _malformed("match entry", data, exc) from None


# --- table codecs --------------------------------------------------------------------------------

K = TypeVar("K")
V = TypeVar("V")


@dataclass(frozen=True, slots=True)
class TableCodec(Generic[K, V]):
    """How one table's keys and values become JSON bytes and back."""

    encode_key: Callable[[K], object]
    encode: Callable[[V], object]
    decode: Callable[[object], V]

    def key_bytes(self, key: K) -> bytes:
        return orjson.dumps(self.encode_key(key))

    def value_bytes(self, value: V) -> bytes:
        return orjson.dumps(self.encode(value))

    def value(self, data: bytes) -> V:
        return self.decode(orjson.loads(data))


def _same(value: str) -> object:
    return value


def _decode_clock(data: object) -> float:
    return float(_number(data, "clock"))


def _encode_clock(value: float) -> object:
    return value


def _partition(value: int) -> object:
    return value


MATCHES: TableCodec[str, MatchEntry] = TableCodec(_same, encode_match, decode_match)
RATINGS: TableCodec[str, RatingRecord] = TableCodec(_same, encode_rating, decode_rating)
PENDING: TableCodec[str, PendingRecord] = TableCodec(_same, encode_pending, decode_pending)
# Table ``clocks``: a match partition's event time, keyed by the partition number.
CLOCKS: TableCodec[int, float] = TableCodec(_partition, _encode_clock, _decode_clock)
