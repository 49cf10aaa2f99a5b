"""tests/unit mirrors the package: a folder of unit tests names a package of stream/ (or deploy/,
the deployment files), and a test module at tests/unit's top names a module at stream/'s top or
is one of the checks of the repository itself (its docs, README, layering, tests)."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
UNIT = ROOT / "tests" / "unit"
# Checks of the repository as a whole, not of one module.
REPOSITORY = {"test_docs.py", "test_readme.py", "test_layering.py", "test_mirror.py"}
REPOSITORY |= {"test_tests_assert.py", "test_function_lengths.py"}


def misplaced(unit: Path, stream: Path) -> list[str]:
    """The test folders and top-level test modules under ``unit`` that name nothing of
    ``stream`` (the package's folder)."""
    packages = {p.name for p in stream.iterdir() if (p / "__init__.py").exists()} | {"deploy"}
    modules = {p.stem for p in stream.glob("*.py")}
    found = [
        f"{folder.relative_to(unit.parent)}/ (no package stream/{folder.name})"
        for folder in sorted(unit.iterdir())
        if folder.is_dir() and folder.name != "__pycache__" and folder.name not in packages
    ]
    found += [
        f"{path.relative_to(unit.parent)} (no module stream/{path.stem[5:]}.py)"
        for path in sorted(unit.glob("test_*.py"))
        if path.name not in REPOSITORY and path.stem.removeprefix("test_") not in modules
    ]
    return found


def test_unit_tests_mirror_the_package() -> None:
    assert misplaced(UNIT, ROOT / "stream") == []


def test_a_flat_test_of_a_package_module_is_found(tmp_path: Path) -> None:
    stream = tmp_path / "stream"
    (stream / "ratings").mkdir(parents=True)
    (stream / "ratings" / "__init__.py").write_text("")
    (stream / "events.py").write_text("")
    unit = tmp_path / "unit"
    (unit / "ratings").mkdir(parents=True)
    (unit / "nosuch").mkdir()
    for name in ("test_events.py", "test_elo.py", "test_docs.py"):
        (unit / name).write_text("")
    assert misplaced(unit, stream) == [
        "unit/nosuch/ (no package stream/nosuch)",
        "unit/test_elo.py (no module stream/elo.py)",
    ]
