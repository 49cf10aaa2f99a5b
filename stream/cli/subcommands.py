"""How a command's parser is added: a command run by one function, or a command made of
actions (``skillstream cache writer``, ``corrections log``), each added the one same way."""

from __future__ import annotations

import argparse
from collections.abc import Callable


def add_command(
    sub: argparse._SubParsersAction[argparse.ArgumentParser],
    name: str,
    help: str,
    func: Callable[[argparse.Namespace], int],
    description: str | None = None,
) -> argparse.ArgumentParser:
    """Add ``name``, listed with ``help`` (its own ``--help`` says ``description`` when given)
    and run by ``func``; its options are the caller's."""
    parser = sub.add_parser(name, help=help, description=description)
    parser.set_defaults(func=func)
    return parser


def add_actions(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], command: str, help: str
) -> argparse._SubParsersAction[argparse.ArgumentParser]:
    """Add ``command``, listed with ``help``, and return the list its actions are added to:
    one of them must be given, and the one given is ``args.action``."""
    parser = sub.add_parser(command, help=help)
    return parser.add_subparsers(dest="action", required=True, metavar="ACTION")
