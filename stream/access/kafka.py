"""Each Kafka role's ACLs: the topics and groups a principal in that role may use, and how.

The roles (docs/operations.md "Access: who may do what" is the same table in words):

- ``fleet``: game servers; write the two input topics, nothing else.
- ``worker``: the rating workers; read the inputs, read and write their own internal topics
  (the two command topics, the tables' changelogs), read Faust's leader topic (Faust creates
  it and the changelogs at start if missing: hence CREATE on those names only), write
  rating-changed and the dead-letter topic, and their consumer group (the app id); with the
  cache writer in the worker (``SKILLSTREAM_CACHE_WRITER=worker``, the default) also the
  ``cache-writer`` grants.
- ``cache-writer``: ``skillstream cache writer``; read rating-changed in its group
  (``<app id>-cache``), write the dead-letter topic (records it cannot use).
- ``analytics``: read rating-changed, in groups whose names start with ``<app id>-analytics``.
- ``operator``: ``skillstream corrections``, ``inputs export`` and ``cache rebuild``: read and
  append to the audit topic, read the inputs, read and write rating-changed (``corrections
  cutover`` copies a re-rated generation into it), read the ratings changelog (what ``cache
  rebuild`` reads), read a re-rating deployment's topics and group offsets.
- ``rerate``: a re-rating deployment (``--rerate-app-id``): everything under its own app id
  (topics and group, prefixed), read the inputs.

Kafka's own implications keep the lists short: READ or WRITE on a topic or group implies
DESCRIBE; WRITE on any topic implies the idempotent producer's IDEMPOTENT_WRITE (Kafka 3.0+,
KIP-679). Nobody but the administrator running ``topics create`` gets CREATE on the cluster,
ALTER or DELETE.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from stream.config.settings import TABLES, Settings
from stream.errors import UserError

__all__ = [
    "ROLES",
    "Binding",
    "Grant",
    "Pattern",
    "Resource",
    "bindings_for",
    "grants",
    "parse_principals",
    "principal_named",
    "principal_shown",
]


class Resource(IntEnum):
    """Kafka's resource types (the protocol's codes)."""

    TOPIC = 2
    GROUP = 3


class Pattern(IntEnum):
    """Kafka's resource pattern types (the protocol's codes)."""

    LITERAL = 3
    PREFIXED = 4


class Operation(IntEnum):
    """The operations granted here (the protocol's codes)."""

    READ = 3
    WRITE = 4
    CREATE = 5
    DESCRIBE = 8


@dataclass(frozen=True, order=True)
class Grant:
    """ALLOW ``operation`` on the resource ``name`` (matched as ``pattern``)."""

    resource: Resource
    name: str
    pattern: Pattern
    operation: Operation

    def __str__(self) -> str:
        return (
            f"ALLOW {self.operation.name:<8} {self.resource.name:<5} {self.pattern.name:<8} "
            f"{self.name}"
        )


@dataclass(frozen=True, order=True)
class Binding:
    """A grant to one principal (``User:name``), for the role it was named with."""

    principal: str
    role: str
    grant: Grant

    def __str__(self) -> str:
        return f"{self.principal:<28} {self.role:<13} {self.grant}"


ROLES = ("fleet", "worker", "cache-writer", "analytics", "operator", "rerate")

R, W, C, D = Operation.READ, Operation.WRITE, Operation.CREATE, Operation.DESCRIBE


def _topics(
    names: tuple[str, ...], *ops: Operation, pattern: Pattern = Pattern.LITERAL
) -> list[Grant]:
    return [Grant(Resource.TOPIC, name, pattern, op) for name in names for op in ops]


def _group(name: str, pattern: Pattern = Pattern.LITERAL) -> Grant:
    return Grant(Resource.GROUP, name, pattern, Operation.READ)


def worker_internal_topics(settings: Settings) -> tuple[str, ...]:
    """The topics a worker reads and writes that nobody else uses: its command topics and its
    tables' changelogs."""
    return (
        settings.match_commands_topic,
        settings.player_commands_topic,
        *(settings.changelog_topic(table) for table in TABLES),
    )


def leader_topic(settings: Settings) -> str:
    """Faust's leader topic: the group's members consume it (the leader is found through its
    assignment); nothing is ever sent to it."""
    return f"{settings.app_id}-__assignor-__leader"


def grants(settings: Settings, role: str, rerate_app_id: str | None = None) -> list[Grant]:
    """The ACLs of ``role`` (one of ROLES) in the deployment ``settings`` describes; the
    ``rerate`` role needs the re-rating deployment's app id. Sorted, without repeats."""
    t = settings.topics
    inputs = (t.match_started, t.match_finished)
    if role == "fleet":
        out = _topics(inputs, W)
    elif role == "worker":
        out = [
            *_topics(inputs, R),
            *_topics(worker_internal_topics(settings), R, W, C),
            *_topics((leader_topic(settings),), R, C),
            *_topics((t.rating_changed, t.dead_letter), W),
            _group(settings.app_id),
        ]
        if settings.cache.writer == "worker":
            out += grants(settings, "cache-writer")
    elif role == "cache-writer":
        out = [*_topics((t.rating_changed,), R), *_topics((t.dead_letter,), W)]
        out.append(_group(settings.cache_group))
    elif role == "analytics":
        out = [
            *_topics((t.rating_changed,), R),
            _group(f"{settings.app_id}-analytics", Pattern.PREFIXED),
        ]
    elif role == "operator":
        out = [*_topics((t.audit, t.rating_changed), R, W), *_topics(inputs, R)]
        out += _topics((settings.ratings_changelog_topic,), R)  # what `cache rebuild` reads
        if rerate_app_id is not None:
            # cutover reads the shadow and the re-rating group's committed offsets.
            out += _topics((f"{rerate_app_id}-",), R, pattern=Pattern.PREFIXED)
            out.append(Grant(Resource.GROUP, rerate_app_id, Pattern.LITERAL, D))
    elif role == "rerate":
        if rerate_app_id is None:
            raise UserError(
                "--rerate-app-id: the rerate role needs the re-rating deployment's app id"
            )
        out = [
            *_topics(inputs, R),
            *_topics((f"{rerate_app_id}-",), R, W, C, pattern=Pattern.PREFIXED),
            _group(rerate_app_id),
        ]
    else:
        raise UserError(f"role {role!r} is not one of {', '.join(ROLES)}")
    return sorted(set(out))


def principal_shown(settings: Settings) -> str:
    """Who this client is to the brokers, for messages: the SASL user, or the connection's."""
    return principal_named(settings.kafka.security.sasl_username)


def principal_named(sasl_username: str | None) -> str:
    """:func:`principal_shown` from the SASL user name alone (None: not set)."""
    return f"KAFKA_SASL_USERNAME {sasl_username!r}" if sasl_username else "this client's principal"


def parse_principals(values: list[str]) -> list[tuple[str, str]]:
    """``ROLE=PRINCIPAL`` arguments as (role, principal) pairs; UserError naming the value
    when the role is unknown or the principal is not ``Type:name`` (``User:game-servers``)."""
    pairs: list[tuple[str, str]] = []
    for value in values:
        role, sep, principal = value.partition("=")
        if not sep or role not in ROLES:
            raise UserError(
                f"--principal {value!r}: expected ROLE=PRINCIPAL, ROLE one of {', '.join(ROLES)}"
            )
        kind, colon, name = principal.partition(":")
        if not colon or not kind or not name or any(c.isspace() for c in principal):
            raise UserError(
                f"--principal {value!r}: the principal must be Type:name, e.g. User:game-servers"
            )
        pairs.append((role, principal))
    return pairs


def bindings_for(
    settings: Settings, principals: list[tuple[str, str]], rerate_app_id: str | None = None
) -> list[Binding]:
    """Every ACL binding for the named (role, principal) pairs, sorted, without repeats."""
    if rerate_app_id is not None:
        _check_rerate_app_id(settings, rerate_app_id)
    return sorted(
        {
            Binding(principal, role, grant)
            for role, principal in principals
            for grant in grants(settings, role, rerate_app_id)
        }
    )


def _check_rerate_app_id(settings: Settings, app_id: str) -> None:
    """A re-rating deployment's app id whose prefix (``ID-``) covers no topic and no group of
    the live deployment: the rerate role owns everything under it."""
    if not app_id.strip() or any(c.isspace() for c in app_id):
        raise UserError(f"--rerate-app-id {app_id!r}: a name without spaces")
    live = [spec_name for spec_name, _ in settings.named_topics()]
    live += [settings.app_id, settings.cache_group, leader_topic(settings)]
    covered = [name for name in live if name == app_id or name.startswith(f"{app_id}-")]
    if covered:
        raise UserError(
            f"--rerate-app-id {app_id!r}: its prefix {app_id + '-'!r} covers the live"
            f" deployment's {covered[0]!r}; give the re-rating deployment its own app id"
            f" (e.g. {settings.app_id}-g2)"
        )
