"""Which build of a kernel is used: the compiled one only when it records the digest of the
source beside it; a stale build (the source edited since) is ignored with a warning."""

from __future__ import annotations

import sys
import types
from collections.abc import Iterator

import pytest

from stream.ratings import glicko2_kernel, kernels

BUILD = "stream.ratings._compiled_glicko2_kernel"


@pytest.fixture
def no_build_imported() -> Iterator[None]:
    """A stand-in compiled build is put in sys.modules by the test; whatever was there (a real
    build on a machine that compiled) is put back after."""
    saved = sys.modules.pop(BUILD, None)
    yield
    sys.modules.pop(BUILD, None)
    if saved is not None:
        sys.modules[BUILD] = saved


def _build(record: str | None) -> types.ModuleType:
    built = types.ModuleType(BUILD)
    built.__file__ = "/somewhere/_compiled_glicko2_kernel.cpython-311-x86_64-linux-gnu.so"
    if record is not None:
        setattr(built, kernels.RECORD, record)
    return built


def test_a_build_of_this_source_is_used(no_build_imported: None) -> None:
    built = sys.modules[BUILD] = _build(kernels.source_digest(glicko2_kernel))
    assert kernels.fastest(glicko2_kernel) is built
    assert kernels.is_compiled(built)


@pytest.mark.parametrize("record", ["0" * 64, None])
def test_a_stale_or_unrecorded_build_is_ignored_with_a_warning(
    no_build_imported: None, record: str | None
) -> None:
    sys.modules[BUILD] = _build(record)
    with pytest.warns(RuntimeWarning, match="built from another version of .*glicko2_kernel.py"):
        assert kernels.fastest(glicko2_kernel) is glicko2_kernel


def test_without_a_build_the_pure_module_is_used(
    no_build_imported: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An import that finds nothing, whatever is built on this machine.
    monkeypatch.setitem(sys.modules, BUILD, None)
    assert kernels.fastest(glicko2_kernel) is glicko2_kernel
    assert not kernels.is_compiled(glicko2_kernel)


def test_the_digest_is_of_the_source_and_names_the_build() -> None:
    assert len(kernels.source_digest(glicko2_kernel)) == 64
    assert kernels.compiled_name(glicko2_kernel) == BUILD
    # A module not imported from a source file (built in): no digest, so no build matches it.
    assert kernels.source_digest(sys) == ""
