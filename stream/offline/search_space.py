"""What ``tune`` may change: a declarative list of modes-file keys and their candidate values.

A knob names a key by its path in a mode's table of the modes file (``("glicko2", "tau")`` is
``tau`` under ``[default.glicko2]``), so a candidate configuration is built exactly as a modes
file would build it, by :func:`stream.config.modes.build_mode`, with the same checks. A new
modes-file key becomes searchable by adding one :class:`Knob` here.
"""

from __future__ import annotations

import copy
import dataclasses
import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from stream.config.modes import PendingConfig
from stream.ratings.algorithm import DriftRate, PriorDeviation
from stream.ratings.modeconfig import ModeConfig
from stream.ratings.population import Population
from stream.ratings.teams import TeamStrategy

# "learned": no key of its own (LEARNED_POPULATION), tried by tuning.py, never applied.
Kind = Literal["number", "choice", "learned"]
Value = float | str
Table = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Knob:
    """One searchable key: where it lives, the values to try, and what kind of value it is.

    ``moves_with`` names sibling keys set to this key's value times a ratio, for parameters
    that only make sense together (Glicko-2's volatility and its bounds).
    """

    path: tuple[str, ...]
    values: tuple[Value, ...]
    kind: Kind
    moves_with: tuple[tuple[str, float], ...] = ()

    @property
    def name(self) -> str:
        return ".".join(self.path)

    def applied(self, table: Table, value: Value) -> Table:
        """A copy of a mode's ``table`` with this knob set to ``value``."""
        if self.kind == "learned":
            raise TypeError(f"{self.name} is learned from the history, not set to a value")
        out = copy.deepcopy(table)
        *parents, key = self.path
        inner = out
        for part in parents:
            inner = inner.setdefault(part, {})
        inner[key] = value
        for sibling, ratio in self.moves_with:
            inner[sibling] = float(value) * ratio
        return out

    def read(self, table: Table) -> Value | None:
        inner: Any = table
        for part in self.path:
            if not isinstance(inner, dict) or part not in inner:
                return None
            inner = inner[part]
        return inner if isinstance(inner, float | int | str) else None


def _numbers(path: tuple[str, ...], *values: float) -> Knob:
    return Knob(path, values, "number")


# Keys every algorithm shares. The team strategy changes how a team result moves each member's
# rating (predictions always use the team averages), so it matters only with teams of two or more.
# The experience term (a newcomer plays at rating + debut_offset * exp(-games / games_scale))
# is searched for every algorithm but ZoneStats, whose scale it does not share; 0 switches it off.
# Not a key: the population (prior deviation, size edge, persistence, decisiveness, drift period,
# debut offset) the mode
# learns from the search part, fixed in the configuration (tuning.py tries it in two replays).
LEARNED_POPULATION = Knob(("population",), (), "learned")
COMMON: tuple[Knob, ...] = (
    Knob(("teams",), tuple(t.value for t in TeamStrategy), "choice"),
    _numbers(("experience", "debut_offset"), 0.0, -100.0, -200.0, -300.0, -400.0),
    _numbers(("experience", "games_scale"), 2.0, 4.0, 8.0, 16.0),
)
# Searched only when the history has sides of different sizes: a fixed size edge. (The
# population learned from the history is tried besides the knobs: tuning.py.)
SIZE_EDGE = _numbers(("population", "size_edge"), 0.0, 50.0, 100.0, 200.0)

# Knobs worth turning around each algorithm's defaults. Elo's and ZoneStats' temperatures are
# not searched: with max_gain / game_mult they only rescale the ratings.
BY_ALGORITHM: Mapping[str, tuple[Knob, ...]] = {
    "glicko2": (
        # With one game per rating period the volatility barely moves from its start, so it
        # acts as per-game process noise; its bounds keep the INVERSUS proportions around it.
        Knob(
            ("glicko2", "unrated_volatility"),
            (0.02, 0.03, 0.045, 0.06, 0.09, 0.12, 0.18),
            "number",
            (("min_volatility", 2 / 3), ("max_volatility", 4 / 3)),
        ),
        _numbers(("glicko2", "unrated_deviation"), 0.4, 0.6, 0.8, 1.0, 1.5, 2.015, 2.5),
        _numbers(("glicko2", "min_deviation"), 0.05, 0.1, 0.175, 0.3),
        _numbers(("glicko2", "tau"), 0.3, 0.5, 1.0),
        _numbers(("glicko2", "period_days"), 3.0, 14.0, 60.0),
    ),
    "glicko1": (
        _numbers(("glicko1", "c"), 1.0, 2.0, 3.1, 5.0, 8.0, 12.0, 20.0),
        _numbers(("glicko1", "min_deviation"), 10.0, 25.0, 40.0, 60.0, 80.0),
        _numbers(("glicko1", "initial_deviation"), 200.0, 250.0, 300.0, 350.0),
    ),
    "elo": (_numbers(("elo", "max_gain"), 4.0, 8.0, 12.0, 16.0, 24.0, 32.0, 48.0, 64.0),),
    "zonestats": (_numbers(("zonestats", "game_mult"), 0.25, 0.5, 1.0, 2.0, 4.0, 8.0),),
}


def knobs_for(algorithm: str, *, teams: bool = True, uneven: bool = False) -> tuple[Knob, ...]:
    """The learned population, the knobs of ``algorithm``, then the shared ones (without the
    team strategy if not ``teams``: every team of the history has one player, so it changes
    nothing; with the size edge if ``uneven``: some match has sides of different sizes)."""
    common = tuple(
        k
        for k in COMMON
        if (teams or k.path != ("teams",))
        and (algorithm != "zonestats" or k.path[0] != "experience")
    )
    # The population first: the other knobs are then tuned around the mode's own population.
    return (
        (LEARNED_POPULATION,) + BY_ALGORITHM[algorithm] + common + ((SIZE_EDGE,) if uneven else ())
    )


def mode_table(config: ModeConfig, pending: PendingConfig) -> Table:
    """``config`` and the mode's ``pending`` policy as the table of a modes file that builds
    them again (every key written, in the file's order: the quit policy under [pending])."""
    algorithm = config.algorithm
    return {
        "algorithm": algorithm.name,
        algorithm.name: _fields(algorithm),
        "teams": _plain(config.teams),
        "part_time": config.part_time,
        "rank_points": _fields(config.rank_points),
        "pending": {**_fields(pending), "quit_policy": _plain(config.quits)},
        "experience": _fields(config.experience),
        "performance": _fields(config.performance),
        "population": {
            # An empty hold and a party edge of 0 are the defaults: not written.
            k: v
            for k, v in _fields(config.population).items()
            if k not in ("hold", "party_edge") or v
        },
    }


def population_fixed(table: Table, config: ModeConfig, population: Population) -> Table:
    """A copy of a mode's ``table`` (which builds ``config``) starting from ``population``:
    the size edge, persistence, decisiveness and party edge, the algorithm's new player
    deviation and drift
    period, and the experience term's debut offset (rounded to what a modes file shows: a tenth
    of a point, three decimals). Its
    ``window_days`` stays: a mode that learns goes on learning from these values, a fixed one
    keeps them."""
    out = copy.deepcopy(table)
    # A value the mode holds keeps its configured start, as written.
    held = config.population.hold
    shown = {
        "size_edge": round(population.size_edge, 1),
        "persistence": round(population.persistence, 3),
        "decisiveness": round(population.decisiveness, 3),
    }
    if population.party_edge != 0.0:
        # Only a mode whose matches named a party has learned one: the others' tables stay.
        shown["party_edge"] = round(population.party_edge, 1)
    out["population"] = {
        **out.get("population", {}),
        **{k: v for k, v in shown.items() if k not in held},
    }
    offset = population.debut_offset
    if offset is not None and offset != 0.0 and "debut_offset" not in held:
        out["experience"] = {
            **out.get("experience", {}),
            "debut_offset": round(offset, 1) or offset,
        }
    algorithm = config.algorithm
    given = _fields(algorithm)
    learned = algorithm
    deviation, period = population.deviation, population.drift_period
    if deviation is not None and isinstance(algorithm, PriorDeviation) and "deviation" not in held:
        learned = algorithm.with_prior_deviation(deviation)
    if period is not None and isinstance(learned, DriftRate) and "drift_period" not in held:
        learned = learned.with_drift_period(period)
    if learned is not algorithm:
        moved = _fields(learned)
        out[algorithm.name] = {
            **out.get(algorithm.name, {}),
            **{k: round(v, 3) for k, v in moved.items() if v != given[k]},
        }
    return out


def _fields(value: object) -> Table:
    return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value) if f.init}  # type: ignore[arg-type]


def _plain(value: object) -> Any:
    if isinstance(value, tuple):
        return list(value)
    return value.value if isinstance(value, enum.Enum) else value


def toml_section(table: Table, section: str, marked: Mapping[str, str] | None = None) -> str:
    """``table`` as TOML under ``[section]``; a key whose dotted path is in ``marked`` gets
    that text as a trailing comment."""
    marked = marked or {}
    lines: list[str] = []

    def emit(inner: Table, header: str, prefix: str) -> None:
        lines.append(f"[{header}]")
        for key, value in inner.items():
            if not isinstance(value, dict):
                note = marked.get(prefix + key)
                lines.append(f"{key} = {_toml_value(value)}" + (f"  # {note}" if note else ""))
        for key, value in inner.items():
            if isinstance(value, dict):
                emit(value, f"{header}.{key}", f"{prefix}{key}.")

    emit(table, section, "")
    return "\n".join(lines) + "\n"


def _toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {value!r} as TOML")
