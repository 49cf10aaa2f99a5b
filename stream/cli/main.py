"""The `skillstream` command."""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Sequence
from types import FrameType

from stream import __version__
from stream.cli import (
    bench,
    cache,
    chaos,
    demo,
    live,
    local,
    offline,
    simulate,
    soak,
    topics,
    worker,
)
from stream.cli.arguments import OneLineParser
from stream.errors import UserError


def build_parser() -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = OneLineParser(
        prog="skillstream", description="Streaming skill ratings for online games."
    )
    parser.add_argument("--version", action="version", version=f"skillstream {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    offline.register(sub)
    simulate.register(sub)
    bench.register(sub)
    demo.register(sub)
    local.register(sub)
    worker.register(sub)
    live.register(sub)
    cache.register(sub)
    topics.register(sub)
    chaos.register(sub)
    soak.register(sub)
    return parser


class Terminated(KeyboardInterrupt):
    """SIGTERM, handled like Ctrl-C: commands that started servers or workers stop them."""


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise Terminated


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command != "worker":  # Faust installs its own graceful handlers
        signal.signal(signal.SIGTERM, _terminate)
    try:
        code: int = args.func(args)
    except UserError as exc:
        # "cache rebuild", not "cache": the same name settings errors are printed with.
        command = " ".join(filter(None, [args.command, getattr(args, "action", None)]))
        print(f"skillstream {command}: error: {exc}", file=sys.stderr)
        return 2
    except Terminated:
        print(f"skillstream {args.command}: terminated", file=sys.stderr)
        return 128 + signal.SIGTERM
    except KeyboardInterrupt:
        print(f"skillstream {args.command}: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # Output piped into `head` and the like: stop quietly.
        sys.stderr.close()
        return 0
    return code


if __name__ == "__main__":
    sys.exit(main())
