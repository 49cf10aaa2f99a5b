"""The commands between the match and player partitions: checked, since they arrive on a topic.

Positional JSON lists led by their kind (compact: a packed message holds thousands of them).
Every field is checked when decoded: a malformed command raises ProtocolError and is
dead-lettered alone."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

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
    decode_population,
    decode_stats,
    decode_teams,
    encode_message,
    encode_optional_state,
    encode_population,
    encode_stats,
)
from stream.ratings.fastinit import fast_init
from stream.ratings.population import Population
from stream.ratings.population.evidence import Evidence
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
# 4 worker dead-letters those snapshots as malformed. Version 6 added the learned population:
# the player's line-up key as the 7th ``snap`` element, the population as the 11th ``rate``
# element (both written only when the mode learns its population) and ``closed`` (a match
# partition's settled evidence, docs/defaults.md); same rule: a version 5 worker dead-letters
# ``closed`` as unknown and rates a learning mode's match with its configured population.
# Version 7 added ``adj`` (an operator's adjustment a re-rating worker's player partition sends
# itself, stream/pipeline/players.py): only a worker with a corrections file holding
# adjustments writes it. Version 8 added the learned drift (stream/ratings/drift.py): a learning
# mode's states carry two more elements (the drift slopes), its population a fifth (the drift
# period) and its evidence eleven integers; decoders read version 7's forms as no slopes, the
# algorithm's own period and no drift evidence. A version 7 worker refuses the longer states as
# malformed: upgrade every worker of a group together. Version 9 added the learned debut offset
# (stream/ratings/population/__init__.py): a learning mode's population carries a sixth
# element and its evidence thirteen integers; decoders read version 8's forms as the mode's
# own offset and no offset evidence. A version 8 worker refuses both as malformed: the same rule.
# Version 10 replaced the all-to-all exchanges of the event-time protocol with one combiner
# (docs/event-time.md): ``rep`` and ``prep`` (a match and a player partition's report to it),
# ``view`` (its answer to a match partition) and ``gwm`` (to a player partition). A version 9
# worker dead-letters them as unknown; a version 10 worker reads the ``progress``, ``wm`` and
# ``awm`` a version 9 worker left and ignores them: upgrade every worker of a group together.
# Version 11 named a player partition's life in ``prep`` (with the combiner's life and round of
# the latest ``gwm`` it read) and the round in ``gwm``, so that a late report of a worker cut off
# from its group cannot speak for the partition's reader (docs/event-time.md); decoders read
# version 10's forms as no life and no round. A version 10 worker refuses the longer forms as
# malformed: upgrade every worker of a group together.
# Version 12 added parties (stream/ratings/parties.py): a match's parties as the 12th ``rate``
# element, a learning mode's party edge as the population's seventh element and the party
# edge's evidence as its 14th and 15th integers, each written only when a match names a party
# (or the edge is not 0), so that a group whose fleets name none writes what version 11 wrote.
# A version 11 worker ignores the 12th element (it would rate the match without its parties)
# and refuses the longer population and evidence as malformed: upgrade every worker of a group
# together before the fleets send parties.
# Version 13 ordered the starts read late (docs/event-time.md, "Late starts"): a ``join`` of
# one asks for the player's position (its 7th element, after the order as its 6th, both written
# only then), ``pos`` answers it, ``ord`` orders the match for its players, and a ``snap`` for
# it names the turn it was taken for (its 7th element). A version 12
# worker refuses those joins as malformed and dead-letters the two new commands as unknown:
# upgrade every worker of a group together.
PROTOCOL_VERSION = 13


# --- match side commands -------------------------------------------------------------------------


@fast_init
@dataclass(frozen=True, slots=True)
class Snapshot:
    """A player's state for a match (None: no rating yet); ``applied``: the player already
    has this match (a duplicate after the retention period); ``at``: the match's start, as the
    join gave it (None from workers before it was sent: a match side that reads the snapshot
    before the start keeps it until the start comes, see stream/pipeline/matches.py);
    ``lineup``: the line-up key of the player's previous team match in the mode, for a mode
    that learns its population (None: none, or the mode does not learn)."""

    match_id: str
    player_id: str
    state: PlayerState | None
    applied: bool
    at: float | None = None
    lineup: int | None = None
    # A start read late: the turn it was taken for (the order, or before it came, the start),
    # so a home that ordered the match later drops one taken before (docs/event-time.md).
    turn: float | None = None


@fast_init
@dataclass(frozen=True, slots=True)
class Abandon:
    """The player started a newer match at ``since``: abandon this one after the grace period."""

    match_id: str
    player_id: str
    since: float


@fast_init
@dataclass(frozen=True, slots=True)
class Position:
    """Answers a join that asked: the player's turn for the match comes no earlier than
    ``floor`` (the start, or the partition's watermark when the join came if that was later:
    the player may have had a snapshot sent for a match before it)."""

    match_id: str
    player_id: str
    floor: float


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
    are still waiting there (0.0: none read yet), or, once it has read everything the broker
    held at its last answer for that input, the latest event time it knew of then (its clock
    then, moved on with wall time: nothing it reads next is older, up to the lateness;
    stream/pipeline/watermarks.py, ``_bound``). None, which workers before 2026-11-29 sent for
    "read everything", bounds nothing. ``latest``: the latest event time read on any of its
    inputs (None: none yet).
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


@fast_init
@dataclass(frozen=True, slots=True)
class WindowClosed:
    """Match partition ``source`` has settled every match homed there that started before
    ``until`` (and read every start before it), and adds, per mode and learning window, the
    evidence of the windows that ended since its previous ``closed`` (sent to every match
    partition, itself included, when ``until`` passes the end of a window; stream/pipeline/
    learnedpopulation.py). A window's population is known once every partition has closed the
    windows it folds."""

    source: int
    until: float
    evidence: dict[str, dict[int, Evidence]]


@fast_init
@dataclass(frozen=True, slots=True)
class Report:
    """Match partition ``source``'s report to the combiner (match-command partition 0), sent
    once the broker has acknowledged the rest of its batch (docs/event-time.md): so whatever
    the combiner sends on after reading it lands after every forward and join it covers.

    ``epoch``/``round``: the latest view it has processed (0/0: none). ``started`` and
    ``finished``: per input topic, the latest event time processed while records still wait
    there (0.0: none read yet), or once it has read all the broker holds, its clock.
    ``latest``: the latest event time read on its inputs (None: none). ``unjoined``: the
    earliest finish with a line-up still waiting here for its start (None: none), whose joins
    go out only once event time passes it. ``forwarded``: per partition it forwarded events to
    since its last report, the earliest event time among them. ``pending``: it holds a match
    not settled yet, so event time must keep moving. ``life``: names the partition's life on
    its worker (a restore starts a new one)."""

    source: int
    life: int
    epoch: int
    round: int
    started: float
    finished: float
    latest: float | None
    unjoined: float | None
    forwarded: dict[int, float]
    pending: bool


@fast_init
@dataclass(frozen=True, slots=True)
class PlayerReport:
    """Player partition ``source``'s report to the combiner, sent once the broker has
    acknowledged the rest of its batch: it has handled every join of a match started before
    ``floor`` (None: no watermark yet), and so sent every abandon request those caused.
    ``pending``: a player of it waits for the watermark (a snapshot, an adjustment).
    ``life``: names this life of the partition on its worker; ``epoch``, ``round``: the
    combiner's life and round of the latest ``gwm`` read (0: none; version 10's reports carry
    none of the three)."""

    source: int
    floor: float | None
    pending: bool
    life: int = 0
    epoch: int = 0
    round: int = 0


@fast_init
@dataclass(frozen=True, slots=True)
class View:
    """The combiner's answer to one match partition, round ``round`` of its life ``epoch``:
    the lowest ``started`` and ``finished`` bound among the *other* match partitions' reports
    (None: not all have reported), the latest event time read anywhere, and ``abandons``: every
    player partition has sent every abandon request for a start before it (None: not known).
    Each is a promise about when it was made; receivers keep the highest. ``tick``: sent on
    the combiner's tick, a round to every partition, which is the partition's tick too (it
    samples event time for settling and reports at the end of the batch); otherwise sent
    between ticks because the view changed."""

    epoch: int
    round: int
    started: float | None
    finished: float | None
    latest: float | None
    abandons: float | None
    tick: bool


MatchCommand = (
    Snapshot
    | Abandon
    | Position
    | Forward
    | Tick
    | Progress
    | AbandonWatermark
    | WindowClosed
    | Report
    | PlayerReport
    | View
)


# --- player side commands ------------------------------------------------------------------------


@fast_init
@dataclass(frozen=True, slots=True)
class Join:
    """The player is in a match: note it pending, send the snapshot when its turn comes.

    For a start read late (docs/event-time.md, "Late starts"): ``ask``, the home asks the
    player partition how far its watermark was when the join came (a :class:`Position`), and
    the match's turn waits for the :class:`Ordered` that answers every player's; ``order``,
    that turn's time, once known (None: its start)."""

    match_id: str
    player_id: str
    mode: str
    started_at: float
    home: int  # the match's partition, where snapshots and abandon requests go
    order: float | None = None
    ask: bool = False


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
    # The mode's learned population in force for the match (None: the mode's configured
    # values): the player partition rates with exactly what the match partition chose.
    population: Population | None = None
    # The players who queued together (stream.ratings.parties; None: none named).
    parties: list[list[str]] | None = None


@fast_init
@dataclass(frozen=True, slots=True)
class Ordered:
    """The turn of a match whose start was read late comes at ``order`` for these players:
    the latest of its start and every player's :class:`Position`, the same for all."""

    match_id: str
    order: float
    players: list[str]


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


@fast_init
@dataclass(frozen=True, slots=True)
class Adjusting:
    """Apply the operator's adjustment ``adjust_id`` to ``player_id`` (stream/pipeline/
    players.py): sent by the player's partition to itself once the adjustment is due, so it is
    applied after every command already in the partition's log, as read again after a crash."""

    player_id: str
    adjust_id: str


@fast_init
@dataclass(frozen=True, slots=True)
class Combined:
    """The combiner's watermark for every player partition: every match partition has sent
    the join of every match started before ``at`` (None: not known yet; the combiner asks for a
    report). Sent after the reports it rests on, so after those joins. ``epoch``, ``round``: the
    combiner's life and the round it went out in, which the partition's next report repeats
    (0: a version 10 combiner's)."""

    at: float | None
    epoch: int = 0
    round: int = 0


PlayerCommand = Join | Rate | Ordered | Cancel | Watermark | Adjusting | Combined
Command = MatchCommand | PlayerCommand


# --- one declaration per command ---------------------------------------------------------------
#
# Each command is declared once, below: its kind, its class and, in wire order (the class's
# field order), how each element is written and read back. ``encode_command`` and the two
# decoders follow from the declarations; adding a field is one line here and one in the class.


@dataclass(frozen=True, slots=True)
class Element:
    """One positional element of a command: how it is written, and read back (checked)."""

    encode: Callable[[Any], object]
    decode: Callable[[object, str], Any]
    # Older versions end before it: read as the class's default. ``omit_none``: not written
    # when None (a version that does not know it still reads the command).
    optional: bool = False
    omit_none: bool = False


@dataclass(frozen=True)
class Declaration:
    kind: str
    command: type[Any]
    side: str  # "match" or "player": which partition reads it
    elements: tuple[Element, ...]
    # A later version may append elements: readers ignore what they do not know.
    open_ended: bool = False


def _flag(value: bool) -> bool | None:
    """A flag written only when set (a trailing element left out otherwise)."""
    return True if value else None


def _same(value: object) -> object:
    return value


def _optional_int(data: object, what: str) -> int | None:
    return None if data is None else as_int(data, what)


def _optional_teams(data: object, what: str) -> list[list[str]] | None:
    return None if data is None else decode_teams(data, what)


def _state(data: object, what: str) -> PlayerState | None:
    return decode_optional_state(data)


def _message(data: object, what: str) -> StoredMessage:
    return decode_message(data)


def _snapshots(data: object, what: str) -> dict[str, PlayerState | None]:
    return {pid: decode_optional_state(state) for pid, state in as_dict(data, what).items()}


def _encode_snapshots(snapshots: dict[str, PlayerState | None]) -> object:
    return {pid: encode_optional_state(s) for pid, s in snapshots.items()}


def _players(data: object, what: str) -> list[RatedPlayer]:
    players = []
    for item in as_list(data, what):
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
    return players


def _encode_players(players: list[RatedPlayer]) -> object:
    return [[p.player_id, p.forced, p.label] for p in players]


def _encode_population(population: Population | None) -> object:
    return None if population is None else encode_population(population)


def _population(data: object, what: str) -> Population | None:
    return None if data is None else decode_population(data, what)


def _encode_evidence(evidence: dict[str, dict[int, Evidence]]) -> object:
    return {
        mode: [[window, found.encode()] for window, found in sorted(windows.items())]
        for mode, windows in evidence.items()
    }


def _evidence(data: object, what: str) -> dict[str, dict[int, Evidence]]:
    out: dict[str, dict[int, Evidence]] = {}
    for mode, windows in as_dict(data, what).items():
        found: dict[int, Evidence] = {}
        for item in as_list(windows, what):
            pair = as_list(item, what)
            arity(pair, what, 2)
            try:
                found[as_int(pair[0], what)] = Evidence.decode(as_ints(pair[1], what))
            except ValueError as exc:
                raise ProtocolError(f"{what}: {exc}") from None
        out[mode] = found
    return out


def _encode_forwarded(forwarded: dict[int, float]) -> object:
    return [[partition, at] for partition, at in sorted(forwarded.items())]


def _forwarded(data: object, what: str) -> dict[int, float]:
    found: dict[int, float] = {}
    for item in as_list(data, what):
        pair = as_list(item, what)
        arity(pair, what, 2)
        found[as_int(pair[0], what)] = as_number(pair[1], what)
    return found


STR = Element(_same, as_str)
INT = Element(_same, as_int)
NUMBER = Element(_same, as_number)
MAYBE_NUMBER = Element(_same, as_optional_number)
BOOL = Element(_same, as_bool)
# An integer a later version appended (read as the class's default when absent).
LATER_INT = Element(_same, as_int, optional=True)

DECLARATIONS = (
    Declaration(
        "snap",
        Snapshot,
        "match",
        (
            STR,
            STR,
            Element(encode_optional_state, _state),
            BOOL,
            Element(_same, as_optional_number, optional=True, omit_none=True),
            Element(_same, _optional_int, optional=True, omit_none=True),
            # Since version 13, for a start read late only.
            Element(_same, as_optional_number, optional=True, omit_none=True),
        ),
    ),
    Declaration("abandon", Abandon, "match", (STR, STR, NUMBER)),
    Declaration("pos", Position, "match", (STR, STR, NUMBER)),
    Declaration("fwd", Forward, "match", (STR, Element(encode_message, _message))),
    Declaration("tick", Tick, "match", (NUMBER,)),
    Declaration(
        "progress", Progress, "match", (INT, NUMBER, MAYBE_NUMBER, MAYBE_NUMBER, MAYBE_NUMBER)
    ),
    Declaration("awm", AbandonWatermark, "match", (INT, NUMBER)),
    Declaration(
        "rep",
        Report,
        "match",
        (
            INT,
            INT,
            INT,
            INT,
            NUMBER,
            NUMBER,
            MAYBE_NUMBER,
            MAYBE_NUMBER,
            Element(_encode_forwarded, _forwarded),
            BOOL,
        ),
    ),
    Declaration(
        "prep", PlayerReport, "match", (INT, MAYBE_NUMBER, BOOL, LATER_INT, LATER_INT, LATER_INT)
    ),
    Declaration(
        "view",
        View,
        "match",
        (INT, INT, MAYBE_NUMBER, MAYBE_NUMBER, MAYBE_NUMBER, MAYBE_NUMBER, BOOL),
    ),
    Declaration(
        "closed", WindowClosed, "match", (INT, NUMBER, Element(_encode_evidence, _evidence))
    ),
    Declaration(
        "join",
        Join,
        "player",
        (
            STR,
            STR,
            STR,
            NUMBER,
            INT,
            # Since version 13, for a start read late only.
            Element(_same, as_optional_number, optional=True, omit_none=True),
            Element(_flag, as_bool, optional=True, omit_none=True),
        ),
    ),
    Declaration("ord", Ordered, "player", (STR, NUMBER, Element(_same, as_strings))),
    Declaration(
        "rate",
        Rate,
        "player",
        (
            STR,
            STR,
            NUMBER,
            Element(_same, decode_teams),
            Element(_same, as_ints),
            Element(encode_stats, decode_stats),
            Element(_encode_snapshots, _snapshots),
            Element(_encode_players, _players),
            # Absent in version 1 commands; always written since version 2.
            Element(_same, _optional_int, optional=True),
            # Since version 6, for a mode that learns its population only.
            Element(_encode_population, _population, optional=True, omit_none=True),
            # Since version 12, for a match that names a party only.
            Element(_same, _optional_teams, optional=True, omit_none=True),
        ),
        open_ended=True,
    ),
    Declaration("cancel", Cancel, "player", (STR, Element(_same, as_strings))),
    Declaration("wm", Watermark, "player", (INT, NUMBER)),
    Declaration("gwm", Combined, "player", (MAYBE_NUMBER, LATER_INT, LATER_INT)),
    Declaration("adj", Adjusting, "player", (STR, STR)),
)


# The encoders and decoders are generated from the declarations, as ``dataclasses`` generates
# ``__init__``: a straight-line function per command, as fast as one written by hand (a loop
# over the elements cost 0.5 µs more per command, half as much again as the decode itself).


def _encoder(declaration: Declaration) -> Callable[[Any], list[object]]:
    names = [f.name for f in fields(declaration.command)]
    scope: dict[str, Any] = {"kind": declaration.kind}
    parts = []
    for n, (name, element) in enumerate(zip(names, declaration.elements, strict=True)):
        scope[f"e{n}"] = element.encode
        parts.append(f"c.{name}" if element.encode is _same else f"e{n}(c.{name})")
    body = f"    v = [kind, {', '.join(parts)}]\n"
    # Trailing elements that are left out when None (and every None after them).
    trailing = 0
    for element in reversed(declaration.elements):
        if not element.omit_none:
            break
        trailing += 1
    if trailing:
        keep = 1 + len(declaration.elements) - trailing
        body += f"    while len(v) > {keep} and v[-1] is None:\n        v.pop()\n"
    encode: Callable[[Any], list[object]] = _compile(
        f"def encode(c):\n{body}    return v\n", "encode", scope
    )
    return encode


def _decoder(declaration: Declaration) -> Callable[[list[object]], Any]:
    # The reason's prefix is made once per kind, not per command.
    what = f"{declaration.kind} command"
    elements = declaration.elements
    least = 1 + sum(not element.optional for element in elements)
    most = 1 + len(elements)
    scope: dict[str, Any] = {
        "build": declaration.command,
        "what": what,
        "ProtocolError": ProtocolError,
        "arity": arity,
        "counts": tuple(range(least, most + 1)),
    }
    calls = []
    for n, element in enumerate(elements):
        scope[f"d{n}"] = element.decode
        calls.append(f"d{n}(items[{n + 1}], what)")
    if declaration.open_ended:
        check = (
            f"    if len(items) < {least}:\n"
            f"        raise ProtocolError(f'{{what}}: expected at least {least} elements, "
            "got {len(items)}')\n"
        )
    else:
        check = "    arity(items, what, *counts)\n"
    # One return per length a command may have: optional trailing elements take the default.
    body = check + "    n = len(items)\n"
    for length in range(most, least - 1, -1):
        test = f"n >= {length}" if declaration.open_ended or length == most else f"n == {length}"
        body += f"    if {test}:\n        return build({', '.join(calls[: length - 1])})\n"
    decode: Callable[[list[object]], Any] = _compile(f"def decode(items):\n{body}", "decode", scope)
    return decode


def _compile(source: str, name: str, scope: dict[str, Any]) -> Any:
    # Source made above from the declarations only; nothing read from outside reaches it.
    exec(source, scope)
    return scope[name]


_ENCODERS = {d.command: _encoder(d) for d in DECLARATIONS}
_MATCH_DECODERS = {d.kind: _decoder(d) for d in DECLARATIONS if d.side == "match"}
_PLAYER_DECODERS = {d.kind: _decoder(d) for d in DECLARATIONS if d.side == "player"}


def encode_command(command: Command) -> list[object]:
    """The command's wire form: a positional list led by its kind."""
    return _ENCODERS[type(command)](command)


def _items(data: object, side: str) -> tuple[str, list[object]]:
    items = as_list(data, f"{side} command")
    if not items or not isinstance(items[0], str):
        raise ProtocolError(f"{side} command: expected a list led by its kind, got {data!r:.80}")
    return items[0], items


def decode_match_command(data: object) -> MatchCommand:
    """A match side command from its parsed JSON; ProtocolError if malformed or unknown."""
    command: MatchCommand = _decode(data, "match", _MATCH_DECODERS)
    return command


def decode_player_command(data: object) -> PlayerCommand:
    """A player side command from its parsed JSON; ProtocolError if malformed or unknown."""
    command: PlayerCommand = _decode(data, "player", _PLAYER_DECODERS)
    return command


def _decode(data: object, side: str, decoders: dict[str, Callable[[list[object]], Any]]) -> Any:
    kind, items = _items(data, side)
    decode = decoders.get(kind)
    if decode is None:
        raise ProtocolError(f"unknown {side} command {kind!r}")
    return decode(items)


def decode_commands(value: bytes | None) -> list[object]:
    """A packed message's commands, still undecoded; ProtocolError if it is not a JSON array."""
    try:
        commands = orjson.loads(value or b"")
    except orjson.JSONDecodeError as exc:
        raise ProtocolError(f"not valid JSON: {exc}") from None
    if not isinstance(commands, list):
        raise ProtocolError(f"expected a JSON array of commands, got {type(commands).__name__}")
    return commands
