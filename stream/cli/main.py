"""The `skillstream` command."""

from __future__ import annotations

import argparse
import importlib
import os
import re
import signal
import sys
from collections.abc import Sequence
from types import FrameType

from aiokafka.errors import (
    ClusterAuthorizationFailedError,
    GroupAuthorizationFailedError,
    TopicAuthorizationFailedError,
)

from stream import __version__
from stream.access.kafka import principal_named
from stream.cli.arguments import OneLineParser
from stream.config.variables import unknown_variables
from stream.errors import UserError

# The modules that register the commands, in the order `--help` lists them, and the commands
# each registers. Only the module of the command given is imported: the others bring the Kafka,
# Redis and Faust clients, a quarter of a second that `skillstream replay` has no use for.
_MODULES = {
    "offline": ("replay", "evaluate", "tune"),
    "corrections": ("corrections",),
    "inputs": ("inputs",),
    "simulate": ("simulate",),
    "bench": ("bench",),
    "demo": ("demo",),
    "local": ("local",),
    "worker": ("worker",),
    "live": ("live",),
    "cache": ("cache", "ratings", "leaderboard"),
    "topics": ("topics",),
    "chaos": ("chaos",),
    "soak": ("soak",),
    "crashsim": ("crashsim",),
    "studies": ("study",),
    "kernels": ("compile",),
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The command line; with ``command`` (the first argument), only its own module's commands
    are registered (any other: every command, so help and mistakes list them all)."""
    parser: argparse.ArgumentParser = OneLineParser(
        prog="skillstream", description="Streaming skill ratings for online games."
    )
    parser.add_argument("--version", action="version", version=f"skillstream {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    modules = [name for name, commands in _MODULES.items() if command in commands] or list(_MODULES)
    for name in modules:
        importlib.import_module(f"stream.cli.{name}").register(sub)
    return parser


class Terminated(KeyboardInterrupt):
    """SIGTERM, handled like Ctrl-C: commands that started servers or workers stop them."""


def _terminate(signum: int, frame: FrameType | None) -> None:
    raise Terminated


KAFKA_REFUSALS = (
    TopicAuthorizationFailedError,
    GroupAuthorizationFailedError,
    ClusterAuthorizationFailedError,
)


def kafka_refusal(error: BaseException) -> str:
    """One line for a Kafka authorization error, naming what was refused and who."""
    who = principal_named(os.environ.get("KAFKA_SASL_USERNAME"))
    # aiokafka's text starts "[Error 29] TopicAuthorizationFailedError: "; the rest names what.
    what = re.sub(r"^(\[Error \d+\] )?\w+: ", "", str(error)) or "no detail"
    return (
        f"the brokers refused {who}: {type(error).__name__} ({what}): its role's ACLs are"
        " in docs/operations.md#access-who-may-do-what"
    )


def main(argv: Sequence[str] | None = None) -> int:
    given = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(given[0] if given else None)
    if not given:  # the usage and every command, not a one-line "COMMAND is required"
        parser.print_help(sys.stderr)
        return 2
    args = parser.parse_args(given)
    for line in unknown_variables(os.environ):
        print(f"skillstream: warning: {line}", file=sys.stderr)
    if args.command != "worker":  # Faust installs its own graceful handlers
        signal.signal(signal.SIGTERM, _terminate)
    # "cache rebuild", not "cache": the same name settings errors are printed with.
    command = " ".join(filter(None, [args.command, getattr(args, "action", None)]))
    try:
        code: int = args.func(args)
    except UserError as exc:
        print(f"skillstream {command}: error: {exc}", file=sys.stderr)
        return 2
    except KAFKA_REFUSALS as exc:
        # A grant the command's Kafka user lacks, met after its checks (a send, a group).
        print(f"skillstream {command}: error: {kafka_refusal(exc)}", file=sys.stderr)
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
