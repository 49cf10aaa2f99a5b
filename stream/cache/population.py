"""A learning mode's population in the cache: what the cache writer keeps per mode, and what
the readers predict with.

A mode that learns its population (docs/defaults.md) rates each match with the population of
its window, and every rating-changed event says which (``population``). The cache keeps, per
mode, the one of the latest event time it has seen (``<prefix>:{<mode>}:population``, a hash:
``at`` in epoch ms, ``deviation`` (empty: none), ``size_edge``, ``persistence``,
``decisiveness``, ``drift_period``, ``debut_offset`` (empty or missing: the modes file's) and
``party_edge`` (missing: 0, as a worker before parties wrote)),
so a matchmaker's predictions use the population the workers rate with: the prior deviation of
an unknown player, the size edge, the team strategy ``auto`` picks from the persistence, the
decisiveness, the drift period a deviation grows by with inactivity, and the debut offset a
newcomer's effective rating starts from, and the party edge a partied player plays at. Without
the key (a mode that does not learn,
or before its first event) the readers use the modes file's values.

Failure and replay: the write is one conditional script, applied only when the event time is
later than the stored one, so writing again, or an older batch after a newer one, changes
nothing. A key the readers cannot use (written by something else) is ignored: the modes file's
values are used, as before the first event.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from stream.ratings.experience import ExperienceConfig
from stream.ratings.modeconfig import ModeConfig
from stream.ratings.population import Population, PopulationConfig

__all__ = ["POPULATION_SCRIPT", "encode_population_args", "event_population", "rules_from"]

# KEYS: 1 the mode's population hash. ARGV: 1 event time in ms, 2 deviation ('' for none),
# 3 size edge, 4 persistence, 5 decisiveness, 6 drift period, 7 debut offset ('' for none),
# 8 party edge. Returns 1 when written, 0 when the stored one is as late or later.
POPULATION_SCRIPT = """-- skillstream learned population, script version 4
local stored = redis.call('HGET', KEYS[1], 'at')
if stored and tonumber(stored) ~= nil and tonumber(stored) >= tonumber(ARGV[1]) then
  return 0
end
redis.call('HSET', KEYS[1], 'at', ARGV[1], 'deviation', ARGV[2], 'size_edge', ARGV[3],
  'persistence', ARGV[4], 'decisiveness', ARGV[5], 'drift_period', ARGV[6],
  'debut_offset', ARGV[7], 'party_edge', ARGV[8])
return 1
"""

_RANGES = PopulationConfig.RANGES
_MAX_OFFSET = ExperienceConfig.RANGES["debut_offset"].high
_PARTY = PopulationConfig.RANGES["party_edge"]


def event_population(event: Mapping[str, Any]) -> Population | None:
    """The population a rating-changed event says its match was rated with (None: none, or
    one outside what a worker writes: ignored, the cache's key is left as it is)."""
    given = event.get("population")
    if not isinstance(given, Mapping):
        return None
    try:
        deviation = given["deviation"]
        values = [given["size_edge"], given["persistence"], given["decisiveness"]]
    except KeyError:
        return None
    period = given.get("drift_period")
    if period is not None and not (_finite(period) and 0.0 < float(period) < 1e5):
        return None
    offset = given.get("debut_offset")
    if offset is not None and not (_finite(offset) and abs(float(offset)) <= _MAX_OFFSET):
        return None
    # Absent from events written before parties were learned: 0, parties do not matter.
    party = given.get("party_edge", 0.0)
    if not (_finite(party) and _PARTY.low <= float(party) <= _PARTY.high):
        return None
    numbers = [deviation, *values] if deviation is not None else values
    if not all(_finite(n) for n in numbers):
        return None
    edge, persistence, decisiveness = (float(n) for n in values)
    if not (
        _RANGES["size_edge"].low <= edge <= _RANGES["size_edge"].high
        and 0.0 <= persistence <= 1.0
        and _RANGES["decisiveness"].low <= decisiveness <= _RANGES["decisiveness"].high
        and (deviation is None or 0.0 < float(deviation) < 1e4)
    ):
        return None
    return Population(
        None if deviation is None else float(deviation),
        edge,
        persistence,
        decisiveness,
        None if period is None else float(period),
        None if offset is None else float(offset),
        float(party),
    )


def encode_population_args(at_ms: int, population: Population) -> list[str]:
    """The script's ARGV for ``population`` as of event time ``at_ms``."""
    deviation = population.deviation
    return [
        str(at_ms),
        "" if deviation is None else repr(float(deviation)),
        repr(float(population.size_edge)),
        repr(float(population.persistence)),
        repr(float(population.decisiveness)),
        "" if population.drift_period is None else repr(float(population.drift_period)),
        "" if population.debut_offset is None else repr(float(population.debut_offset)),
        repr(float(population.party_edge)),
    ]


def rules_from(config: ModeConfig, reply: object) -> ModeConfig:
    """The mode as the workers rate it now: ``config`` with the cached population in force
    (``reply``: the hash as HGETALL returns it; ``config`` itself when there is none, or one the
    readers cannot use)."""
    if not config.population.learns or not isinstance(reply, Mapping) or not reply:
        return config
    fields = {_text(k): _text(v) for k, v in reply.items()}
    try:
        deviation = fields["deviation"]
        event = {
            "deviation": None if deviation == "" else float(deviation),
            "size_edge": float(fields["size_edge"]),
            "persistence": float(fields["persistence"]),
            "decisiveness": float(fields["decisiveness"]),
            "drift_period": float(period) if (period := fields.get("drift_period")) else None,
            "debut_offset": float(offset) if (offset := fields.get("debut_offset")) else None,
            "party_edge": float(fields.get("party_edge") or 0.0),
        }
    except (KeyError, ValueError):
        return config
    population = event_population({"population": event})
    return config if population is None else population.rules(config)


def _finite(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)
