"""What ``tune`` prints: the configuration to use as a modes-file section, with the search's
steps, its verdict and its warnings as comments above it."""

from __future__ import annotations

from collections.abc import Iterator

from stream.offline.comparison import PairedDifference
from stream.offline.search_space import Table, Value, toml_section
from stream.offline.tuning import TuneResult


def _paired_text(paired: PairedDifference) -> str:
    return f"{paired.error_text('paired standard error')}: {paired.verdict}"


def _value_text(value: Value | None) -> str:
    return "unset" if value is None else f"{value:g}" if isinstance(value, float) else str(value)


def tuned_toml(result: TuneResult, section: str, source: str, search: str, verdict: str) -> str:
    """The configuration to use as a ready-to-paste modes-file section, the search's steps and
    verdict in comments above it. ``search`` and ``verdict`` say which matches each scored."""
    v = result.verdict
    lines = [
        f"# tuned on {source}: the search scored {result.search_matches} matches ({search}); "
        f"start {result.search_base_log_loss:.5f}, winner {result.search_best_log_loss:.5f}",
    ]
    lines += [
        f"# step {s.knob} {_value_text(s.old)} -> {_value_text(s.new)}: {_paired_text(s.paired)}"
        for s in result.steps
    ]
    if not result.steps:
        lines.append("# no change beat the starting configuration beyond noise")
    seen = "never scored by the search" if v.unseen else "the search's own, which flatters it"
    lines.append(
        f"# verdict on {v.matches} matches ({verdict}; {seen}): winner {v.best_log_loss:.5f}, "
        f"start {v.base_log_loss:.5f}, winner - start {_paired_text(v.paired)}"
    )
    lines += [f"# warning: {w}" for w in result.warnings]
    lines += list(_learned_lines(result))
    if result.steps and not v.keep_best:
        lines.append("# the winner did not beat the start beyond noise: the start is kept below")
    marked = {
        name: "tuned"
        for name in _leaves(result.kept_table)
        if _leaf(result.kept_table, name) != _leaf(result.base_table, name)
    }
    return "\n".join(lines) + "\n" + toml_section(result.kept_table, section, marked)


def _leaves(table: Table, prefix: str = "") -> Iterator[str]:
    for key, value in table.items():
        if isinstance(value, dict):
            yield from _leaves(value, f"{prefix}{key}.")
        else:
            yield prefix + key


def _leaf(table: Table, name: str) -> object:
    inner: object = table
    for part in name.split("."):
        inner = inner.get(part) if isinstance(inner, dict) else None
    return inner


def _learned_lines(result: TuneResult) -> Iterator[str]:
    """The population the kept configuration reached by the end of the history, per mode: what
    a modes file may start from (or fix, with ``window_days = 0``)."""
    kept = result.kept
    for mode, population in sorted(result.learned.items()):
        rules = population.rules(kept)
        parts = []
        if population.deviation is not None:
            parts.append(f"prior deviation {population.deviation:.0f} points")
        parts.append(f"size edge {population.size_edge:.1f}")
        parts.append(
            f"persistence {population.persistence:.3f} (teams {kept.teams.value}:"
            f" {rules.team_rule.value})"
        )
        if population.drift_period is not None:
            parts.append(f"drift period {population.drift_period:.1f} days")
        if population.party_edge != 0.0:
            parts.append(f"party edge {population.party_edge:.1f}")
        if population.debut_offset is not None:
            parts.append(f"debut offset {population.debut_offset:.1f}")
        how = "learned by the end of the history" if kept.population.learns else "fixed"
        yield f"# population of mode {mode!r}, {how}: {', '.join(parts)}"
    if kept.population.learns:
        yield "# window_days above 0: a worker goes on learning it, live as replay does"
