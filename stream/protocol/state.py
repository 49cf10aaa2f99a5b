"""The values commands and table records share: player states and stats, table keys, and an
input message kept or forwarded with its bytes and origin intact."""

from __future__ import annotations

from dataclasses import dataclass

import orjson

from stream.deadletters import Origin
from stream.protocol.checks import (
    ProtocolError,
    arity,
    as_dict,
    as_int,
    as_list,
    as_number,
    as_str,
    as_strings,
    required,
)
from stream.ratings.experience import ExperienceConfig
from stream.ratings.fastinit import fast_init
from stream.ratings.population import Population, PopulationConfig
from stream.ratings.skill import PlayerState, PlayerStats

# --- player states and table keys -------------------------------------------------------------


def encode_state(state: PlayerState) -> list[object]:
    """[rating, deviation, volatility | None, rank_points, games, last_played | None], then
    [drift_slope, variance_slope] when either is not 0 (a mode that learns its drift)."""
    encoded: list[object] = [
        state.rating,
        state.deviation,
        state.volatility,
        state.rank_points,
        state.games,
        state.last_played,
    ]
    if state.drift_slope != 0.0 or state.variance_slope != 0.0:
        encoded += [state.drift_slope, state.variance_slope]
    return encoded


def decode_state(data: object) -> PlayerState:
    # The hottest decoder (every rating record and snapshot): converted as before the protocol
    # had types, a wrong element turned into ProtocolError.
    if not isinstance(data, list) or len(data) not in (6, 8):
        raise ProtocolError(f"state: expected a list of 6 or 8 elements, got {data!r:.80}")
    rating, deviation, volatility, rank_points, games, last_played, *slopes = data
    try:
        return PlayerState(
            float(rating),
            float(deviation),
            None if volatility is None else float(volatility),
            int(rank_points),
            int(games),
            None if last_played is None else float(last_played),
            *(float(s) for s in slopes),
        )
    except (TypeError, ValueError) as exc:
        raise ProtocolError(f"state: {exc}") from None


def decode_optional_state(data: object) -> PlayerState | None:
    return None if data is None else decode_state(data)


def encode_optional_state(state: PlayerState | None) -> list[object] | None:
    return None if state is None else encode_state(state)


def rating_key(player_id: str, mode: str) -> str:
    """The rating table's key: unambiguous for any player id and mode."""
    return orjson.dumps([player_id, mode]).decode()


def decode_rating_key(data: object) -> tuple[str, str]:
    """(player id, mode) from a rating table key (as :func:`rating_key` wrote it)."""
    try:
        items = as_list(orjson.loads(as_str(data, "rating key")), "rating key")
    except orjson.JSONDecodeError as exc:
        raise ProtocolError(f"rating key: not valid JSON: {exc}") from None
    arity(items, "rating key", 2)
    return as_str(items[0], "rating key player"), as_str(items[1], "rating key mode")


def encode_stats(stats: dict[str, PlayerStats] | None) -> dict[str, list[float]] | None:
    return None if stats is None else {pid: [s.score, s.seconds] for pid, s in stats.items()}


def decode_stats(data: object, what: str) -> dict[str, PlayerStats] | None:
    if data is None:
        return None
    stats: dict[str, PlayerStats] = {}
    for pid, pair in as_dict(data, what).items():
        items = as_list(pair, what)
        arity(items, what, 2)
        stats[pid] = PlayerStats(as_number(items[0], what), as_number(items[1], what))
    return stats


def decode_teams(data: object, what: str) -> list[list[str]]:
    return [as_strings(team, what) for team in as_list(data, what)]


# --- a mode's population ---------------------------------------------------------------------

_MAX_OFFSET = ExperienceConfig.RANGES["debut_offset"].high
_MAX_PARTY = PopulationConfig.RANGES["party_edge"].high


def encode_population(population: Population) -> list[object]:
    """[deviation | None, size_edge, persistence, decisiveness, drift_period | None,
    debut_offset | None], then party_edge when it is not 0 (what a worker before parties wrote,
    and reads, for every mode whose matches name no party)."""
    encoded: list[object] = [
        population.deviation,
        population.size_edge,
        population.persistence,
        population.decisiveness,
        population.drift_period,
        population.debut_offset,
    ]
    if population.party_edge != 0.0:
        encoded.append(population.party_edge)
    return encoded


def decode_population(data: object, what: str) -> Population:
    """From :func:`encode_population`'s list (seven elements, or six: a party edge of 0), the
    five elements written before the debut offset was learned, or the four before the drift
    was (what is missing is None: the mode's own)."""
    items = as_list(data, what)
    if len(items) not in (4, 5, 6):
        arity(items, what, 7)
    deviation = items[0]
    period = items[4] if len(items) >= 5 else None
    offset = items[5] if len(items) >= 6 else None
    if offset is not None and not -_MAX_OFFSET <= as_number(offset, what) <= _MAX_OFFSET:
        raise ProtocolError(f"{what}: a debut offset outside the accepted range, got {offset!r}")
    party = as_number(items[6], what) if len(items) == 7 else 0.0
    if not -_MAX_PARTY <= party <= _MAX_PARTY:
        raise ProtocolError(f"{what}: a party edge outside the accepted range, got {party!r}")
    return Population(
        None if deviation is None else as_number(deviation, what),
        as_number(items[1], what),
        as_number(items[2], what),
        as_number(items[3], what),
        None if period is None else as_number(period, what),
        None if offset is None else as_number(offset, what),
        party,
    )


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
    fields = as_dict(data, what)
    key = required(fields, "key", what)
    origin = as_list(required(fields, "origin", what), f"{what} origin")
    arity(origin, f"{what} origin", 4)
    topic, partition, offset, timestamp_ms = origin
    return StoredMessage(
        None if key is None else as_str(key, f"{what} key").encode("latin-1"),
        as_str(required(fields, "value", what), f"{what} value").encode(),
        Origin(
            as_str(topic, f"{what} origin"),
            as_int(partition, f"{what} origin"),
            as_int(offset, f"{what} origin"),
            None if timestamp_ms is None else as_int(timestamp_ms, f"{what} origin"),
        ),
    )
