"""Kafka or Redis that cannot be reached, as one line naming the setting and the address.

The commands connect through these so that a closed port, a port where something else listens,
or a server that stops answering ends in an :class:`UnreachableError` (a ``UserError``: one
line on stderr, exit code 2) within ``SKILLSTREAM_CONNECT_TIMEOUT_SECONDS``, never in a
traceback or a silent wait of the clients' own 40 s request timeout.

Failure: every function raises UnreachableError, with the low-level reason in brackets; nothing
is retried here (the long-running worker and cache writer retry in their own loops). Replay:
the probes only connect and read metadata, so running them again changes nothing.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AbstractContextManager, asynccontextmanager, contextmanager, nullcontext
from typing import TypeVar
from urllib.parse import urlsplit

from aiokafka import AIOKafkaConsumer
from aiokafka.client import AIOKafkaClient
from aiokafka.errors import (
    KafkaConnectionError,
    KafkaTimeoutError,
    NoBrokersAvailable,
    NodeNotReadyError,
    RequestTimedOutError,
)
from redis import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import InvalidResponse, NoPermissionError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from stream.config.addresses import bootstrap_addresses
from stream.config.settings import Settings
from stream.errors import UserError

T = TypeVar("T")

KAFKA_UNREACHABLE: tuple[type[BaseException], ...] = (
    KafkaConnectionError,
    KafkaTimeoutError,
    NoBrokersAvailable,
    NodeNotReadyError,
    RequestTimedOutError,
    TimeoutError,  # asyncio.TimeoutError is this one since Python 3.11
    OSError,
)
REDIS_UNREACHABLE: tuple[type[BaseException], ...] = (
    RedisConnectionError,  # AuthenticationError and BusyLoadingError are ones too
    RedisTimeoutError,
    InvalidResponse,  # something that is not Redis answered
    OSError,
)


def missing_topic(topic: str) -> str:
    """What a client that finds no ``topic`` knows: with ACLs, a topic the Kafka user may not
    describe is left out of its metadata, as one that does not exist."""
    return f"topic {topic!r} does not exist, or this Kafka user may not describe it"


class AccessDeniedError(UserError):
    """A server refused this client's credentials something its job needs; the message names
    the credential's variable, the permission and the resource."""


class UnreachableError(UserError):
    """Kafka or Redis did not answer; the message names the setting and the address, and
    ``reason`` says what the client saw."""

    def __init__(self, message: str, reason: str) -> None:
        super().__init__(f"{message} ({reason})")
        self.reason = reason


def kafka_unreachable(settings: Settings, reason: BaseException) -> UnreachableError:
    if isinstance(reason, KafkaConnectionError):
        # aiokafka's text lists socket tuples; the cause (refused, unknown host) is in its log.
        why = "no broker accepted a connection"
    else:
        why = _reason(settings, reason)
    return UnreachableError(
        f"KAFKA_BOOTSTRAP_SERVERS: cannot reach Kafka at {settings.kafka.bootstrap_servers}", why
    )


def redis_unreachable(settings: Settings, reason: BaseException) -> UnreachableError:
    return UnreachableError(
        f"REDIS_URL: cannot reach Redis at {settings.redis.address}", _reason(settings, reason)
    )


def _reason(settings: Settings, reason: BaseException) -> str:
    if isinstance(reason, TimeoutError | RedisTimeoutError | KafkaTimeoutError):
        return (
            f"no answer within {settings.connect_timeout_seconds:g} s, "
            "SKILLSTREAM_CONNECT_TIMEOUT_SECONDS"
        )
    text = str(reason).removeprefix(f"{type(reason).__name__}: ")
    return text or type(reason).__name__


def kafka_errors(settings: Settings) -> AbstractContextManager[None]:
    """Turn the Kafka clients' connection errors inside the block into UnreachableError."""
    return _unreachable_on(settings, KAFKA_UNREACHABLE, kafka_unreachable)


@contextmanager
def redis_errors(settings: Settings) -> Iterator[None]:
    """Turn redis-py's connection errors inside the block into UnreachableError, and a command
    or key the REDIS_URL user may not use into AccessDeniedError."""
    try:
        with _unreachable_on(settings, REDIS_UNREACHABLE, redis_unreachable):
            yield
    except ResponseError as exc:
        denied = redis_denied(settings, exc)
        if denied is None:
            raise
        raise denied from None


def redis_denied(settings: Settings, error: BaseException) -> AccessDeniedError | None:
    """The one line for Redis refusing REDIS_URL's user a command or a key (NOPERM, or an ACL
    failure inside a script), naming the user, the server and what Redis said; None for any
    other error."""
    text = str(error)
    if not isinstance(error, NoPermissionError) and not text.startswith("ACL failure"):
        return None
    user = urlsplit(settings.redis.url).username or "default"
    said = text.split(" script: ", 1)[0].rstrip(".")
    return AccessDeniedError(
        f"REDIS_URL: Redis at {settings.redis.address} refused user {user!r}: {said} (its"
        f" ACL rules for the keys under {settings.cache.prefix!r}: `skillstream cache acl`,"
        " docs/operations.md#access-who-may-do-what)"
    )


@contextmanager
def _unreachable_on(
    settings: Settings,
    errors: tuple[type[BaseException], ...],
    unreachable: Callable[[Settings, BaseException], UnreachableError],
) -> Iterator[None]:
    """The block's ``errors`` raised as what ``unreachable`` makes of them."""
    try:
        yield
    except errors as exc:
        raise unreachable(settings, exc) from None


async def kafka_within_timeout(settings: Settings, step: Awaitable[T]) -> T:
    """``step`` (a client's ``start()``, a first request) awaited for at most the connect
    timeout; UnreachableError when it fails to connect or does not finish in time."""
    with kafka_errors(settings):
        return await asyncio.wait_for(step, settings.connect_timeout_seconds)


@asynccontextmanager
async def kafka_client(settings: Settings, *, quiet: bool = True) -> AsyncIterator[AIOKafkaClient]:
    """A client connected to the brokers (their metadata read), closed after the block; with
    ``quiet`` aiokafka's own log lines are held back meanwhile (see quiet_kafka_logs)."""
    client = AIOKafkaClient(
        bootstrap_servers=settings.kafka.bootstrap_servers,
        request_timeout_ms=round(settings.connect_timeout_seconds * 1000),
        **settings.kafka.security.aiokafka_options(),
    )
    try:
        with quiet_kafka_logs() if quiet else nullcontext():
            await kafka_within_timeout(settings, resolve_brokers(settings))
            await kafka_within_timeout(settings, client.bootstrap())
            yield client
    finally:
        await client.close()


async def check_kafka(settings: Settings, *, quiet: bool = True) -> None:
    """Connect to the brokers and read the cluster's metadata, then disconnect."""
    async with kafka_client(settings, quiet=quiet):
        pass


async def resolve_brokers(settings: Settings) -> None:
    """Raises UnreachableError when no broker's host name resolves: aiokafka reports that as
    any other failed connection, and the cause is what the user has to fix."""
    loop = asyncio.get_running_loop()
    hosts = bootstrap_addresses("KAFKA_BOOTSTRAP_SERVERS", settings.kafka.bootstrap_servers)
    for host, port in hosts:
        try:
            await loop.getaddrinfo(host, port)
            return
        except OSError:
            continue
    names = ", ".join(sorted({host for host, _ in hosts}))
    raise UnreachableError(
        f"KAFKA_BOOTSTRAP_SERVERS: cannot reach Kafka at {settings.kafka.bootstrap_servers}",
        f"unknown host {names}",
    )


@contextmanager
def quiet_kafka_logs() -> Iterator[None]:
    """aiokafka's own logging off inside the block, for one-shot commands: it logs each failed
    connection attempt, and the command's one line already says what failed."""
    logger = logging.getLogger("aiokafka")
    level = logger.level
    logger.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        logger.setLevel(level)


def log_reader(settings: Settings) -> AIOKafkaConsumer:
    """A consumer for the commands that read whole topics from their start (the audit log, the
    retained inputs): no group, nothing committed, requests bounded by the connect timeout
    (at least 5 s: a fetch of a large topic takes longer than a connect)."""
    return AIOKafkaConsumer(
        bootstrap_servers=settings.kafka.bootstrap_servers,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        fetch_max_wait_ms=50,
        request_timeout_ms=max(round(settings.connect_timeout_seconds * 1000), 5000),
        **settings.kafka.security.aiokafka_options(),
    )


def redis_client(settings: Settings) -> Redis:
    """A synchronous client whose connect and every reply wait at most the connect timeout."""
    client: Redis = Redis.from_url(
        settings.redis.url,
        socket_connect_timeout=settings.connect_timeout_seconds,
        socket_timeout=settings.connect_timeout_seconds,
    )
    return client
