"""Applying Kafka ACL bindings to the brokers (CreateAcls, one request per binding).

Failure: an unreachable broker is UnreachableError (one line naming KAFKA_BOOTSTRAP_SERVERS);
a broker that does not offer the ACL API (Tansu, the local broker, does not), has no
authorizer configured, or refuses the principal running the command is AclError naming the
binding and the broker's reason, raised before or at the first binding it refuses, after
which nothing more is sent: bindings applied before it stay (they are valid on their own).
Replay: Kafka keeps one copy of an identical binding, so running it again changes nothing.
"""

from __future__ import annotations

import asyncio

from aiokafka.client import AIOKafkaClient
from aiokafka.errors import (
    IncompatibleBrokerVersion,
    KafkaConnectionError,
    KafkaError,
    for_code,
)
from aiokafka.protocol.admin import CreateAclsRequest

from stream.access.kafka import Binding
from stream.config.settings import Settings
from stream.reachability import kafka_client

__all__ = ["ALLOW", "AclError", "apply_bindings"]

ALLOW = 3  # Kafka's permission type code for ALLOW
ANY_HOST = "*"
NOTHING = "this ACL and the ones after it were not applied (apply them with kafka-acls.sh)"

# Error codes whose cause the broker's text does not say plainly.
_REASONS = {
    31: "the principal running this command may not alter ACLs (it needs ALTER on the cluster)",
    54: "the broker has no authorizer configured (authorizer.class.name), so it keeps no ACLs",
}


class AclError(RuntimeError):
    """The brokers did not take a binding; the message names it and why."""


async def apply_bindings(settings: Settings, bindings: list[Binding]) -> int:
    """Send every binding; returns how many were sent and accepted (all of them, or AclError)."""
    async with kafka_client(settings) as client:
        for binding in bindings:
            await _create(settings, client, binding)
    return len(bindings)


async def _create(settings: Settings, client: AIOKafkaClient, binding: Binding) -> None:
    g = binding.grant
    request = CreateAclsRequest(
        g.resource.value,
        g.name,
        g.pattern.value,
        binding.principal,
        ANY_HOST,
        g.operation.value,
        ALLOW,
    )
    node = client.get_random_node()
    where = f"the broker at {settings.kafka.bootstrap_servers}"
    try:
        response = await asyncio.wait_for(
            client.send(node, request), settings.connect_timeout_seconds
        )
    except (IncompatibleBrokerVersion, NotImplementedError):
        raise AclError(f"{where} does not offer the CreateAcls API: {NOTHING}") from None
    except KafkaConnectionError:
        # It answered the metadata request of the bootstrap, so it is reachable: Tansu lists
        # CreateAcls among its APIs and answers it with a body no Kafka client can read.
        raise AclError(f"{where} gave no readable answer to CreateAcls: {NOTHING}") from None
    except KafkaError as exc:
        raise AclError(f"{where} failed CreateAcls ({type(exc).__name__}): {NOTHING}") from None
    except TimeoutError:
        raise AclError(
            f"{where} did not answer CreateAcls within {settings.connect_timeout_seconds:g} s"
            f" (SKILLSTREAM_CONNECT_TIMEOUT_SECONDS): {NOTHING}"
        ) from None
    for code, message in response.creation_responses:
        if code:
            reason = _REASONS.get(code) or message or for_code(code).__name__
            raise AclError(f"{binding.principal} {g}: refused by {where}: {reason}")
