"""`skillstream cache acl`: the Redis ACL users of the cache, as ACL file lines.

Prints one line per user (stream/access/redis.py says what each may do) for an ACL file
(``aclfile`` in redis.conf) or, with ``--setuser``, as ``ACL SETUSER`` commands for redis-cli.
Passwords come from the environment, never from the command line (``ps`` shows arguments): each
is written as its SHA-256 (``#...``), which is all Redis needs; a user without one is written
``off`` (it cannot log in until a password is set) and a line on stderr says so.
"""

from __future__ import annotations

import argparse
import os
import sys

from stream.access.redis import acl_line
from stream.cli.environment import settings_or_none

__all__ = ["PASSWORD_VARIABLES", "cmd_cache_acl", "register_acl"]

# The environment variable holding each role's password.
PASSWORD_VARIABLES = {
    "cache-writer": "SKILLSTREAM_REDIS_WRITER_PASSWORD",
    "matchmaker": "SKILLSTREAM_REDIS_MATCHMAKER_PASSWORD",
}


def cmd_cache_acl(args: argparse.Namespace) -> int:
    settings = settings_or_none("cache acl", modes=False)
    if settings is None:
        return 2
    users = {"cache-writer": args.writer, "matchmaker": args.matchmaker}
    for role, user in users.items():
        if not user or any(c.isspace() for c in user):
            flag = "--writer" if role == "cache-writer" else "--matchmaker"
            print(
                f"skillstream cache acl: error: {flag} {user!r}: a user name without spaces",
                file=sys.stderr,
            )
            return 2
    for role, user in users.items():
        password = os.environ.get(PASSWORD_VARIABLES[role]) or None
        line = acl_line(role, user, settings.cache.prefix, password)
        if args.setuser:
            line = "ACL SETUSER " + line.removeprefix("user ")
        print(line)
        if password is None:
            print(
                f"skillstream cache acl: {PASSWORD_VARIABLES[role]} is not set: user {user!r}"
                " written off (no login) until it has a password",
                file=sys.stderr,
            )
    return 0


def register_acl(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    acl = actions.add_parser(
        "acl",
        help="the Redis ACL users of the writer and of matchmakers (an ACL file's lines)",
    )
    acl.add_argument(
        "--writer",
        default="skillstream-writer",
        metavar="NAME",
        help="the cache writer's user (default skillstream-writer)",
    )
    acl.add_argument(
        "--matchmaker",
        default="matchmaker",
        metavar="NAME",
        help="the read-only user of matchmakers (default matchmaker)",
    )
    acl.add_argument(
        "--setuser",
        action="store_true",
        help="ACL SETUSER commands (for redis-cli) instead of ACL file lines",
    )
    acl.set_defaults(func=cmd_cache_acl)
