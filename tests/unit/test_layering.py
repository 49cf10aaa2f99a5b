"""The package's layers import downwards only: the rating rules import no service, no
configuration and nothing that reads files; configuration imports no service; the cache depends
on configuration and the shared dead-letter, outage and protocol modules, never on the pipeline;
the pipeline (the rating app) knows nothing of the cache: the worker command composes the two as
sibling services; and the batch runner imports no Kafka or Faust client.

Imports are read with ``ast`` from the source, so an import inside a function or under
``TYPE_CHECKING`` (the way a cycle hides) counts as much as one at the top.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

STREAM = Path(__file__).resolve().parents[2] / "stream"

# The rating rules are a pure library: the same function rates live and in replay, so it reads
# no file (the modes file is read in stream/config) and knows no service.
RATINGS_FORBIDDEN = (
    "stream.config",
    "stream.pipeline",
    "stream.cache",
    "stream.offline",
    "stream.history",
    "stream.cli",
    "stream.chaos",
    "stream.bench",
    "stream.local",
    "tomllib",
    "pathlib",
)

# (modules, the packages they must not import)
RULES = [
    ("ratings", RATINGS_FORBIDDEN),
    ("cache", ("stream.pipeline", "stream.cli", "stream.chaos", "stream.bench")),
    (
        "config",
        ("stream.pipeline", "stream.cache", "stream.cli", "stream.chaos", "stream.bench"),
    ),
    ("pipeline", ("stream.cache", "stream.cli", "stream.chaos", "stream.bench")),
    ("deadletters.py", ("stream.pipeline", "stream.cache", "stream.config")),
    ("retry.py", ("stream.pipeline", "stream.cache", "stream.config")),
    # The commands and table records are shared by the pipeline, the cache and the benchmarks.
    ("protocol", ("stream.pipeline", "stream.cache", "stream.config")),
    # The batch runner is the order of effects alone: the Faust adaptation is app.py's.
    ("pipeline/batches.py", ("faust", "mode", "aiokafka")),
    ("pipeline/changelogs.py", ("faust", "mode", "aiokafka")),
    ("pipeline/checkpoints.py", ("faust", "mode", "aiokafka")),
    # The crash simulator runs the worker's own code with Kafka, Faust and Redis simulated.
    ("crashsim", ("faust", "mode", "aiokafka", "redis", "stream.cache", "stream.local")),
    ("commits.py", ("faust", "mode", "aiokafka", "redis", "stream.pipeline", "stream.cache")),
    ("delivery.py", ("faust", "mode", "redis", "stream.pipeline", "stream.cache")),
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


@pytest.mark.parametrize(("where", "forbidden"), RULES, ids=[rule[0] for rule in RULES])
def test_layer_imports_nothing_above_it(where: str, forbidden: tuple[str, ...]) -> None:
    assert sources(where), f"stream/{where} not found"
    assert breaches(where, forbidden) == []


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


def test_the_ratings_rule_sees_file_reading_and_configuration() -> None:
    # What the modes file's reader imported when it lived in stream/ratings.
    source = (
        "import tomllib\n"
        "from pathlib import Path\n"
        "from stream.config.modes import PendingConfig\n"
        "from stream.ratings.skill import Skill\n"
    )
    names = imports_in(source, "stream.ratings")
    assert breaches_in(names, RATINGS_FORBIDDEN) == [
        "pathlib",
        "pathlib.Path",
        "stream.config.modes",
        "stream.config.modes.PendingConfig",
        "tomllib",
    ]
