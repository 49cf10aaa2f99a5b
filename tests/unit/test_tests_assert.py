"""Every test checks something: a test function with no assert, no ``pytest.raises``/``warns``
and no call to a helper of its module that asserts cannot fail, and is a defect."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
# Calls that check by themselves.
CHECKING = ("raises", "warns", "fail")
CHECKING_PREFIXES = ("assert", "check", "expect")


def _checks(node: ast.AST) -> bool:
    return any(isinstance(n, ast.Assert | ast.Raise) for n in ast.walk(node))


def _called(node: ast.AST) -> set[str]:
    names = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            fn = n.func
            if isinstance(fn, ast.Attribute):
                names.add(fn.attr)
            elif isinstance(fn, ast.Name):
                names.add(fn.id)
    return names


def silent_tests(source: str) -> list[str]:
    """The test functions of a module that check nothing."""
    tree = ast.parse(source)
    helpers = {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and not node.name.startswith("test_")
        and _checks(node)
    }
    silent = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith(
            "test_"
        ):
            called = _called(node)
            if not (
                any(isinstance(n, ast.Assert) for n in ast.walk(node))
                or called & (set(CHECKING) | helpers)
                or any(name.startswith(CHECKING_PREFIXES) for name in called)
            ):
                silent.append(node.name)
    return silent


def test_every_test_in_the_suite_checks_something() -> None:
    found = [
        f"{path.relative_to(TESTS)}::{name}"
        for path in sorted(TESTS.rglob("test_*.py"))
        for name in silent_tests(path.read_text())
    ]
    assert found == []


def test_a_test_that_only_calls_is_found_and_one_that_asserts_is_not() -> None:
    source = """
def helper(x):
    assert x

def test_calls():
    run()

def test_asserts():
    assert run()

def test_delegates():
    helper(run())

def test_expects_an_error():
    with pytest.raises(ValueError):
        run()
"""
    assert silent_tests(source) == ["test_calls"]
