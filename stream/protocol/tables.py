"""The table records (``ratings``, ``pending``, ``matches``, ``clocks``, ``populations``) and
their codecs:
trusted, since only this package's encoders write them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any, Generic, NotRequired, TypedDict, TypeVar, cast

import orjson

from stream.protocol.checks import (
    ProtocolError,
    as_number,
)
from stream.protocol.state import (
    StoredMessage,
    decode_message,
    decode_population,
    decode_state,
    encode_message,
    encode_optional_state,
    encode_population,
    encode_state,
    encode_stats,
)
from stream.ratings.population import PopulationStats
from stream.ratings.population.chain import Chain, Step
from stream.ratings.population.evidence import Evidence
from stream.ratings.skill import PlayerState, PlayerStats

# How many of a player's latest match ids the rating record keeps to recognise redeliveries.
RECENT_MATCHES = 16


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
    l: NotRequired[int]  # noqa: E741 (the record's short key)
    a: NotRequired[list[str]]
    f: NotRequired[list[str]]


class _PendingMatchFields(TypedDict):
    mode: str
    at: float
    home: int
    snap: bool
    req: NotRequired[bool]
    o: NotRequired[float]
    f: NotRequired[float]
    g: NotRequired[int]


class _PendingFields(TypedDict):
    m: dict[str, _PendingMatchFields]
    done: list[str]
    v: NotRequired[dict[str, int]]


class _FinishFields(TypedDict):
    at: float
    ts: NotRequired[int | None]
    ranks: list[int]
    quitters: list[str]
    stats: dict[str, tuple[float, float]] | None
    parties: NotRequired[list[list[str]]]


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
    lines: NotRequired[dict[str, int]]
    ev: NotRequired[list[int]]
    ord: NotRequired[float]
    late: NotRequired[bool]
    pos: NotRequired[dict[str, float]]


def _malformed(what: str, data: object, exc: Exception) -> ProtocolError:
    return ProtocolError(f"{what}: malformed ({type(exc).__name__}: {exc}): {data!r:.120}")


@dataclass(slots=True)
class RatingRecord:
    """Table ``ratings``, per (player, mode): ``{"s": state, "v": version, "r": recent ids}``,
    and ``"l"``, the line-up key of the player's last team match in a mode that learns its
    population (stream/ratings/population/__init__.py ``lineup_key``; its persistence). The recent
    match ids are what make a redelivered result a no-op; ``"a"``, the ids of the operator's
    adjustments applied to it (every one: they are few), what makes one applied once; ``"f"``,
    the ids of the matches refunded to the player since their last counted result (a refund
    adds no game, so the game count cannot tell a redelivered one once it has left the recent
    ids; a counted result empties it, and from then on the count does)."""

    state: PlayerState
    version: int
    recent: list[str]
    lineup: int | None = None
    adjusted: list[str] = field(default_factory=list)
    refunded: list[str] = field(default_factory=list)


def encode_rating(record: RatingRecord) -> dict[str, object]:
    out: dict[str, object] = {"s": encode_state(record.state), "v": record.version}
    out["r"] = record.recent
    if record.lineup is not None:
        out["l"] = record.lineup
    if record.adjusted:
        out["a"] = record.adjusted
    if record.refunded:
        out["f"] = record.refunded
    return out


def decode_rating(data: object) -> RatingRecord:
    try:
        fields = cast("_RatingFields", data)
        return RatingRecord(
            decode_state(fields["s"]),
            fields["v"],
            fields.get("r", []),
            fields.get("l"),
            fields.get("a", []),
            fields.get("f", []),
        )
    except (KeyError, TypeError, AttributeError) as exc:
        raise _malformed("rating record", data, exc) from None


@dataclass(slots=True)
class PendingMatch:
    """One match a player started and has not settled (``snap`` and ``req``: its snapshot sent,
    its abandonment requested, as records written before both were kept in memory only say).
    A start read late (stream.protocol.Join, ``ask``) has a ``floor`` (the player's position,
    sent home) until its ``order`` comes. ``games``: the games of the state the player's
    snapshot would have carried when the match became pending (None in records written before
    it was kept; stream/pipeline/players.py, ``_still_pending``)."""

    mode: str
    at: float
    home: int
    snap: bool = False
    req: bool = False
    order: float | None = None
    floor: float | None = None
    games: int | None = None

    @property
    def turn(self) -> float:
        """When the player's turn for it comes: its start, a late start's order, or while that
        is not known, its floor (the order is no earlier)."""
        if self.order is not None:
            return self.order
        return self.at if self.floor is None else self.floor

    @property
    def unordered(self) -> bool:
        """A start read late whose order has not come yet: nothing from its turn on goes."""
        return self.floor is not None and self.order is None


@dataclass(slots=True)
class PendingRecord:
    """Table ``pending``, per player: ``{"m": {match id: entry}, "done": [cancelled ids],
    "v": {mode: version}}``. ``seen``: per mode, the version of the player's rating record when
    a result last settled a match here (stream/pipeline/players.py: a rating record restored
    behind it is waited for, never rated from); written only when known."""

    matches: dict[str, PendingMatch] = field(default_factory=dict)
    done: list[str] = field(default_factory=list)
    seen: dict[str, int] = field(default_factory=dict)


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
        if entry.order is not None:
            fields["o"] = entry.order
        elif entry.floor is not None:
            fields["f"] = entry.floor
        if entry.games is not None:
            fields["g"] = entry.games
        matches[match_id] = fields
    out: dict[str, object] = {"m": matches, "done": record.done}
    if record.seen:
        out["v"] = record.seen
    return out


def decode_pending(data: object) -> PendingRecord:
    try:
        fields = cast("_PendingFields", data)
        matches = {
            match_id: PendingMatch(
                e["mode"],
                e["at"],
                e["home"],
                e["snap"],
                e.get("req", False),
                e.get("o"),
                e.get("f"),
                e.get("g"),
            )
            for match_id, e in fields["m"].items()
        }
        return PendingRecord(matches, fields["done"], dict(fields.get("v", {})))
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
    # The players who queued together (stream.ratings.parties; None: none named).
    parties: list[list[str]] | None = None


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
    finish: Finish | None = None
    wait: Waiting | None = None
    abandons: dict[str, float] = field(default_factory=dict)  # player id: newer match's start
    settled: list[str] = field(default_factory=list)
    done: float | None = None  # event time it was settled at
    # A learning mode's players' line-up keys at their previous team match, from the snapshots.
    lines: dict[str, int] = field(default_factory=dict)
    # A learning mode's match settled by its result: its evidence about the mode's population
    # (stream.ratings.population.evidence.Evidence.encode: 13 or 15 integers), kept until this
    # partition has sent it in a ``closed`` (stream/pipeline/learnedpopulation.py).
    evidence: list[int] | None = None
    # A start (or the finish standing in for it) read late, the players' positions it has
    # heard, and once every player's is in, the time their turns come at (Join, Position,
    # Ordered: docs/event-time.md, "Late starts").
    late: bool = False
    positions: dict[str, float] = field(default_factory=dict)
    order: float | None = None


def _encode_finish(fin: Finish) -> dict[str, object]:
    out: dict[str, object] = {
        "at": fin.at,
        "ts": fin.ts,
        "ranks": fin.ranks,
        "quitters": fin.quitters,
        "stats": encode_stats(fin.stats),
    }
    # Only when the finish names a party: what a worker before parties wrote otherwise.
    if fin.parties is not None:
        out["parties"] = fin.parties
    return out


def encode_match(entry: MatchEntry) -> dict[str, object]:
    fin, wait = entry.finish, entry.wait
    out: dict[str, object] = {
        "mode": entry.mode,
        "teams": entry.teams,
        "start": entry.start,
        "snaps": {pid: encode_optional_state(s) for pid, s in entry.snaps.items()},
        "fin": None if fin is None else _encode_finish(fin),
        "wait": None
        if wait is None
        else {"message": encode_message(wait.message), "until": wait.until},
        "aband": entry.abandons,
        "settled": entry.settled,
        "done": entry.done,
    }
    if entry.lines:
        out["lines"] = entry.lines
    if entry.evidence is not None:
        out["ev"] = entry.evidence
    if entry.late:
        out["late"] = True
    if entry.positions:
        out["pos"] = entry.positions
    if entry.order is not None:
        out["ord"] = entry.order
    return out


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
            finish=None
            if fin is None
            else Finish(
                fin["at"],
                fin.get("ts"),  # absent in entries written before the latency metric
                fin["ranks"],
                fin["quitters"],
                None
                if stats is None
                else {pid: PlayerStats(score, seconds) for pid, (score, seconds) in stats.items()},
                fin.get("parties"),
            ),
            wait=None if wait is None else Waiting(decode_message(wait["message"]), wait["until"]),
            abandons=fields["aband"],
            settled=fields["settled"],
            done=fields["done"],
            lines=fields.get("lines", {}),
            evidence=fields.get("ev"),
            late=fields.get("late", False),
            positions=fields.get("pos", {}),
            order=fields.get("ord"),
        )
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise _malformed("match entry", data, exc) from None


@dataclass(slots=True)
class StoredChain:
    """A learning mode's population chain as a match partition keeps it
    (:class:`stream.ratings.population.chain.Chain`), with the ``settings`` it was learned
    under (a chain learned under other settings is started again)."""

    settings: str
    chain: Chain


@dataclass(slots=True)
class PopulationRecord:
    """Table ``populations``, per match partition: its side of the learned populations
    (stream/pipeline/learnedpopulation.py).

    ``until``: the last ``closed`` it sent (every match homed here that started before it is
    settled; the evidence of those matches went out with it: until then each match entry keeps
    its own, so no crash can count it twice or lose it); ``marks``: per match partition, the
    latest ``closed`` read from it; ``heard``: per mode, window and source partition, the
    evidence read and not folded yet; ``chains``: per mode, the chain folded from every
    partition's evidence.
    """

    until: float | None = None
    marks: dict[int, float] = field(default_factory=dict)
    heard: dict[str, dict[int, dict[int, Evidence]]] = field(default_factory=dict)
    chains: dict[str, StoredChain] = field(default_factory=dict)


def _encode_stats(stats: PopulationStats) -> list[float]:
    encoded = [float(getattr(stats, f.name)) for f in fields(PopulationStats)]
    # The party edge's two sums only when either is not 0: a mode whose matches name no
    # party writes what a worker before parties wrote (and reads).
    return encoded if any(encoded[-2:]) else encoded[:-2]


def _decode_stats(data: list[float]) -> PopulationStats:
    # 13 numbers: written without the party edge's sums (0); 11: before the debut offset was
    # learned; 9: before the drift was (the sums they lack are 0).
    if len(data) not in (9, 11, 13, 15):
        raise ValueError(f"population stats: expected 15 numbers, got {len(data)}")
    a, b, c, d, e, same_pairs, pairs, f, g, *later = data
    return PopulationStats(a, b, c, d, e, int(same_pairs), int(pairs), f, g, *later)


def _encode_chain(stored: StoredChain) -> dict[str, object]:
    chain = stored.chain
    return {
        "set": stored.settings,
        "i": encode_population(chain.initial),
        "c": encode_population(chain.current),
        "s": _encode_stats(chain.seen),
        "k": _encode_stats(chain.carried),
        "f": chain.folded,
        "st": [[step.window, encode_population(step.population)] for step in chain.steps],
    }


def _decode_chain(data: dict[str, Any]) -> StoredChain:
    what = "population chain"
    chain = Chain(
        decode_population(data["i"], what),
        decode_population(data["c"], what),
        _decode_stats(data["s"]),
        _decode_stats(data["k"]),
        data["f"],
        [Step(window, decode_population(p, what)) for window, p in data["st"]],
    )
    return StoredChain(data["set"], chain)


def encode_populations(record: PopulationRecord) -> dict[str, object]:
    return {
        "u": record.until,
        "m": {str(source): until for source, until in record.marks.items()},
        "h": {
            mode: [
                [w, source, e.encode()]
                for w, sources in sorted(windows.items())
                for source, e in sorted(sources.items())
            ]
            for mode, windows in record.heard.items()
        },
        "ch": {mode: _encode_chain(stored) for mode, stored in record.chains.items()},
    }


def decode_populations(data: object) -> PopulationRecord:
    try:
        fields = cast("dict[str, Any]", data)
        heard: dict[str, dict[int, dict[int, Evidence]]] = {}
        for mode, items in fields["h"].items():
            windows = heard[mode] = {}
            for w, source, e in items:
                windows.setdefault(w, {})[source] = Evidence.decode(e)
        return PopulationRecord(
            fields["u"],
            {int(source): until for source, until in fields["m"].items()},
            heard,
            {mode: _decode_chain(chain) for mode, chain in fields["ch"].items()},
        )
    except (KeyError, TypeError, AttributeError, ValueError, ProtocolError) as exc:
        raise _malformed("population record", data, exc) from None


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
    return float(as_number(data, "clock"))


def _encode_clock(value: float) -> object:
    return value


def _partition(value: int) -> object:
    return value


MATCHES: TableCodec[str, MatchEntry] = TableCodec(_same, encode_match, decode_match)
RATINGS: TableCodec[str, RatingRecord] = TableCodec(_same, encode_rating, decode_rating)
PENDING: TableCodec[str, PendingRecord] = TableCodec(_same, encode_pending, decode_pending)
# Table ``clocks``: a match partition's event time, keyed by the partition number.
CLOCKS: TableCodec[int, float] = TableCodec(_partition, _encode_clock, _decode_clock)
# Table ``populations``: a match partition's side of the learned populations, keyed likewise.
POPULATIONS: TableCodec[int, PopulationRecord] = TableCodec(
    _partition, encode_populations, decode_populations
)
