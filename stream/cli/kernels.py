"""`skillstream compile`: the arithmetic kernels compiled with mypyc (optional; faster replays
and workers, the same results bit for bit: stream/compiling.py)."""

from __future__ import annotations

import argparse

from stream.cli.subcommands import add_command
from stream.compiling import compile_all


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    add_command(
        sub,
        "compile",
        "compile the rating arithmetic with mypyc (optional: faster, the same results)",
        _compile,
        description=(
            "Compile the rating arithmetic (stream/ratings/glicko2_kernel.py) with mypyc into "
            "the installed package, beside its source: replays, evaluate, tune and workers run "
            "it several times faster with the same results bit for bit. Needs mypyc (pip "
            "install mypy) and a C compiler. A later edit of the source makes the build stale: "
            "it is then ignored (with a warning) until compiled again."
        ),
    )


def _compile(args: argparse.Namespace) -> int:
    for path in compile_all():
        print(f"wrote {path}")
    return 0
