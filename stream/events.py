"""Match events as game fleets publish them, and their validation.

Pure: no Kafka, no clocks. Every rejection is an :class:`EventError` whose text names the field
and the offending value, because that text is what a game developer sees in a dead-letter topic
or in ``skillstream replay`` output.

The shapes are also published as JSON Schemas in ``stream/schemas/``; the unit tests run both
over the same samples so the two cannot drift apart. Rules a JSON Schema cannot state (a player
on two teams, one rank per team, quitters, stats and parties naming players of the match, a
party on one side) are listed in each schema's ``$comment``.
"""

from __future__ import annotations

import difflib
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from types import MappingProxyType
from typing import Any

import orjson

from stream.ratings.parties import Parties
from stream.ratings.skill import PlayerStats

__all__ = [
    "DEFAULT_LIMITS",
    "FINISHED_FIELDS",
    "MAX_EPOCH_MS",
    "MAX_STAT",
    "MIN_EPOCH_MS",
    "STARTED_FIELDS",
    "TIME_PATTERN",
    "EventError",
    "EventLimits",
    "MatchFinished",
    "MatchStarted",
    "decode_match_finished",
    "decode_match_started",
    "describe_value",
    "format_time",
    "parse_match_finished",
    "parse_match_started",
    "parse_time",
    "unknown_fields_text",
]

# RFC 3339 with a mandatory zone, years 1970-9999, no leap second (Python has none). ASCII
# classes rather than \d, which in Python also matches other scripts' digits. The same string
# is the schemas' pattern (tested); only impossible dates such as Feb 30 get past it.
TIME_PATTERN = (
    r"^(19[7-9][0-9]|[2-9][0-9]{3})-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])"
    r"[T ]([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]+)?"
    r"(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$"
)
_TIME_RE = re.compile(TIME_PATTERN)

# Integer times are epoch milliseconds. Anything below 1e11 ms (March 1973) is far more likely
# epoch seconds sent by mistake than a real match, so it is refused with a hint; RFC 3339
# strings obey the same range, so live and offline refuse the same events.
MIN_EPOCH_MS = 100_000_000_000
MAX_EPOCH_MS = 253_402_300_799_999  # 9999-12-31T23:59:59.999Z

# Stats beyond this are corrupt counters, not play; refusing them keeps sums finite.
MAX_STAT = 1e12


class EventError(ValueError):
    """A malformed event. ``str(error)`` is the user-facing reason, starting with the field."""


@dataclass(frozen=True, slots=True)
class EventLimits:
    """Bounds that keep one hostile or buggy event from costing unbounded memory or time."""

    max_bytes: int = 65536
    max_players: int = 256
    max_teams: int = 64
    max_id_length: int = 128

    def __post_init__(self) -> None:
        for name in ("max_bytes", "max_players", "max_teams", "max_id_length"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if self.max_teams < 2:
            raise ValueError(f"max_teams must be at least 2, got {self.max_teams}")


DEFAULT_LIMITS = EventLimits()


# The fields each event is read for (the schemas' properties; a test holds them equal). Any other
# field is kept by name in ``unknown_fields``: not an error (a fleet may send its own metadata,
# or a newer version's field during a rollout), but said and counted, because a misspelt
# optional field ("quiters") otherwise changes a rating with nothing said (issue 45).
STARTED_FIELDS = frozenset({"match_id", "mode", "started_at", "teams"})
FINISHED_FIELDS = frozenset(
    {"match_id", "mode", "finished_at", "teams", "ranks", "quitters", "stats", "parties"}
)
# At most this many unknown names are kept per event, each cut to this many characters: what
# is said of a hostile event stays small.
MAX_UNKNOWN_NAMED = 8
MAX_UNKNOWN_NAME = 64


@dataclass(frozen=True, slots=True)
class MatchStarted:
    """A match began: who plays, in which teams. ``started_at`` is epoch seconds.
    ``unknown_fields``: the names of fields it carries that skillstream does not read."""

    match_id: str
    mode: str
    started_at: float
    teams: tuple[tuple[str, ...], ...]
    unknown_fields: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class MatchFinished:
    """A match ended.

    ``ranks`` holds one rank per team (lower is better, equal ranks are a draw). ``teams`` is
    None when the producer relies on the earlier match-started event for the line-up.
    ``stats`` maps player id to score and seconds played (read-only). ``unknown_fields``: the
    names of fields it carries that skillstream does not read. ``parties``: the players who
    queued together, each party within one side (stream.ratings.parties; empty: none named).
    """

    match_id: str
    mode: str
    finished_at: float
    teams: tuple[tuple[str, ...], ...] | None
    ranks: tuple[int, ...]
    quitters: frozenset[str]
    stats: Mapping[str, PlayerStats] | None
    unknown_fields: tuple[str, ...] = ()
    parties: Parties = ()


def describe_value(value: object) -> str:
    """A short rendering of a bad value for an error message: JSON words, Python quotes."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return repr(value if len(value) <= 40 else value[:40] + "...")
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list | tuple):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return f"a {type(value).__name__}"


def parse_time(value: object) -> float:
    """Epoch seconds from an RFC 3339 string with a zone, or from integer epoch milliseconds.

    Examples: ``"2026-01-02T03:04:05Z"``, ``"2026-01-02T03:04:05.250+01:00"``,
    ``1767323045250``. Naive strings are refused: a producer that omits the zone is a bug that
    would shift ratings' inactivity by hours. Floats are refused because seconds and
    milliseconds cannot be told apart reliably. Either form must lie between
    ``MIN_EPOCH_MS`` (March 1973) and ``MAX_EPOCH_MS`` (the end of 9999).
    """
    if isinstance(value, str):
        if _TIME_RE.match(value) is None:
            raise EventError(_time_problem(value))
        try:
            seconds = datetime.fromisoformat(value).timestamp()
        except ValueError as exc:
            raise EventError(f"invalid time {describe_value(value)}: {exc}") from None
        # The same range as integer times: a time is accepted or refused whatever its form.
        if seconds * 1000 < MIN_EPOCH_MS:
            raise EventError(f"time {describe_value(value)} is before March 1973")
        if seconds * 1000 > MAX_EPOCH_MS:
            raise EventError(f"time {describe_value(value)} is after the year 9999")
        return seconds
    if isinstance(value, int) and not isinstance(value, bool):
        if value < MIN_EPOCH_MS:
            raise EventError(
                f"expected epoch milliseconds, got {value}, which is before March 1973 "
                "(epoch seconds? multiply by 1000)"
            )
        if value > MAX_EPOCH_MS:
            raise EventError(f"epoch milliseconds {value} is after the year 9999")
        return value / 1000.0
    if isinstance(value, float):
        raise EventError(
            f"expected integer epoch milliseconds or an RFC 3339 string, got the float {value!r}"
        )
    raise EventError(
        "expected an RFC 3339 time with a zone (e.g. 2026-01-02T03:04:05Z) "
        f"or integer epoch milliseconds, got {describe_value(value)}"
    )


def _time_problem(value: str) -> str:
    """Why a string is not an accepted time, as specific as Python's parser lets us be."""
    shown = describe_value(value)
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        moment = None
    if moment is None:
        return (
            "expected an RFC 3339 time with a zone (e.g. 2026-01-02T03:04:05Z) "
            f"or integer epoch milliseconds, got {shown}"
        )
    if moment.tzinfo is None:
        return f"time {shown} has no zone; add Z or an offset such as +01:00"
    if moment.year < 1970:
        return f"time {shown} is before 1970"
    return f"time {shown} is not in RFC 3339 form (e.g. 2026-01-02T03:04:05+01:00)"


def format_time(at: float) -> str:
    """RFC 3339 UTC with milliseconds and 'Z', the inverse of :func:`parse_time`."""
    ms = round(at * 1000.0)
    seconds, millis = divmod(ms, 1000)
    stamp = datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S")
    return f"{stamp}.{millis:03d}Z"


# --- field readers: each raises EventError prefixed with the field's path ---------------------


def _object(obj: object) -> dict[str, Any]:
    if not isinstance(obj, dict):
        raise EventError(f"expected a JSON object, got {describe_value(obj)}")
    return obj


def _unknown(event: dict[str, Any], known: frozenset[str]) -> tuple[str, ...]:
    if event.keys() <= known:  # the usual event: one set comparison
        return ()
    names = sorted(str(name)[:MAX_UNKNOWN_NAME] for name in event if name not in known)
    return tuple(names[:MAX_UNKNOWN_NAMED])


def unknown_fields_text(names: tuple[str, ...], known: frozenset[str]) -> str:
    """``names`` as said to a user: each quoted, with the known field it may have meant."""
    said = []
    for name in names:
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.75)
        said.append(f"{name!r} (did you mean {close[0]!r}?)" if close else repr(name))
    return ", ".join(said)


def _required(obj: dict[str, Any], key: str, path: str | None = None) -> object:
    """``obj[key]``; EventError naming the field (inside ``path``, if given) when it is missing."""
    try:
        return obj[key]
    except KeyError:
        field = key if path is None else f"{path}.{key}"
        raise EventError(f"{field}: required field is missing") from None


def _id(value: object, path: str, what: str, limits: EventLimits) -> str:
    if not isinstance(value, str):
        raise EventError(f"{path}: expected a string {what}, got {describe_value(value)}")
    if not value:
        raise EventError(f"{path}: {what} is empty")
    if len(value) > limits.max_id_length:
        raise EventError(f"{path}: {what} is longer than {limits.max_id_length} characters")
    return value


def _time_field(obj: dict[str, Any], key: str) -> float:
    value = _required(obj, key)
    try:
        return parse_time(value)
    except EventError as exc:
        raise EventError(f"{key}: {exc}") from None


def _teams(value: object, limits: EventLimits) -> tuple[tuple[str, ...], ...]:
    if not isinstance(value, list):
        raise EventError(f"teams: expected a list of teams, got {describe_value(value)}")
    if len(value) < 2:
        raise EventError(f"teams: expected at least 2 teams, got {len(value)}")
    if len(value) > limits.max_teams:
        raise EventError(f"teams: more than {limits.max_teams} teams")
    seen: dict[str, int] = {}
    teams: list[tuple[str, ...]] = []
    for t, team in enumerate(value):
        if not isinstance(team, list):
            raise EventError(
                f"teams[{t}]: expected a list of player ids, got {describe_value(team)}"
            )
        if not team:
            raise EventError(f"teams[{t}]: team is empty")
        if len(seen) + len(team) > limits.max_players:
            raise EventError(f"teams: more than {limits.max_players} players")
        for p, player in enumerate(team):
            path = f"teams[{t}][{p}]"
            player_id = _id(player, path, "player id", limits)
            earlier = seen.get(player_id)
            if earlier is not None:
                where = f"twice in teams[{t}]" if earlier == t else f"also in teams[{earlier}]"
                raise EventError(f"{path}: player {player_id!r} is {where}")
            seen[player_id] = t
        teams.append(tuple(team))
    return tuple(teams)


def _ranks(
    value: object, teams: tuple[tuple[str, ...], ...] | None, limits: EventLimits
) -> tuple[int, ...]:
    if not isinstance(value, list):
        raise EventError(f"ranks: expected a list of integers, got {describe_value(value)}")
    if teams is not None:
        if len(value) != len(teams):
            raise EventError(f"ranks: expected one rank per team ({len(teams)}), got {len(value)}")
    elif len(value) < 2:
        raise EventError(f"ranks: expected at least 2 ranks, got {len(value)}")
    elif len(value) > limits.max_teams:
        raise EventError(f"ranks: more than {limits.max_teams} ranks")
    for i, rank in enumerate(value):
        if isinstance(rank, bool) or not isinstance(rank, int) or rank < 0:
            raise EventError(
                f"ranks[{i}]: expected a non-negative integer, got {describe_value(rank)}"
            )
    return tuple(value)


def _quitters(value: object, players: set[str] | None, limits: EventLimits) -> frozenset[str]:
    if value is None:
        return frozenset()
    if not isinstance(value, list):
        raise EventError(f"quitters: expected a list of player ids, got {describe_value(value)}")
    if len(value) > limits.max_players:
        raise EventError(f"quitters: more than {limits.max_players} players")
    quitters: set[str] = set()
    for i, player in enumerate(value):
        path = f"quitters[{i}]"
        player_id = _id(player, path, "player id", limits)
        if players is not None and player_id not in players:
            raise EventError(f"{path}: player {player_id!r} is not in teams")
        if player_id in quitters:
            raise EventError(f"{path}: player {player_id!r} is listed twice")
        quitters.add(player_id)
    return frozenset(quitters)


def _number(entry: dict[str, Any], key: str, path: str) -> float:
    value = _required(entry, key, path)
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise EventError(f"{path}.{key}: expected a finite number, got {describe_value(value)}")
    number = float(value)
    if not math.isfinite(number) or abs(number) > MAX_STAT:
        raise EventError(
            f"{path}.{key}: must be between {-MAX_STAT:g} and {MAX_STAT:g}, got {value!r}"
        )
    return number


def _stats(
    value: object, players: set[str] | None, limits: EventLimits
) -> Mapping[str, PlayerStats] | None:
    if value is None:
        return None
    if not isinstance(value, dict):
        raise EventError(
            f"stats: expected an object mapping player id to {{score, seconds}}, "
            f"got {describe_value(value)}"
        )
    if len(value) > limits.max_players:
        raise EventError(f"stats: more than {limits.max_players} players")
    stats: dict[str, PlayerStats] = {}
    for player_id, entry in value.items():
        path = f"stats[{player_id!r}]"
        _id(player_id, path, "player id", limits)
        if players is not None and player_id not in players:
            raise EventError(f"{path}: player is not in teams")
        if not isinstance(entry, dict):
            raise EventError(
                f"{path}: expected an object with score and seconds, got {describe_value(entry)}"
            )
        score = _number(entry, "score", path)
        seconds = _number(entry, "seconds", path)
        if seconds < 0:
            raise EventError(f"{path}.seconds: must not be negative, got {entry['seconds']!r}")
        stats[player_id] = PlayerStats(score, seconds)
    return MappingProxyType(stats)


def _parties(
    value: object, teams: tuple[tuple[str, ...], ...] | None, limits: EventLimits
) -> Parties:
    """The parties as listed (a party of one kept: it is no party, and harmless). Each player
    in at most one party; with the line-up, every party within one side (without it, the
    match side checks that when the start comes: stream/pipeline/matchentry.py)."""
    if value is None:
        return ()
    if not isinstance(value, list):
        raise EventError(f"parties: expected a list of parties, got {describe_value(value)}")
    side = {pid: t for t, team in enumerate(teams or ()) for pid in team}
    seen: dict[str, int] = {}
    parties: list[tuple[str, ...]] = []
    for i, party in enumerate(value):
        if not isinstance(party, list) or not party:
            raise EventError(
                f"parties[{i}]: expected a non-empty list of player ids,"
                f" got {describe_value(party)}"
            )
        if len(seen) + len(party) > limits.max_players:
            raise EventError(f"parties: more than {limits.max_players} players")
        for p, player in enumerate(party):
            path = f"parties[{i}][{p}]"
            player_id = _id(player, path, "player id", limits)
            if player_id in seen:
                raise EventError(f"{path}: player {player_id!r} is in two parties")
            seen[player_id] = i
            if teams is not None and player_id not in side:
                raise EventError(f"{path}: player {player_id!r} is not in teams")
            if teams is not None and side[player_id] != side[party[0]]:
                raise EventError(
                    f"{path}: player {player_id!r} is not on the side of {party[0]!r}:"
                    " a party plays on one side"
                )
        parties.append(tuple(party))
    return tuple(parties)


def _players(teams: tuple[tuple[str, ...], ...] | None) -> set[str] | None:
    if teams is None:
        return None
    return {player for team in teams for player in team}


# --- public parsers ----------------------------------------------------------------------------


def parse_match_started(obj: object, limits: EventLimits = DEFAULT_LIMITS) -> MatchStarted:
    """Validate a decoded match-started event. Unknown fields are named in the result, not
    refused."""
    event = _object(obj)
    match_id = _id(_required(event, "match_id"), "match_id", "match id", limits)
    mode = _id(_required(event, "mode"), "mode", "mode", limits)
    started_at = _time_field(event, "started_at")
    teams = _teams(_required(event, "teams"), limits)
    return MatchStarted(match_id, mode, started_at, teams, _unknown(event, STARTED_FIELDS))


def parse_match_finished(obj: object, limits: EventLimits = DEFAULT_LIMITS) -> MatchFinished:
    """Validate a decoded match-finished event. Unknown fields are named in the result, not
    refused.

    ``teams`` may be absent or null (the line-up then comes from match-started); ``quitters``
    ``stats`` and ``parties`` may be absent or null.
    """
    event = _object(obj)
    match_id = _id(_required(event, "match_id"), "match_id", "match id", limits)
    mode = _id(_required(event, "mode"), "mode", "mode", limits)
    finished_at = _time_field(event, "finished_at")
    raw_teams = event.get("teams")
    teams = None if raw_teams is None else _teams(raw_teams, limits)
    ranks = _ranks(_required(event, "ranks"), teams, limits)
    players = _players(teams)
    quitters = _quitters(event.get("quitters"), players, limits)
    stats = _stats(event.get("stats"), players, limits)
    parties = _parties(event.get("parties"), teams, limits)
    unknown = _unknown(event, FINISHED_FIELDS)
    return MatchFinished(
        match_id, mode, finished_at, teams, ranks, quitters, stats, unknown, parties
    )


def _decode(raw: bytes | bytearray | memoryview | str, limits: EventLimits) -> object:
    size = len(raw.encode()) if isinstance(raw, str) else len(raw)
    if size > limits.max_bytes:
        raise EventError(f"event is {size} bytes, over the limit of {limits.max_bytes} bytes")
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise EventError(f"not valid JSON: {exc}") from None


def decode_match_started(
    raw: bytes | bytearray | memoryview | str, limits: EventLimits = DEFAULT_LIMITS
) -> MatchStarted:
    """Size-check, decode and validate a match-started payload."""
    return parse_match_started(_decode(raw, limits), limits)


def decode_match_finished(
    raw: bytes | bytearray | memoryview | str, limits: EventLimits = DEFAULT_LIMITS
) -> MatchFinished:
    """Size-check, decode and validate a match-finished payload."""
    return parse_match_finished(_decode(raw, limits), limits)
