"""Compiling the arithmetic kernels (stream/ratings/kernels.py) with mypyc: ``skillstream compile``.

Decided: compiling is optional and never part of ``make test`` or a plain install (a fresh
machine with python3 alone must work, and does, on the pure modules). It needs mypyc (``pip
install mypy``) and a C compiler. C rounds every operation exactly as Python does as long as the
compiler does not fuse a multiply and an add into one instruction, which ARM compilers do by
default: the build passes ``-ffp-contract=off``, so the compiled build's results are the pure
module's bit for bit on any machine (tests/unit/test_compiling.py).

On failure nothing is written and :class:`CompileError` carries mypyc's own output; run again,
it overwrites the build it made before.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from types import ModuleType

from stream.errors import UserError
from stream.ratings.kernels import KERNELS, PREFIX, RECORD, source_digest


class CompileError(UserError):
    """mypyc or the C compiler is missing, or failed."""


def build(pure: ModuleType, into: Path) -> list[Path]:
    """Compile the kernel ``pure`` with mypyc into the directory ``into`` as its compiled build
    (:func:`stream.ratings.kernels.fastest` finds it there when ``into`` is the kernel's own
    package directory); returns the files written: the module and mypyc's runtime beside it."""
    compiler = _compiler()
    if shutil.which(compiler) is None:
        raise CompileError(f"no C compiler {compiler!r} found: install one (e.g. gcc) or set CC")
    try:
        import mypyc  # noqa: F401 (only whether it is there)
    except ImportError:
        raise CompileError("mypyc is not installed: pip install mypy") from None
    digest = source_digest(pure)
    if not digest:
        raise CompileError(f"{pure.__name__} was not imported from its source: nothing to compile")
    source = Path(str(pure.__file__)).read_text(encoding="utf-8")
    record = f'\n{RECORD}: Final = "{digest}"\n'
    package, _, name = pure.__name__.rpartition(".")
    parts = package.split(".")
    with tempfile.TemporaryDirectory(prefix="skillstream-compile-") as scratch:
        # The copy sits in a tree of the same packages, so that mypyc names it as it is imported.
        root = Path(scratch)
        for depth in range(1, len(parts) + 1):
            root.joinpath(*parts[:depth]).mkdir()
            root.joinpath(*parts[:depth], "__init__.py").touch()
        folder = root.joinpath(*parts)
        copy = folder / f"{PREFIX}{name}.py"
        copy.write_text(source + record, encoding="utf-8")
        env = dict(os.environ, CFLAGS=f"{os.environ.get('CFLAGS', '')} -ffp-contract=off")
        done = subprocess.run(
            [sys.executable, "-m", "mypyc", str(copy.relative_to(root))],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
        built = sorted(folder.glob(f"{PREFIX}{name}*{suffix}"))
        if done.returncode != 0 or not built:
            raise CompileError(
                f"mypyc could not compile {pure.__file__}:\n{done.stdout}{done.stderr}".rstrip()
            )
        written = []
        try:
            into.mkdir(parents=True, exist_ok=True)
            for found in built:
                # Beside the target, then renamed over it: a build this process (or a running
                # worker) has loaded stays mapped as it was; copying over it in place would
                # crash them.
                target = into / found.name
                partial = into / f".{found.name}.partial"
                shutil.copyfile(found, partial)
                os.replace(partial, target)
                written.append(target)
        except OSError as exc:
            done_text = f" (written before the failure: {', '.join(map(str, written))})"
            raise CompileError(
                f"cannot write the build into {into}: {exc.strerror or exc}"
                + (done_text if written else "")
            ) from None
        return written


def _compiler() -> str:
    """The C compiler setuptools will call: $CC, else the one Python was built with."""
    configured = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    return str(configured).split()[0]


def compile_all() -> list[Path]:
    """Compile every kernel next to its source (where it is installed); the files written."""
    return [path for pure in KERNELS for path in build(pure, Path(str(pure.__file__)).parent)]
