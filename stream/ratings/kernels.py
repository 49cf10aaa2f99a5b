"""The arithmetic kernels, compiled when a build of this very source is present, else as they are.

A kernel is a module of functions of plain floats (stream/ratings/glicko2_kernel.py), written so
that mypyc compiles it unchanged. ``skillstream compile`` (stream/compiling.py) builds each into
``stream/ratings/_compiled_<name>.<platform>.so`` from a copy of its source that records the
source's SHA-256. At import the compiled build is used only if that record matches the source
beside it: a build left behind by an edit would rate by the old code, so it is ignored (with a
warning) and the pure module is used. Either way the results are the same bit for bit
(tests/unit/test_compiling.py compiles the kernels and holds them to that): only the speed
differs, and ``skillstream bench engine`` says which one ran.
"""

from __future__ import annotations

import hashlib
import importlib
import warnings
from importlib.machinery import SourceFileLoader
from types import ModuleType
from typing import TYPE_CHECKING

from stream.ratings import glicko2_kernel as _pure_glicko2

PREFIX = "_compiled_"
# The name of the constant a compiled build records its source's digest in.
RECORD = "SOURCE_SHA256"


def source_digest(pure: ModuleType) -> str:
    """The SHA-256 of a kernel's source, read by the loader that imported it (the one file
    stream/ratings reads: how a rule is computed, never what it is); "" when it was imported
    from elsewhere than its source, which no build records."""
    spec = pure.__spec__
    loader = None if spec is None else spec.loader
    if spec is None or spec.origin is None or not isinstance(loader, SourceFileLoader):
        return ""
    return hashlib.sha256(loader.get_data(spec.origin)).hexdigest()


def compiled_name(pure: ModuleType) -> str:
    """The module name of a kernel's compiled build."""
    package, _, name = pure.__name__.rpartition(".")
    return f"{package}.{PREFIX}{name}"


def fastest(pure: ModuleType) -> ModuleType:
    """The compiled build of ``pure`` if one of its current source is importable, else
    ``pure``."""
    try:
        built = importlib.import_module(compiled_name(pure))
    except ImportError:
        return pure
    digest = source_digest(pure)
    if not digest or getattr(built, RECORD, None) != digest:
        warnings.warn(
            f"{compiled_name(pure)} was built from another version of {pure.__file__}: not "
            "used (run `skillstream compile` again, or delete it)",
            RuntimeWarning,
            stacklevel=2,
        )
        return pure
    return built


def is_compiled(module: ModuleType) -> bool:
    """Whether ``module`` is a compiled build (an extension module, not Python source)."""
    return not str(module.__file__).endswith(".py")


if TYPE_CHECKING:
    glicko2_kernel = _pure_glicko2
else:
    glicko2_kernel = fastest(_pure_glicko2)

KERNELS: tuple[ModuleType, ...] = (_pure_glicko2,)
