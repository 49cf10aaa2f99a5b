"""Each Redis user's ACL rules: the writer writes the cache, a matchmaker only reads it.

Both users reach only the keys under the deployment's prefix (``SKILLSTREAM_CACHE_PREFIX``,
its glob characters escaped) and no pub/sub channel. What each may run is what its code sends,
and no more:

- ``cache-writer`` (the feed in the worker or ``skillstream cache writer``, and ``cache
  rebuild``): reads and writes (``@read``, ``@write``) through its scripts (EVALSHA, SCRIPT
  LOAD and EXISTS: what redis-py's scripts send), without the ``@dangerous`` commands
  (FLUSHALL, KEYS, CONFIG, ...).
- ``matchmaker`` (RatingCache, SyncRatingCache, ``skillstream ratings get`` and
  ``leaderboard``): ``@read`` without ``@dangerous``, and EVAL_RO, the read-only script call
  its neighbourhood read uses (stream/cache/queries.py; Redis 7+ and Valkey). It cannot write,
  delete, or run a script that writes: Redis refuses each (tests/integration/cache/
  test_access_on_valkey.py).

Redis checks every command a script runs against the caller's rules, so a script is no way
around them. ``@connection`` (PING, HELLO, CLIENT SETINFO, ...) and SELECT are granted to both:
clients send them on connect.
"""

from __future__ import annotations

import hashlib

__all__ = ["REDIS_ROLES", "acl_line", "key_pattern", "rules"]

REDIS_ROLES = ("cache-writer", "matchmaker")

# SELECT: a REDIS_URL naming a database other than 0 makes the client send it on connect.
_COMMON = ("resetchannels", "-@all", "+@connection", "+select")
_RULES = {
    "cache-writer": (
        "+@read",
        "+@write",
        "-@dangerous",
        "+evalsha",
        "+script|load",
        "+script|exists",
    ),
    "matchmaker": ("+@read", "-@dangerous", "+eval_ro"),
}


def key_pattern(prefix: str) -> str:
    """``~<prefix>:*`` with the prefix's glob characters escaped (a prefix is taken literally)."""
    escaped = "".join(f"\\{c}" if c in "*?[]\\" else c for c in prefix)
    return f"~{escaped}:*"


def rules(role: str, prefix: str) -> tuple[str, ...]:
    """The ACL rules of ``role`` (one of REDIS_ROLES) for the keys under ``prefix``, starting
    from nothing (``resetkeys``, ``-@all``), so applying them again gives the same user."""
    return ("resetkeys", key_pattern(prefix), *_COMMON, *_RULES[role])


def acl_line(role: str, user: str, prefix: str, password: str | None) -> str:
    """An ACL file line (``user NAME on #<sha256> RULES``); without a password the user is
    written ``off`` with no password, and cannot log in until one is set."""
    secret = ("on", "#" + hashlib.sha256(password.encode()).hexdigest()) if password else ("off",)
    return " ".join(("user", user, "reset", *secret, *rules(role, prefix)))
