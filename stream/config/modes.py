"""The modes file: each game mode's rating rules and the live pipeline's pending-match policy.

A modes file (TOML) has a ``[default]`` table for every mode not listed and a ``[modes.NAME]``
table per listed mode; a mode's table is laid over the default, key by key. Parameters of the
chosen algorithm live in a sub-table named after it::

    [default]
    algorithm = "glicko2"            # glicko2 | glicko1 | elo | zonestats
    teams = "composite_team"         # composite_team | composite_opponent | individual
    unlisted = "default"             # "default": rate unlisted modes with [default]; "reject"
    [default.glicko2]
    tau = 0.5
    [default.rank_points]
    upset_bonus = 0.0
    [default.experience]
    debut_offset = -150.0            # rating points a newcomer plays below their rating
    games_scale = 4.0                # the offset shrinks by e every this many games
    provisional_games = 5            # fewer games: flagged provisional for matchmakers
    [default.pending]
    grace_seconds = 60.0
    timeout_seconds = 7200.0
    quit_policy = "cancel"           # cancel: quitter loses, opponents unchanged; normal
    [default.seasons]                # no table (or starts = []): no seasons
    starts = [2026-01-01]            # fixed season starts (TOML dates or times, UTC)
    period_days = 91.0               # then a new season every this many days (0: none)
    deviation_reset = 0.5            # a reset moves the deviation half way to a new player's
    rank_points_kept = 0.0           # the fraction of Rank Points a season keeps

    [modes.ranked-2v2]
    teams = "composite_opponent"
    [modes.ranked-2v2.glicko2]
    tau = 0.4
    [modes.ranked-2v2.start]         # newcomers start from their rating in another mode
    from_mode = "ranked-1v1"         # a listed mode with the same algorithm
    deviation_added = 0.3            # of a new player's deviation, added to the source's
    deviation_cap = 0.5              # of a new player's deviation: the widest it gets

Every key is checked: a misspelt key is an error naming its place, not a silent default.

A mode's table builds two things: its rating rules (:class:`~stream.ratings.modeconfig.ModeConfig`,
which ``[pending] quit_policy`` feeds, as replay applies it too) and its :class:`PendingConfig`,
read by the live pipeline only.

The built-in default mode (:func:`built_in_table`, chosen on real play: docs/defaults.md) lies
under every file's ``[default]``, so a key a file leaves out keeps the built-in value.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from stream.errors import UserError, did_you_mean
from stream.ratings.algorithm import ALGORITHMS
from stream.ratings.carryover import StartConfig
from stream.ratings.experience import ExperienceConfig
from stream.ratings.modeconfig import ModeConfig, QuitPolicy
from stream.ratings.performance import PerformanceConfig
from stream.ratings.population import PopulationConfig
from stream.ratings.ranges import ConfigError, Range, check_ranges
from stream.ratings.rank_points import RankPointsConfig
from stream.ratings.seasons import SeasonsConfig
from stream.ratings.teams import TeamStrategy

_T = TypeVar("_T")


class ModesError(UserError, ValueError):
    """A modes file that cannot be used; the message names the file and the key."""


@dataclass(frozen=True, slots=True)
class PendingConfig:
    """How the live pipeline treats unresolved matches in this mode (event time, seconds)."""

    grace_seconds: float = 60.0
    timeout_seconds: float = 7200.0

    RANGES: ClassVar[Mapping[str, Range]] = {
        "grace_seconds": Range(
            0.0,
            86_400.0,
            "an abandoned match holds its players' next matches this long (decisions.md: shorter "
            "than the mode's matches); a day is the most",
        ),
        "timeout_seconds": Range(
            1.0, 604_800.0, "at most the match topics' retention (a week), at least a second"
        ),
    }

    def __post_init__(self) -> None:
        check_ranges(self, self.RANGES)


@dataclass(frozen=True)
class Modes:
    """Every configured mode, plus the default used for modes the file does not list: each
    mode's rating rules (:meth:`get`) and its pending-match policy (:meth:`pending`)."""

    default: ModeConfig = field(default_factory=lambda: built_in_mode("default"))
    listed: Mapping[str, ModeConfig] = field(default_factory=dict)
    accept_unlisted: bool = True
    default_pending: PendingConfig = field(default_factory=PendingConfig)
    # Listed modes' pending policies; a listed mode missing here has the default's.
    listed_pending: Mapping[str, PendingConfig] = field(default_factory=dict)
    _derived: dict[str, ModeConfig] = field(default_factory=dict, compare=False, repr=False)

    def get(self, mode: str) -> ModeConfig:
        """The configuration for ``mode``; KeyError if unlisted modes are rejected."""
        found = self.listed.get(mode) or self._derived.get(mode)
        if found is not None:
            return found
        if not self.accept_unlisted:
            raise KeyError(mode)
        derived = dataclasses.replace(self.default, name=mode)
        self._derived[mode] = derived
        return derived

    def pending(self, mode: str) -> PendingConfig:
        """The live pipeline's policy for ``mode``'s unresolved matches; KeyError as :meth:`get`."""
        if not self.accepts(mode):
            raise KeyError(mode)
        return self.listed_pending.get(mode, self.default_pending)

    def accepts(self, mode: str) -> bool:
        return self.accept_unlisted or mode in self.listed

    @classmethod
    def single(cls, config: ModeConfig) -> Modes:
        """Every mode rated with one configuration (``replay --algorithm``)."""
        return cls(default=config)


def built_in_table() -> dict[str, Any]:
    """The built-in default mode as a modes-file table (a fresh copy).

    Chosen on the parts of six real histories before their scored parts (docs/defaults.md):
    teams against the opposing team's average (``auto`` with rosters' persistence), a newcomer
    playing 300 points below their rating for about their first 8 games, an unrated (and
    largest) Glicko-2 deviation that starts at 1.5 (261 points: between a professional tour's
    139 and a free-to-play ladder's 350), a side with twice the players 100 points stronger,
    and a population learned from the mode's own matches, a window every six hours
    (``window_days = 0.25``): the prior deviation, the size edge, the persistence, the
    decisiveness and the drift period start from these values and follow the mode's players,
    live exactly as in replay (docs/defaults.md).
    """
    return {
        "algorithm": "glicko2",
        "teams": TeamStrategy.AUTO.value,
        "glicko2": {"unrated_deviation": 1.5},
        "experience": {"debut_offset": -300.0, "games_scale": 8.0, "provisional_games": 5},
        "population": {
            "window_days": 0.25,
            "size_edge": 100.0,
            "persistence": 1.0,
            "decisiveness": 1.0,
        },
    }


def built_in_mode(name: str, algorithm: str | None = None) -> ModeConfig:
    """The built-in default mode under ``name``, optionally with another algorithm."""
    table = built_in_table()
    if algorithm is not None:
        table["algorithm"] = algorithm
    return build_mode(name, table, f"built-in mode {name!r}")


def load_modes(path: Path) -> Modes:
    """Read a modes file; ModesError names the file and the offending key. Reading it again
    gives equal modes (the file is the only input)."""
    try:
        # utf-8-sig: a byte-order mark (as some editors on Windows save) is not TOML's.
        data = tomllib.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ModesError(f"{path}: cannot read: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise ModesError(f"{path}: not valid TOML: {exc}") from exc
    return parse_modes(data, source=str(path))


def parse_modes(data: Mapping[str, Any], source: str = "modes") -> Modes:
    """Modes from a parsed TOML document, its [default] laid over the built-in table;
    ModesError names ``source`` and the key's table."""
    _check_keys(data, {"default", "modes"}, source, "the top level")
    given_default = _table(data.get("default", {}), source, "[default]")
    if "start" in given_default:
        raise ModesError(
            f"{source}: [default.start] a mode starts from another one by name: put it under "
            "[modes.NAME.start]"
        )
    default_table = _merge(built_in_table(), given_default)
    unlisted = default_table.get("unlisted", "default")
    if unlisted not in ("default", "reject"):
        raise ModesError(
            f"{source}: [default] unlisted must be 'default' or 'reject', got {unlisted!r}"
            + did_you_mean(str(unlisted), ("default", "reject"))
        )
    default, default_pending = _build_mode("default", default_table, source, "default")
    listed: dict[str, ModeConfig] = {}
    listed_pending: dict[str, PendingConfig] = {}
    for name, table in _table(data.get("modes", {}), source, "[modes]").items():
        path = f"modes.{name}"
        given = _table(table, source, f"[{path}]")
        merged = _merge(default_table, given)
        merged.pop("unlisted", None)
        listed[name], listed_pending[name] = _build_mode(name, merged, source, path)
        _check_parameters(given, {listed[name].algorithm.name}, source, path)
    used = {default.algorithm.name} | {mode.algorithm.name for mode in listed.values()}
    _check_parameters(given_default, used, source, "default")
    for mode in listed.values():
        _check_start(mode, listed, source)
    return Modes(
        default=default,
        listed=listed,
        accept_unlisted=unlisted == "default",
        default_pending=default_pending,
        listed_pending=listed_pending,
    )


def _check_parameters(given: Mapping[str, Any], used: set[str], source: str, path: str) -> None:
    """An algorithm's parameters in a table whose modes are rated with another algorithm would
    change nothing: refused, naming the table (``[modes.1v1.elo]`` on a Glicko-2 mode). Under
    ``[default]`` they serve every mode that uses that algorithm, so they need one."""
    for name in sorted(set(given) & set(ALGORITHMS) - used):
        rated = " or ".join(sorted(used))
        whose = "this mode is" if path != "default" else "no mode is rated with it: modes are"
        raise ModesError(
            f"{source}: [{path}.{name}] parameters for {name}, but {whose} rated with {rated}"
            f" (algorithm = ...): they would change nothing"
        )


def _check_start(mode: ModeConfig, listed: Mapping[str, ModeConfig], source: str) -> None:
    """A mode starts from another listed mode on the same rating scale (the same algorithm)."""
    start = mode.start
    if start is None:
        return
    where = f"[modes.{mode.name}.start]"
    origin = listed.get(start.from_mode)
    if start.from_mode == mode.name:
        raise ModesError(f"{source}: {where} from_mode {start.from_mode!r} is the mode itself")
    if origin is None:
        raise ModesError(
            f"{source}: {where} from_mode {start.from_mode!r} is not a listed mode; listed: "
            f"{sorted(listed)}"
        )
    if origin.algorithm.name != mode.algorithm.name:
        raise ModesError(
            f"{source}: {where} from_mode {start.from_mode!r} is rated with "
            f"{origin.algorithm.name}, this mode with {mode.algorithm.name}: a rating carries "
            "over only on the same scale"
        )


def build_mode(
    name: str, table: Mapping[str, Any], source: str = "modes", path: str = "mode"
) -> ModeConfig:
    """One mode's rating rules from its (already merged) table; ``path`` is the table's TOML
    name. The table's ``[pending]`` is checked too (its quit_policy is a rating rule)."""
    return _build_mode(name, table, source, path)[0]


def _build_mode(
    name: str, table: Mapping[str, Any], source: str, path: str
) -> tuple[ModeConfig, PendingConfig]:
    where = f"[{path}]"
    algorithms = set(ALGORITHMS)
    _check_keys(
        table,
        {
            "algorithm",
            "teams",
            "unlisted",
            "rank_points",
            "pending",
            "experience",
            "seasons",
            "population",
            "start",
            "part_time",
            "performance",
        }
        | algorithms,
        source,
        where,
    )
    algo_name = table.get("algorithm", "glicko2")
    if not isinstance(algo_name, str) or algo_name not in ALGORITHMS:
        raise ModesError(
            f"{source}: {where} unknown algorithm {algo_name!r}; one of {sorted(ALGORITHMS)}"
            + did_you_mean(str(algo_name), ALGORITHMS)
        )
    given = table.get("teams", TeamStrategy.COMPOSITE_TEAM)
    try:
        teams = TeamStrategy(given)
    except ValueError:
        choices = [t.value for t in TeamStrategy]
        raise ModesError(
            f"{source}: {where} teams must be one of {choices}, got {given!r}"
        ) from None
    algorithm = _build(
        ALGORITHMS[algo_name], table.get(algo_name, {}), source, f"{path}.{algo_name}"
    )
    rank_points = _build(
        RankPointsConfig, table.get("rank_points", {}), source, f"{path}.rank_points"
    )
    # The file keeps quit_policy under [pending]; it goes to the rating rules.
    pending_table = dict(_table(table.get("pending", {}), source, f"[{path}.pending]"))
    try:
        quits = QuitPolicy(pending_table.pop("quit_policy", QuitPolicy.CANCEL))
    except ValueError:
        raise ModesError(
            f"{source}: [{path}.pending] quit_policy must be 'cancel' or 'normal'"
        ) from None
    pending = _build(
        PendingConfig, pending_table, source, f"{path}.pending", frozenset({"quit_policy"})
    )
    experience = _build(ExperienceConfig, table.get("experience", {}), source, f"{path}.experience")
    seasons = _seasons(table.get("seasons", {}), source, f"{path}.seasons")
    population = _build(PopulationConfig, table.get("population", {}), source, f"{path}.population")
    start = _start(table, source, path)
    part_time, performance = _stats_inputs(table, algo_name, source, path)
    rules = (experience, quits, seasons, population, start, part_time, performance)
    return ModeConfig(name, algorithm, teams, rank_points, *rules), pending


def _start(table: Mapping[str, Any], source: str, path: str) -> StartConfig | None:
    """The mode newcomers start from (``[start]``), or None."""
    if "start" not in table:
        return None
    given = _table(table["start"], source, f"[{path}.start]")
    if "from_mode" not in given:
        raise ModesError(
            f"{source}: [{path}.start] from_mode is required: the mode newcomers start from"
        )
    return _build(StartConfig, given, source, f"{path}.start")


def _stats_inputs(
    table: Mapping[str, Any], algorithm: str, source: str, path: str
) -> tuple[bool, PerformanceConfig]:
    """What the mode reads from a match's stats beyond its algorithm: ``part_time`` (the
    seconds, stream.ratings.parttime) and ``[performance]`` (the scores, opt-in)."""
    part_time = table.get("part_time", True)
    if not isinstance(part_time, bool):
        raise ModesError(f"{source}: [{path}] part_time must be true or false, got {part_time!r}")
    performance = _build(
        PerformanceConfig, table.get("performance", {}), source, f"{path}.performance"
    )
    if performance.active and algorithm == "zonestats":
        raise ModesError(
            f"{source}: [{path}.performance] zonestats rates from the stats already: "
            "individual performance applies to glicko2, glicko1 and elo"
        )
    return part_time, performance


def _seasons(value: object, source: str, path: str) -> SeasonsConfig | None:
    """The mode's season schedule; None when the table is absent or its ``starts`` empty."""
    where = f"[{path}]"
    table = dict(_table(value, source, where))
    starts = table.pop("starts", [])
    if not isinstance(starts, list):
        raise ModesError(f"{source}: {where} starts must be a list of dates, got {starts!r}")
    if not starts:
        # The other keys may come from [default.seasons]: a mode leaves its schedule this way.
        _check_keys(table, set(SeasonsConfig.RANGES), source, where)
        return None
    table["starts"] = tuple(_epoch(start, source, where) for start in starts)
    return _build(SeasonsConfig, table, source, path)


def _epoch(value: object, source: str, where: str) -> float:
    """A season start in epoch seconds: a TOML date (midnight UTC) or date-time (UTC when it
    has no offset), or the same written as an ISO 8601 string."""
    if isinstance(value, str):
        try:
            value = dt.datetime.fromisoformat(value)
        except ValueError:
            raise ModesError(
                f"{source}: {where} starts holds {value!r}, not a date or an ISO 8601 time"
            ) from None
    if isinstance(value, dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=dt.UTC)
        return value.timestamp()
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day, tzinfo=dt.UTC).timestamp()
    raise ModesError(f"{source}: {where} starts holds {value!r}, not a date or a time")


def _build(
    cls: type[_T], table: object, source: str, path: str, also: frozenset[str] = frozenset()
) -> _T:
    """``cls`` from its table; ``also``: keys the table may hold that were read before."""
    where = f"[{path}]"
    params = _table(table, source, where)
    # Derived fields (init=False) are not the user's to set.
    names = {f.name for f in dataclasses.fields(cls) if f.init}  # type: ignore[arg-type]
    _check_keys(params, names | also, source, where)
    try:
        return cls(**params)
    except ConfigError as exc:
        # The range check names the key; the table is named here.
        raise ModesError(f"{source}: {where} {exc}") from None


def _table(value: object, source: str, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ModesError(f"{source}: {where} expected a table, got {value!r}")
    return value


def _check_keys(table: Mapping[str, Any], allowed: set[str], source: str, where: str) -> None:
    unknown = sorted(set(table) - allowed)
    if unknown:
        hint = did_you_mean(unknown[0], allowed).removeprefix("; ")
        raise ModesError(
            f"{source}: {where} unknown key(s) {unknown}; "
            + (f"{hint} (allowed: {sorted(allowed)})" if hint else f"allowed: {sorted(allowed)}")
        )


def _merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged
