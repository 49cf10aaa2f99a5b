"""The package forms a tree: every package and top-level module of stream/ has a place in one
declared order of layers, and imports only from layers below its own (never a sibling in its
layer, never upwards). The rating rules import nothing of the project and read no file; the
cache and the pipeline are siblings the worker command composes; the batch runner, the commit
order and the crash simulator import no Kafka, Faust or Redis client.

Imports are read with ``ast`` from the source, so an import inside a function or under
``TYPE_CHECKING`` (the way a cycle hides) counts as much as one at the top.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

STREAM = Path(__file__).resolve().parents[2] / "stream"

# Bottom to top. A unit (a package, or a module at stream/'s top, without .py) imports only
# units of earlier layers; units of one layer know nothing of each other. A new package or
# top-level module must be given a place here: the test fails until it is.
LAYERS: list[tuple[str, ...]] = [
    # The rating rules (pure), the shared one-line error, the prediction-quality arithmetic, the
    # outage back-off, the commit order and the local stack's process handling.
    ("__init__", "ratings", "errors", "quality", "retry", "commits", "local"),
    # The input events and the dead-letter record; compiling the rules' arithmetic.
    ("events", "deadletters", "compiling"),
    # Delivery to Kafka, the commands and table records, configuration, the simulator of traffic.
    ("delivery", "protocol", "config", "simulation"),
    # Reaching the broker and Redis with a configuration's settings.
    ("reachability",),
    # Who may do what on Kafka and Redis (the roles' ACLs), and applying them.
    ("access",),
    # History files and the retained inputs read as one.
    ("history",),
    # Corrections of the past: records, ledger, resolution, audit.
    ("corrections",),
    # The output event, built alike for the worker and replay's explanations.
    ("ratingchanged",),
    # Replay, evaluation, tuning.
    ("offline",),
    # The two services the worker command composes.
    ("pipeline", "cache"),
    # The fault harnesses over them.
    ("chaos",),
    ("crashsim", "bench"),
    ("cli",),
    ("__main__",),
]

LAYER_OF = {unit: depth for depth, layer in enumerate(LAYERS) for unit in layer}

# What a unit may not use from outside the project, whatever its layer: the rating rules read no
# file (the modes file is read in stream/config); the runner, the commit order and the crash
# simulator are the order of effects alone, with Kafka, Faust and Redis adapted elsewhere.
CLIENTS = ("faust", "mode", "aiokafka", "redis")
RULES = [
    ("ratings", ("tomllib", "pathlib")),
    ("pipeline/batches.py", CLIENTS),
    ("pipeline/changelogs.py", CLIENTS),
    ("pipeline/checkpoints.py", CLIENTS),
    ("crashsim", CLIENTS),
    ("commits.py", CLIENTS),
    ("delivery.py", ("faust", "mode", "redis")),
]


def module_name(path: Path) -> str:
    parts = path.relative_to(STREAM.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(path: Path) -> set[str]:
    """Every module ``path`` imports (see :func:`imports_in`)."""
    package = module_name(path) if path.name == "__init__.py" else module_name(path.parent)
    return imports_in(path.read_text(encoding="utf-8"), package)


def imports_in(source: str, package: str) -> set[str]:
    """Every module ``source`` (a module of ``package``) imports, anywhere in it, relative
    imports made absolute; for ``from X import y`` both X and X.y (y may be a submodule)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = parts[: len(parts) - node.level + 1]
                origin = ".".join([*base, *([node.module] if node.module else [])])
            else:
                origin = node.module or ""
            names.add(origin)
            names.update(f"{origin}.{alias.name}" for alias in node.names)
    return names


def sources(where: str) -> list[Path]:
    target = STREAM / where
    return sorted(target.rglob("*.py")) if target.is_dir() else [target]


def breaches_in(names: set[str], forbidden: tuple[str, ...]) -> list[str]:
    return sorted(n for n in names if any(n == f or n.startswith(f + ".") for f in forbidden))


def breaches(where: str, forbidden: tuple[str, ...]) -> list[str]:
    return [
        f"{path.relative_to(STREAM.parent)} imports {name}"
        for path in sources(where)
        for name in breaches_in(imported(path), forbidden)
    ]


def unit_of(module: str) -> str | None:
    """The unit a module of the project belongs to (``stream.cache.keys``: ``cache``), None for
    a module outside it."""
    parts = module.split(".")
    if parts[0] != "stream":
        return None
    if len(parts) == 1 or not any((STREAM / n).exists() for n in (parts[1], f"{parts[1]}.py")):
        return "__init__"  # stream itself, or a name of it (stream.__version__)
    return parts[1]


def units() -> dict[str, list[Path]]:
    """Every unit of stream/ with its sources."""
    found: dict[str, list[Path]] = {}
    for path in sorted(STREAM.rglob("*.py")):
        found.setdefault(unit_of(module_name(path)) or "", []).append(path)
    return found


def upward(unit: str, names: set[str]) -> list[str]:
    """The modules of ``names`` (imported by ``unit``) in ``unit``'s own layer or above."""
    return sorted(
        name
        for name in names
        if (target := unit_of(name)) not in (None, unit)
        and LAYER_OF.get(target, len(LAYERS)) >= LAYER_OF[unit]
    )


def test_every_unit_has_a_place_in_the_order() -> None:
    assert sorted(set(units()) - set(LAYER_OF)) == []
    assert sorted(set(LAYER_OF) - set(units())) == []


@pytest.mark.parametrize("unit", sorted(LAYER_OF), ids=str)
def test_a_unit_imports_only_from_below(unit: str) -> None:
    found = [
        f"{path.relative_to(STREAM.parent)} imports {name}"
        for path in units()[unit]
        for name in upward(unit, imported(path))
    ]
    assert found == []


@pytest.mark.parametrize(("where", "forbidden"), RULES, ids=[rule[0] for rule in RULES])
def test_layer_imports_none_of_these_clients(where: str, forbidden: tuple[str, ...]) -> None:
    assert sources(where), f"stream/{where} not found"
    assert breaches(where, forbidden) == []


def test_a_cycle_is_seen() -> None:
    # What history did before the reachability helpers moved down: it imported a module of the
    # pipeline, which imports history.
    names = imports_in("from stream.pipeline.reachability import log_reader\n", "stream.history")
    assert upward("history", names) == [
        "stream.pipeline.reachability",
        "stream.pipeline.reachability.log_reader",
    ]


def test_siblings_may_not_import_each_other() -> None:
    names = imports_in("from stream.cache.writer import CacheWriter\n", "stream.pipeline")
    assert upward("pipeline", names) == ["stream.cache.writer", "stream.cache.writer.CacheWriter"]
    assert upward("cli", names) == []


def test_calls_go_down_from_the_app_only() -> None:
    """The Faust adapter (pipeline/app.py) uses the wiring, the runner and the processors;
    none of them knows the adapter (topology.py takes the small Wiring interface)."""
    found = [
        f"{path.relative_to(STREAM.parent)} imports {name}"
        for path in sources("pipeline")
        if path.name != "app.py"
        for name in breaches_in(imported(path), ("stream.pipeline.app",))
    ]
    assert found == []


def test_the_reader_sees_every_kind_of_import() -> None:
    source = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from stream.pipeline.outbox import Outbox\n"
        "def later() -> None:\n"
        "    import stream.pipeline.app\n"
        "    from ..pipeline import delivery\n"
        "    from . import keys\n"
        "    from stream import pipeline\n"
    )
    names = imports_in(source, "stream.cache")
    assert {
        "stream.pipeline.outbox",
        "stream.pipeline.app",
        "stream.pipeline.delivery",
        "stream.cache.keys",
        "stream.pipeline",
    } <= names
    assert breaches_in(names, ("stream.pipeline",))


def test_the_cache_feed_imports_are_seen() -> None:
    # The feed does import configuration and the shared modules: the reader must find them.
    names = imported(STREAM / "cache" / "feed.py")
    assert {"stream.config.settings", "stream.deadletters", "stream.retry"} <= names


def test_the_ratings_rules_see_file_reading_and_configuration() -> None:
    # What the modes file's reader imported when it lived in stream/ratings.
    source = (
        "import tomllib\n"
        "from pathlib import Path\n"
        "from stream.config.modes import PendingConfig\n"
        "from stream.ratings.skill import Skill\n"
    )
    names = imports_in(source, "stream.ratings")
    assert breaches_in(names, dict(RULES)["ratings"]) == ["pathlib", "pathlib.Path", "tomllib"]
    assert upward("ratings", names) == ["stream.config.modes", "stream.config.modes.PendingConfig"]
