"""Whether REDIS_URL's user may do what the cache writer does, asked before it starts.

Failure: AccessDeniedError naming the user, the server and what Redis refused (one line, exit 2,
instead of a feed retrying a write it will never be allowed); a UserError for a read-only
replica; UnreachableError (one line naming REDIS_URL) when Redis cannot be reached. Replay: it
loads a script Redis already caches and writes one key under the prefix that expires in a
second, so running it again changes nothing.
"""

from __future__ import annotations

from redis.exceptions import ReadOnlyError

from stream.cache.writer import WRITE_SCRIPT
from stream.config.settings import Settings
from stream.errors import UserError
from stream.reachability import redis_client, redis_errors

__all__ = ["check_writer_access"]


def check_writer_access(settings: Settings) -> None:
    """PING, load the writer's script and write ``<prefix>:access-check`` (expiring in a
    second): whether Redis answers and whether this user may write, on one connection."""
    client = redis_client(settings)
    try:
        with redis_errors(settings):
            client.ping()
            client.script_load(WRITE_SCRIPT)
            client.set(f"{settings.cache.prefix}:access-check", b"1", px=1000)
    except ReadOnlyError:
        raise UserError(
            f"REDIS_URL: Redis at {settings.redis.address} is a read-only replica: the cache"
            " writer needs the primary"
        ) from None
    finally:
        client.close()
