"""Worker settings, read from the environment (every variable: docs/configuration.md)."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from stream.config.addresses import (
    AddressError,
    bootstrap_addresses,
    check_bind_address,
    check_redis_url,
    port_number,
)
from stream.config.modes import Modes, load_modes
from stream.config.security import KafkaSecurity, SecurityError
from stream.config.stores import store_named
from stream.errors import UserError
from stream.events import EventLimits

# An event forwarded to its match's partition travels as a JSON string inside a command: quotes
# and whitespace escaped (2 bytes each), a key's control bytes as \u00XX (6), plus its origin.
# So an event may be at most this fraction of a record.
EVENT_EXPANSION = 8
# Room for a dead letter's headers (reason up to 1 KiB, origin, sizes) and some of its bytes.
MIN_REQUEST_BYTES = 16_384


class SettingsError(UserError, ValueError):
    """A setting that cannot be used; the message names the variable."""


# Where SKILLSTREAM_CRASH_AT may kill a worker (stream/pipeline/crashpoints.py).
CRASH_POINTS = (
    "processed",
    "delivering",
    "written",
    "flushing",
    "flushed",
    "committed",
    "revoked",
)


def parse_crash_at(raw: str) -> tuple[str, int]:
    """``point:n`` (or ``point``, n = 1) as (point, n); ValueError naming what is wrong."""
    point, sep, count = raw.partition(":")
    if point not in CRASH_POINTS:
        raise ValueError(f"unknown crash point {point!r} (one of {', '.join(CRASH_POINTS)})")
    if not sep:
        return point, 1
    try:
        n = int(count)
    except ValueError:
        raise ValueError(f"expected point:n with a whole number n, got {raw!r}") from None
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    return point, n


# The Faust tables (stream/pipeline/topology.py); each has a changelog
# ``<app id>-<name>-changelog``.
TABLES = ("matches", "clocks", "ratings", "pending", "populations")


@dataclass(frozen=True)
class Settings:
    bootstrap_servers: str = "localhost:9092"
    # May hold a password (redis://user:secret@host): never in repr or logs.
    redis_url: str = field(default="redis://localhost:6379/0", repr=False)
    kafka_security: KafkaSecurity = field(default_factory=KafkaSecurity)
    log_format: str = "text"
    modes_file: Path | None = None
    app_id: str = "skillstream"
    partitions: int = 8
    replication_factor: int = 1
    match_started_topic: str = "match-started"
    match_finished_topic: str = "match-finished"
    rating_changed_topic: str = "rating-changed"
    dead_letter_topic: str = "skillstream-dlq"
    # Operators' corrections (void, adjust, erase), one partition, kept for good:
    # stream/corrections/audit.py.
    audit_topic: str = "skillstream-audit"
    # A re-rating deployment's corrections (voids by match id, erasures), applied to every input
    # it reads (stream/corrections/inputs.py; docs/operations.md#correcting-the-past-live).
    corrections_file: Path | None = None
    store: str = "memory"
    data_dir: Path = Path("skillstream-data")
    batch_size: int = 500
    # 10 ms batches and 50 ms fetches: on the local stack the same p99 as 5 and 20 ms, with a
    # seventh less worker CPU and a quarter less broker CPU (docs/benchmarks.md, "Batch and
    # fetch waits").
    batch_wait_seconds: float = 0.01
    # How long the broker may hold an empty fetch. Kafka answers a fetch as soon as data is
    # produced; Tansu answers a group consumer of several topics only when the wait ends.
    fetch_max_wait_seconds: float = 0.05
    # The leader's tick: each one starts a round of progress reports, which is what moves event
    # time, so a match whose start and finish come together waits about half a tick for its
    # snapshots: 0.1 s cut that match's p50 from 830 to about 260 ms at 500/s, for 480 small
    # records a second of rounds on 4 partitions (docs/benchmarks.md, "The tick").
    tick_seconds: float = 0.1
    # A match partition busy with batches also reports at the end of one, at most this often
    # (0: every batch), without waiting for the tick: an instant match then waits neither for
    # the tick's hop nor for half a tick (docs/benchmarks.md, "The tick").
    progress_seconds: float = 0.05
    retention_seconds: float = 3600.0
    session_timeout_seconds: float = 10.0
    web_port: int | None = None
    # Every interface, so the health and metrics pages answer from outside a container;
    # 127.0.0.1 keeps them on this machine.
    web_bind: str = "0.0.0.0"
    # How long a command waits for Kafka or Redis to answer before it gives up with one line
    # naming the address (a port where nothing, or something else, answers).
    connect_timeout_seconds: float = 10.0
    # Faust refuses to recover a RocksDB partition whose stored changelog offset is past the
    # broker's end offset (the store belongs to another incarnation of the topic). Tansu reports
    # end offsets too low (docs/decisions.md, known problems), so the local stack turns the
    # check off.
    recovery_consistency_check: bool = True
    # The Redis cache: key prefix, the k of the conservative leaderboard (rating - k *
    # deviation), and whether this worker process also runs the cache writer ("worker") or
    # leaves it to `skillstream cache writer` processes ("off").
    cache_prefix: str = "skillstream"
    cache_conservative_k: float = 3.0
    cache_writer: str = "worker"
    # Each player's history length in the cache, the past seasons' standings it keeps, and how
    # long (event time) a player may go without a match before leaving the current boards
    # (0: never). docs/seasons.md.
    cache_history_length: int = 20
    cache_seasons_kept: int = 4
    cache_inactive_seconds: float = 0.0
    # How long (event time) after a season's start a late event of the season before still
    # reaches that season's final standings (0: never). docs/seasons.md.
    cache_season_grace_seconds: float = 600.0
    limits: EventLimits = field(default_factory=EventLimits)
    # The largest record the worker's producers send (aiokafka's max_request_size, checked per
    # record). At most the broker's message.max.bytes (Apache Kafka: 1,048,588), so whatever
    # the producers let through the broker takes; dead letters are cut to fit it.
    max_request_bytes: int = 1_048_576
    # Events whose time is further ahead of the worker's clock are dead-lettered.
    max_future_seconds: float = 300.0
    # How far out of event-time order the fleet may publish: every watermark is this much lower
    # (docs/event-time.md). Snapshots wait this long after a match's start, plus up to a tick.
    event_lateness_seconds: float = 0.1
    # How often the worker commits its offsets (Faust's broker_commit_interval): after a crash
    # its successor redoes at most about this much work (docs/guarantees.md, "The redo window").
    commit_interval_seconds: float = 2.8
    # A match whose fate is decided, or a player waiting for the watermarks, that has waited
    # this long (wall time) is stuck: logged once, counted, alerted (stream/pipeline/liveness.py).
    stuck_seconds: float = 60.0
    # The soak harness's crash point: the worker SIGKILLs itself the n-th time it reaches this
    # point of its commit protocol (stream/pipeline/crashpoints.py). Never set in production.
    crash_at: tuple[str, int] | None = None

    @property
    def match_commands_topic(self) -> str:
        return f"{self.app_id}-match-commands"

    @property
    def player_commands_topic(self) -> str:
        return f"{self.app_id}-player-commands"

    @property
    def redis_url_redacted(self) -> str:
        """REDIS_URL with any password replaced, for logs and banners."""
        return redact_url(self.redis_url)

    @property
    def cache_group(self) -> str:
        """The cache writer's consumer group: separate from the rating agents' on purpose."""
        return f"{self.app_id}-cache"

    @property
    def ratings_changelog_topic(self) -> str:
        """Faust's changelog of the ratings table (what `cache rebuild` reads)."""
        return self.changelog_topic("ratings")

    def changelog_topic(self, table: str) -> str:
        """Faust's name for the changelog of ``table``."""
        return f"{self.app_id}-{table}-changelog"

    def named_topics(self) -> list[tuple[str, str]]:
        """Every topic of the deployment with what names it: a variable, or the app id."""
        app = f"SKILLSTREAM_APP_ID={self.app_id}"
        return [
            (self.match_started_topic, "SKILLSTREAM_TOPIC_MATCH_STARTED"),
            (self.match_finished_topic, "SKILLSTREAM_TOPIC_MATCH_FINISHED"),
            (self.rating_changed_topic, "SKILLSTREAM_TOPIC_RATING_CHANGED"),
            (self.dead_letter_topic, "SKILLSTREAM_TOPIC_DLQ"),
            (self.audit_topic, "SKILLSTREAM_TOPIC_AUDIT"),
            (self.match_commands_topic, f"the match commands ({app})"),
            (self.player_commands_topic, f"the player commands ({app})"),
            *((self.changelog_topic(t), f"the {t} table's changelog ({app})") for t in TABLES),
        ]

    @property
    def broker_urls(self) -> list[str]:
        return [f"kafka://{host.strip()}" for host in self.bootstrap_servers.split(",") if host]

    @property
    def redis_address(self) -> str:
        """Where REDIS_URL points (host:port or socket path), for error messages."""
        parts = urlsplit(self.redis_url)
        if parts.scheme == "unix":
            return parts.path
        return f"{parts.hostname}:{parts.port or 6379}"

    def load_modes(self) -> Modes:
        """The modes a worker (and the cache's writer and readers) rate with: the modes file's,
        or the built-in ones."""
        return Modes() if self.modes_file is None else load_modes(self.modes_file)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Settings from ``KAFKA_BOOTSTRAP_SERVERS``, ``REDIS_URL`` and ``SKILLSTREAM_*``."""
        env = os.environ if environ is None else environ
        defaults = cls()
        reader = _Reader(env)
        limits = EventLimits(
            max_bytes=reader.integer("SKILLSTREAM_MAX_EVENT_BYTES", defaults.limits.max_bytes),
            max_players=reader.integer("SKILLSTREAM_MAX_PLAYERS", defaults.limits.max_players),
            max_teams=reader.integer("SKILLSTREAM_MAX_TEAMS", defaults.limits.max_teams),
            max_id_length=reader.integer(
                "SKILLSTREAM_MAX_ID_LENGTH", defaults.limits.max_id_length
            ),
        )
        max_request_bytes = reader.integer(
            "SKILLSTREAM_MAX_REQUEST_BYTES", defaults.max_request_bytes
        )
        if limits.max_bytes * EVENT_EXPANSION > max_request_bytes:
            raise SettingsError(
                f"SKILLSTREAM_MAX_EVENT_BYTES: {limits.max_bytes} is over 1/{EVENT_EXPANSION} of "
                f"SKILLSTREAM_MAX_REQUEST_BYTES ({max_request_bytes}); an event forwarded to "
                "its match's partition must fit in one record"
            )
        if max_request_bytes < MIN_REQUEST_BYTES:
            raise SettingsError(
                f"SKILLSTREAM_MAX_REQUEST_BYTES: must be at least {MIN_REQUEST_BYTES}, "
                f"got {max_request_bytes}"
            )
        modes_file = env.get("SKILLSTREAM_MODES_FILE") or None
        web_port = env.get("SKILLSTREAM_WEB_PORT") or None
        bootstrap_servers = env.get("KAFKA_BOOTSTRAP_SERVERS", defaults.bootstrap_servers)
        redis_url = env.get("REDIS_URL", defaults.redis_url)
        try:
            bootstrap_addresses("KAFKA_BOOTSTRAP_SERVERS", bootstrap_servers)
            check_redis_url("REDIS_URL", redis_url, redact_url(redis_url))
            web_bind = check_bind_address(
                "SKILLSTREAM_WEB_BIND", env.get("SKILLSTREAM_WEB_BIND") or defaults.web_bind
            )
            port = None if web_port is None else port_number("SKILLSTREAM_WEB_PORT", web_port)
        except AddressError as exc:
            raise SettingsError(str(exc)) from None
        store = env.get("SKILLSTREAM_STORE", defaults.store)
        cache_writer = env.get("SKILLSTREAM_CACHE_WRITER", defaults.cache_writer)
        if cache_writer not in ("worker", "off"):
            raise SettingsError(
                f"SKILLSTREAM_CACHE_WRITER: expected worker or off, got {cache_writer!r}"
            )
        log_format = env.get("SKILLSTREAM_LOG_FORMAT", defaults.log_format)
        if log_format not in ("text", "json"):
            raise SettingsError(
                f"SKILLSTREAM_LOG_FORMAT: expected text or json, got {log_format!r}"
            )
        try:
            kafka_security = KafkaSecurity.from_env(env)
        except SecurityError as exc:
            raise SettingsError(str(exc)) from None
        try:
            needs = store_named(store, "SKILLSTREAM_STORE")
        except ValueError as exc:
            raise SettingsError(str(exc)) from None
        crash_at = None
        if env.get("SKILLSTREAM_CRASH_AT"):
            try:
                crash_at = parse_crash_at(env["SKILLSTREAM_CRASH_AT"])
            except ValueError as exc:
                raise SettingsError(f"SKILLSTREAM_CRASH_AT: {exc}") from None
        settings = cls(
            bootstrap_servers=bootstrap_servers,
            redis_url=redis_url,
            kafka_security=kafka_security,
            log_format=log_format,
            modes_file=None if modes_file is None else Path(modes_file),
            corrections_file=(
                Path(env["SKILLSTREAM_CORRECTIONS_FILE"])
                if env.get("SKILLSTREAM_CORRECTIONS_FILE")
                else None
            ),
            app_id=reader.name("SKILLSTREAM_APP_ID", defaults.app_id),
            partitions=reader.integer("SKILLSTREAM_PARTITIONS", defaults.partitions),
            replication_factor=reader.integer(
                "SKILLSTREAM_REPLICATION_FACTOR", defaults.replication_factor
            ),
            match_started_topic=reader.name(
                "SKILLSTREAM_TOPIC_MATCH_STARTED", defaults.match_started_topic
            ),
            match_finished_topic=reader.name(
                "SKILLSTREAM_TOPIC_MATCH_FINISHED", defaults.match_finished_topic
            ),
            rating_changed_topic=reader.name(
                "SKILLSTREAM_TOPIC_RATING_CHANGED", defaults.rating_changed_topic
            ),
            dead_letter_topic=reader.name("SKILLSTREAM_TOPIC_DLQ", defaults.dead_letter_topic),
            audit_topic=reader.name("SKILLSTREAM_TOPIC_AUDIT", defaults.audit_topic),
            store=store,
            data_dir=Path(env.get("SKILLSTREAM_DATA_DIR", str(defaults.data_dir))),
            batch_size=reader.integer("SKILLSTREAM_BATCH_SIZE", defaults.batch_size),
            batch_wait_seconds=reader.seconds(
                "SKILLSTREAM_BATCH_WAIT_MS", defaults.batch_wait_seconds, scale=1000.0
            ),
            fetch_max_wait_seconds=reader.seconds(
                "SKILLSTREAM_FETCH_MAX_WAIT_MS", defaults.fetch_max_wait_seconds, scale=1000.0
            ),
            tick_seconds=reader.seconds("SKILLSTREAM_TICK_SECONDS", defaults.tick_seconds),
            progress_seconds=reader.number(
                "SKILLSTREAM_PROGRESS_SECONDS", defaults.progress_seconds
            ),
            retention_seconds=reader.seconds(
                "SKILLSTREAM_RETENTION_SECONDS", defaults.retention_seconds
            ),
            session_timeout_seconds=reader.seconds(
                "SKILLSTREAM_SESSION_TIMEOUT_SECONDS", defaults.session_timeout_seconds
            ),
            web_port=port,
            web_bind=web_bind,
            connect_timeout_seconds=reader.seconds(
                "SKILLSTREAM_CONNECT_TIMEOUT_SECONDS", defaults.connect_timeout_seconds
            ),
            recovery_consistency_check=reader.boolean(
                "SKILLSTREAM_RECOVERY_CONSISTENCY_CHECK", defaults.recovery_consistency_check
            ),
            cache_prefix=reader.name("SKILLSTREAM_CACHE_PREFIX", defaults.cache_prefix),
            cache_conservative_k=reader.number(
                "SKILLSTREAM_CACHE_CONSERVATIVE_K", defaults.cache_conservative_k
            ),
            cache_writer=cache_writer,
            cache_history_length=reader.integer(
                "SKILLSTREAM_CACHE_HISTORY_LENGTH", defaults.cache_history_length
            ),
            cache_seasons_kept=reader.integer(
                "SKILLSTREAM_CACHE_SEASONS_KEPT", defaults.cache_seasons_kept
            ),
            cache_inactive_seconds=reader.number(
                "SKILLSTREAM_CACHE_INACTIVE_DAYS", defaults.cache_inactive_seconds / 86_400.0
            )
            * 86_400.0,
            cache_season_grace_seconds=reader.number(
                "SKILLSTREAM_CACHE_SEASON_GRACE_SECONDS", defaults.cache_season_grace_seconds
            ),
            limits=limits,
            max_request_bytes=max_request_bytes,
            max_future_seconds=reader.seconds(
                "SKILLSTREAM_MAX_FUTURE_SECONDS", defaults.max_future_seconds
            ),
            event_lateness_seconds=reader.number(
                "SKILLSTREAM_EVENT_LATENESS_SECONDS", defaults.event_lateness_seconds
            ),
            commit_interval_seconds=reader.seconds(
                "SKILLSTREAM_COMMIT_INTERVAL_SECONDS", defaults.commit_interval_seconds
            ),
            stuck_seconds=reader.seconds("SKILLSTREAM_STUCK_SECONDS", defaults.stuck_seconds),
            crash_at=crash_at,
        )
        if settings.modes_file is not None and not settings.modes_file.is_file():
            raise SettingsError(f"SKILLSTREAM_MODES_FILE: no such file: {settings.modes_file}")
        if settings.corrections_file is not None and not settings.corrections_file.is_file():
            raise SettingsError(
                f"SKILLSTREAM_CORRECTIONS_FILE: no such file: {settings.corrections_file}"
            )
        _refuse_shared_topics(settings)
        if needs.module is not None and importlib.util.find_spec(needs.module) is None:
            raise SettingsError(f"SKILLSTREAM_STORE={store} needs {needs.module}: {needs.install}")
        return settings


def redact_url(url: str) -> str:
    """``url`` with the password of its user-info part replaced by ``***``."""
    scheme, sep, rest = url.partition("://")
    if not sep or "@" not in rest.split("/", 1)[0]:
        return url
    userinfo, _, host = rest.partition("@")
    user = userinfo.split(":", 1)[0]
    return f"{scheme}://{user}:***@{host}" if ":" in userinfo else f"{scheme}://***@{host}"


def _refuse_shared_topics(settings: Settings) -> None:
    """Two roles on one topic cannot work: a dead-letter topic that is also an input feeds
    each broken event back in for ever, an output that is an input rates its own output."""
    seen: dict[str, str] = {}
    for topic, source in settings.named_topics():
        if topic in seen:
            # The later variable is the likelier slip; a name derived from the app id goes second.
            first, second = sorted((source, seen[topic]), key=lambda s: not s.startswith("SKILL"))
            raise SettingsError(
                f"{first}: topic {topic!r} is also {second}; every topic the worker "
                "reads or writes needs its own name"
            )
        seen[topic] = source


class _Reader:
    def __init__(self, env: Mapping[str, str]) -> None:
        self.env = env

    def integer(self, name: str, default: int) -> int:
        raw = self.env.get(name)
        if raw is None or raw == "":
            return default
        try:
            value = int(raw)
        except ValueError:
            raise SettingsError(f"{name}: expected a whole number, got {raw!r}") from None
        if value < 1:
            raise SettingsError(f"{name}: must be at least 1, got {value}")
        return value

    def boolean(self, name: str, default: bool) -> bool:
        raw = (self.env.get(name) or "").strip().lower()
        if raw == "":
            return default
        if raw in ("1", "true", "yes", "on"):
            return True
        if raw in ("0", "false", "no", "off"):
            return False
        raise SettingsError(f"{name}: expected true or false, got {raw!r}")

    def number(self, name: str, default: float) -> float:
        raw = self.env.get(name)
        if raw is None or raw == "":
            return default
        try:
            value = float(raw)
        except ValueError:
            raise SettingsError(f"{name}: expected a number, got {raw!r}") from None
        if not 0.0 <= value < float("inf"):
            raise SettingsError(f"{name}: must be a finite number >= 0, got {raw!r}")
        return value

    def seconds(self, name: str, default: float, scale: float = 1.0) -> float:
        raw = self.env.get(name)
        if raw is None or raw == "":
            return default
        try:
            value = float(raw) / scale
        except ValueError:
            raise SettingsError(f"{name}: expected a number, got {raw!r}") from None
        if not value > 0 or value == float("inf"):
            raise SettingsError(f"{name}: must be a positive number, got {raw!r}")
        return value

    def name(self, name: str, default: str) -> str:
        raw = self.env.get(name) or default
        allowed = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
        if not set(raw) <= allowed or len(raw) > 200:
            raise SettingsError(
                f"{name}: {raw!r} is not a valid Kafka name (letters, digits, '.', '_', '-')"
            )
        return raw
