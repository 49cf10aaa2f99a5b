"""Kafka security (TLS, SASL) from the environment, for Faust and for the plain aiokafka
clients (cache feed, rebuild, topic admin), so every connection of a process is set up alike.

Secrets: the password is kept out of ``repr`` and out of every log line; files are named by
path only. A setting that cannot be used raises SettingsError naming the variable.
"""

from __future__ import annotations

import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from stream.errors import UserError

PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")


class SecurityError(UserError, ValueError):
    """A Kafka security setting that cannot be used; the message names the variable."""


@dataclass(frozen=True)
class KafkaSecurity:
    protocol: str = "PLAINTEXT"
    sasl_mechanism: str = "PLAIN"
    sasl_username: str | None = None
    sasl_password: str | None = field(default=None, repr=False)
    ssl_cafile: str | None = None
    ssl_certfile: str | None = None
    ssl_keyfile: str | None = None

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> KafkaSecurity:
        protocol = (env.get("KAFKA_SECURITY_PROTOCOL") or "PLAINTEXT").upper()
        if protocol not in PROTOCOLS:
            raise SecurityError(
                f"KAFKA_SECURITY_PROTOCOL: expected one of {', '.join(PROTOCOLS)}, got {protocol!r}"
            )
        mechanism = (env.get("KAFKA_SASL_MECHANISM") or "PLAIN").upper()
        if mechanism not in MECHANISMS:
            raise SecurityError(
                f"KAFKA_SASL_MECHANISM: expected one of {', '.join(MECHANISMS)}, got {mechanism!r}"
            )
        security = cls(
            protocol=protocol,
            sasl_mechanism=mechanism,
            sasl_username=env.get("KAFKA_SASL_USERNAME") or None,
            sasl_password=env.get("KAFKA_SASL_PASSWORD") or None,
            ssl_cafile=env.get("KAFKA_SSL_CAFILE") or None,
            ssl_certfile=env.get("KAFKA_SSL_CERTFILE") or None,
            ssl_keyfile=env.get("KAFKA_SSL_KEYFILE") or None,
        )
        if security.uses_sasl and not (security.sasl_username and security.sasl_password):
            raise SecurityError(
                f"KAFKA_SECURITY_PROTOCOL={protocol} needs KAFKA_SASL_USERNAME and "
                "KAFKA_SASL_PASSWORD"
            )
        if security.ssl_keyfile and not security.ssl_certfile:
            raise SecurityError("KAFKA_SSL_KEYFILE is set without KAFKA_SSL_CERTFILE")
        return security

    @property
    def uses_sasl(self) -> bool:
        return self.protocol in ("SASL_PLAINTEXT", "SASL_SSL")

    @property
    def uses_tls(self) -> bool:
        return self.protocol in ("SSL", "SASL_SSL")

    def ssl_context(self) -> ssl.SSLContext | None:
        """The TLS context (system CAs unless KAFKA_SSL_CAFILE), None without TLS."""
        if not self.uses_tls:
            return None
        try:
            context = ssl.create_default_context(cafile=self.ssl_cafile)
            if self.ssl_certfile:
                context.load_cert_chain(self.ssl_certfile, self.ssl_keyfile)
        except (OSError, ssl.SSLError) as exc:
            raise SecurityError(f"KAFKA_SSL_*: cannot load the TLS files: {exc}") from None
        return context

    def aiokafka_options(self) -> dict[str, Any]:
        """Keyword arguments for AIOKafkaConsumer/Producer/AdminClient."""
        if self.protocol == "PLAINTEXT":
            return {}
        options: dict[str, Any] = {"security_protocol": self.protocol}
        if self.uses_tls:
            options["ssl_context"] = self.ssl_context()
        if self.uses_sasl:
            options["sasl_mechanism"] = self.sasl_mechanism
            options["sasl_plain_username"] = self.sasl_username
            options["sasl_plain_password"] = self.sasl_password
        return options

    def faust_credentials(self) -> Any:
        """``broker_credentials`` for faust.App (None for PLAINTEXT)."""
        import faust

        if self.protocol == "PLAINTEXT":
            return None
        if self.uses_sasl:
            return faust.SASLCredentials(
                username=self.sasl_username,
                password=self.sasl_password,
                mechanism=self.sasl_mechanism,
                ssl_context=self.ssl_context(),
            )
        return faust.SSLCredentials(self.ssl_context())
