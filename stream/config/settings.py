"""Worker settings, read from the environment (every variable: docs/configuration.md).

Grouped by concern, each group with its one reader: the deployment's own (app id, partitions,
modes and corrections files), ``kafka`` (brokers, security, client limits), ``topics`` (the
names a deployment chooses), ``redis``, ``cache`` (the rating cache's layout and policy) and
``worker`` (batches, event time, tables, the web page). A mistake is one line naming the
variable (SettingsError, exit 2)."""

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
from stream.config.envreader import EnvReader, SettingsError
from stream.config.modes import Modes, load_modes
from stream.config.security import KafkaSecurity, SecurityError
from stream.config.stores import store_named
from stream.events import EventLimits

__all__ = [
    "CRASH_POINTS",
    "TABLES",
    "CacheSettings",
    "KafkaSettings",
    "RedisSettings",
    "Settings",
    "SettingsError",
    "TopicNames",
    "WorkerSettings",
    "parse_crash_at",
    "redact_url",
]

# An event forwarded to its match's partition travels as a JSON string inside a command: quotes
# and whitespace escaped (2 bytes each), a key's control bytes as \u00XX (6), plus its origin.
# So an event may be at most this fraction of a record.
EVENT_EXPANSION = 8
# Room for a dead letter's headers (reason up to 1 KiB, origin, sizes) and some of its bytes.
MIN_REQUEST_BYTES = 16_384


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
class KafkaSettings:
    """How the worker and the commands reach Kafka."""

    bootstrap_servers: str = "localhost:9092"
    security: KafkaSecurity = field(default_factory=KafkaSecurity)
    replication_factor: int = 1
    # How long the group waits for a lost worker's heartbeat before its partitions move: the
    # floor of a fail-over (docs/operations.md, "Fail-over"). 6 s is the least Apache Kafka
    # accepts by default (group.min.session.timeout.ms); heartbeats go every fifth of it.
    session_timeout_seconds: float = 6.0
    # How long the broker may hold an empty fetch. Kafka answers a fetch as soon as data is
    # produced; Tansu answers a group consumer of several topics only when the wait ends.
    fetch_max_wait_seconds: float = 0.05
    # The largest record the worker's producers send (aiokafka's max_request_size, checked per
    # record). At most the broker's message.max.bytes (Apache Kafka: 1,048,588), so whatever
    # the producers let through the broker takes; dead letters are cut to fit it.
    max_request_bytes: int = 1_048_576

    @property
    def broker_urls(self) -> list[str]:
        return [f"kafka://{host.strip()}" for host in self.bootstrap_servers.split(",") if host]

    @classmethod
    def read(cls, env: Mapping[str, str], reader: EnvReader) -> KafkaSettings:
        defaults = cls()
        bootstrap_servers = env.get("KAFKA_BOOTSTRAP_SERVERS", defaults.bootstrap_servers)
        try:
            bootstrap_addresses("KAFKA_BOOTSTRAP_SERVERS", bootstrap_servers)
        except AddressError as exc:
            raise SettingsError(str(exc)) from None
        try:
            security = KafkaSecurity.from_env(env)
        except SecurityError as exc:
            raise SettingsError(str(exc)) from None
        max_request_bytes = reader.integer(
            "SKILLSTREAM_MAX_REQUEST_BYTES", defaults.max_request_bytes
        )
        if max_request_bytes < MIN_REQUEST_BYTES:
            raise SettingsError(
                f"SKILLSTREAM_MAX_REQUEST_BYTES: must be at least {MIN_REQUEST_BYTES}, "
                f"got {max_request_bytes}"
            )
        return cls(
            bootstrap_servers=bootstrap_servers,
            security=security,
            replication_factor=reader.integer(
                "SKILLSTREAM_REPLICATION_FACTOR", defaults.replication_factor
            ),
            session_timeout_seconds=reader.seconds(
                "SKILLSTREAM_SESSION_TIMEOUT_SECONDS", defaults.session_timeout_seconds
            ),
            fetch_max_wait_seconds=reader.seconds(
                "SKILLSTREAM_FETCH_MAX_WAIT_MS", defaults.fetch_max_wait_seconds, scale=1000.0
            ),
            max_request_bytes=max_request_bytes,
        )


@dataclass(frozen=True)
class TopicNames:
    """The topics a deployment names (the internal ones derive from the app id: Settings)."""

    match_started: str = "match-started"
    match_finished: str = "match-finished"
    rating_changed: str = "rating-changed"
    dead_letter: str = "skillstream-dlq"
    # Operators' corrections (void, adjust, erase), one partition, kept for good:
    # stream/corrections/audit.py.
    audit: str = "skillstream-audit"

    @classmethod
    def read(cls, reader: EnvReader) -> TopicNames:
        defaults = cls()
        return cls(
            match_started=reader.name("SKILLSTREAM_TOPIC_MATCH_STARTED", defaults.match_started),
            match_finished=reader.name("SKILLSTREAM_TOPIC_MATCH_FINISHED", defaults.match_finished),
            rating_changed=reader.name("SKILLSTREAM_TOPIC_RATING_CHANGED", defaults.rating_changed),
            dead_letter=reader.name("SKILLSTREAM_TOPIC_DLQ", defaults.dead_letter),
            audit=reader.name("SKILLSTREAM_TOPIC_AUDIT", defaults.audit),
        )


@dataclass(frozen=True)
class RedisSettings:
    """Where the rating cache is."""

    # May hold a password (redis://user:secret@host): never in repr or logs.
    url: str = field(default="redis://localhost:6379/0", repr=False)

    @property
    def url_redacted(self) -> str:
        """REDIS_URL with any password replaced, for logs and banners."""
        return redact_url(self.url)

    @property
    def address(self) -> str:
        """Where REDIS_URL points (host:port or socket path), for error messages."""
        parts = urlsplit(self.url)
        if parts.scheme == "unix":
            return parts.path
        return f"{parts.hostname}:{parts.port or 6379}"

    @classmethod
    def read(cls, env: Mapping[str, str]) -> RedisSettings:
        url = env.get("REDIS_URL", cls().url)
        try:
            check_redis_url("REDIS_URL", url, redact_url(url))
        except AddressError as exc:
            raise SettingsError(str(exc)) from None
        return cls(url=url)


@dataclass(frozen=True)
class CacheSettings:
    """The rating cache: key prefix, the k of the conservative leaderboard (rating - k *
    deviation), and whether this worker process also runs the cache writer ("worker") or leaves
    it to `skillstream cache writer` processes ("off"); each player's history length, the past
    seasons' standings kept, how long (event time) a player may go without a match before
    leaving the current boards (0: never), and how long after a season's start a late event of
    the season before still reaches its final standings (0: never). docs/seasons.md."""

    prefix: str = "skillstream"
    conservative_k: float = 3.0
    writer: str = "worker"
    history_length: int = 20
    seasons_kept: int = 4
    inactive_seconds: float = 0.0
    season_grace_seconds: float = 600.0

    @classmethod
    def read(cls, env: Mapping[str, str], reader: EnvReader) -> CacheSettings:
        defaults = cls()
        writer = env.get("SKILLSTREAM_CACHE_WRITER", defaults.writer)
        if writer not in ("worker", "off"):
            raise SettingsError(f"SKILLSTREAM_CACHE_WRITER: expected worker or off, got {writer!r}")
        inactive_days = reader.number(
            "SKILLSTREAM_CACHE_INACTIVE_DAYS", defaults.inactive_seconds / 86_400.0
        )
        return cls(
            prefix=reader.name("SKILLSTREAM_CACHE_PREFIX", defaults.prefix),
            conservative_k=reader.number(
                "SKILLSTREAM_CACHE_CONSERVATIVE_K", defaults.conservative_k
            ),
            writer=writer,
            history_length=reader.integer(
                "SKILLSTREAM_CACHE_HISTORY_LENGTH", defaults.history_length
            ),
            seasons_kept=reader.integer("SKILLSTREAM_CACHE_SEASONS_KEPT", defaults.seasons_kept),
            inactive_seconds=inactive_days * 86_400.0,
            season_grace_seconds=reader.number(
                "SKILLSTREAM_CACHE_SEASON_GRACE_SECONDS", defaults.season_grace_seconds
            ),
        )


@dataclass(frozen=True)
class WorkerSettings:
    """How a worker batches, keeps event time and its tables, and shows itself."""

    store: str = "memory"
    data_dir: Path = Path("skillstream-data")
    batch_size: int = 500
    # 10 ms batches and 50 ms fetches: on the local stack the same p99 as 5 and 20 ms, with a
    # seventh less worker CPU and a quarter less broker CPU (docs/benchmarks.md, "Batch and
    # fetch waits").
    batch_wait_seconds: float = 0.01
    # The combiner's tick (sent while anything is pending): each one starts a round of reports,
    # which is what moves event time, so a match whose start and finish come together waits
    # about half a tick for its snapshots: 0.1 s cut that match's p50 from 830 to about 260 ms
    # at 500/s, for 480 small records a second of rounds on 4 partitions (docs/benchmarks.md,
    # "The tick").
    tick_seconds: float = 0.1
    # A match partition busy with batches also reports at the end of one, at most this often
    # (0: every batch), without waiting for the tick: an instant match then waits neither for
    # the tick's hop nor for half a tick (docs/benchmarks.md, "The tick").
    progress_seconds: float = 0.05
    retention_seconds: float = 3600.0
    web_port: int | None = None
    # Every interface, so the health and metrics pages answer from outside a container;
    # 127.0.0.1 keeps them on this machine.
    web_bind: str = "0.0.0.0"
    # Faust refuses to recover a RocksDB partition whose stored changelog offset is past the
    # broker's end offset (the store belongs to another incarnation of the topic). Tansu reports
    # end offsets too low (docs/decisions.md, known problems), so the local stack turns the
    # check off.
    recovery_consistency_check: bool = True
    # Copies of each table partition Faust keeps on another worker (table_standby_replicas),
    # taken over as the table when the worker that owns them is lost (docs/operations.md,
    # "Fail-over"): one costs each worker the memory of another share of the tables.
    standby_replicas: int = 1
    # After each recovery, compare every kept memory-store partition with its changelog and log
    # any difference as an error (stream/pipeline/storeaudit.py): for fault runs, not production.
    audit_stores: bool = False
    limits: EventLimits = field(default_factory=EventLimits)
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

    @classmethod
    def read(cls, env: Mapping[str, str], reader: EnvReader, request_bytes: int) -> WorkerSettings:
        """``request_bytes``: the largest record (KafkaSettings), which an event forwarded to
        its match's partition must fit in."""
        defaults = cls()
        limits = EventLimits(
            max_bytes=reader.integer("SKILLSTREAM_MAX_EVENT_BYTES", defaults.limits.max_bytes),
            max_players=reader.integer("SKILLSTREAM_MAX_PLAYERS", defaults.limits.max_players),
            max_teams=reader.integer("SKILLSTREAM_MAX_TEAMS", defaults.limits.max_teams),
            max_id_length=reader.integer(
                "SKILLSTREAM_MAX_ID_LENGTH", defaults.limits.max_id_length
            ),
        )
        if limits.max_bytes * EVENT_EXPANSION > request_bytes:
            raise SettingsError(
                f"SKILLSTREAM_MAX_EVENT_BYTES: {limits.max_bytes} is over 1/{EVENT_EXPANSION} of "
                f"SKILLSTREAM_MAX_REQUEST_BYTES ({request_bytes}); an event forwarded to "
                "its match's partition must fit in one record"
            )
        web_port = env.get("SKILLSTREAM_WEB_PORT") or None
        try:
            web_bind = check_bind_address(
                "SKILLSTREAM_WEB_BIND", env.get("SKILLSTREAM_WEB_BIND") or defaults.web_bind
            )
            port = None if web_port is None else port_number("SKILLSTREAM_WEB_PORT", web_port)
        except AddressError as exc:
            raise SettingsError(str(exc)) from None
        store = env.get("SKILLSTREAM_STORE", defaults.store)
        try:
            store_named(store, "SKILLSTREAM_STORE")
        except ValueError as exc:
            raise SettingsError(str(exc)) from None
        crash_at = None
        if env.get("SKILLSTREAM_CRASH_AT"):
            try:
                crash_at = parse_crash_at(env["SKILLSTREAM_CRASH_AT"])
            except ValueError as exc:
                raise SettingsError(f"SKILLSTREAM_CRASH_AT: {exc}") from None
        return cls(
            store=store,
            data_dir=Path(env.get("SKILLSTREAM_DATA_DIR", str(defaults.data_dir))),
            batch_size=reader.integer("SKILLSTREAM_BATCH_SIZE", defaults.batch_size),
            batch_wait_seconds=reader.seconds(
                "SKILLSTREAM_BATCH_WAIT_MS", defaults.batch_wait_seconds, scale=1000.0
            ),
            tick_seconds=reader.seconds("SKILLSTREAM_TICK_SECONDS", defaults.tick_seconds),
            progress_seconds=reader.number(
                "SKILLSTREAM_PROGRESS_SECONDS", defaults.progress_seconds
            ),
            retention_seconds=reader.seconds(
                "SKILLSTREAM_RETENTION_SECONDS", defaults.retention_seconds
            ),
            web_port=port,
            web_bind=web_bind,
            recovery_consistency_check=reader.boolean(
                "SKILLSTREAM_RECOVERY_CONSISTENCY_CHECK", defaults.recovery_consistency_check
            ),
            standby_replicas=reader.count(
                "SKILLSTREAM_STANDBY_REPLICAS", defaults.standby_replicas
            ),
            audit_stores=reader.boolean("SKILLSTREAM_AUDIT_STORES", defaults.audit_stores),
            limits=limits,
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


@dataclass(frozen=True)
class Settings:
    """A deployment's settings: its own, then one group per concern (module docstring)."""

    app_id: str = "skillstream"
    partitions: int = 8
    modes_file: Path | None = None
    # A re-rating deployment's corrections (voids by match id, erasures), applied to every input
    # it reads (stream/corrections/inputs.py; docs/operations.md#correcting-the-past-live).
    corrections_file: Path | None = None
    log_format: str = "text"
    # How long a command waits for Kafka or Redis to answer before it gives up with one line
    # naming the address (a port where nothing, or something else, answers).
    connect_timeout_seconds: float = 10.0
    kafka: KafkaSettings = field(default_factory=KafkaSettings)
    topics: TopicNames = field(default_factory=TopicNames)
    redis: RedisSettings = field(default_factory=RedisSettings)
    cache: CacheSettings = field(default_factory=CacheSettings)
    worker: WorkerSettings = field(default_factory=WorkerSettings)

    @property
    def match_commands_topic(self) -> str:
        return f"{self.app_id}-match-commands"

    @property
    def player_commands_topic(self) -> str:
        return f"{self.app_id}-player-commands"

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
        topics = self.topics
        return [
            (topics.match_started, "SKILLSTREAM_TOPIC_MATCH_STARTED"),
            (topics.match_finished, "SKILLSTREAM_TOPIC_MATCH_FINISHED"),
            (topics.rating_changed, "SKILLSTREAM_TOPIC_RATING_CHANGED"),
            (topics.dead_letter, "SKILLSTREAM_TOPIC_DLQ"),
            (topics.audit, "SKILLSTREAM_TOPIC_AUDIT"),
            (self.match_commands_topic, f"the match commands ({app})"),
            (self.player_commands_topic, f"the player commands ({app})"),
            *((self.changelog_topic(t), f"the {t} table's changelog ({app})") for t in TABLES),
        ]

    def load_modes(self) -> Modes:
        """The modes a worker (and the cache's writer and readers) rate with: the modes file's,
        or the built-in ones."""
        return Modes() if self.modes_file is None else load_modes(self.modes_file)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Settings from ``KAFKA_BOOTSTRAP_SERVERS``, ``REDIS_URL`` and ``SKILLSTREAM_*``."""
        env = os.environ if environ is None else environ
        defaults = cls()
        reader = EnvReader(env)
        kafka = KafkaSettings.read(env, reader)
        worker = WorkerSettings.read(env, reader, kafka.max_request_bytes)
        redis = RedisSettings.read(env)
        cache = CacheSettings.read(env, reader)
        log_format = env.get("SKILLSTREAM_LOG_FORMAT", defaults.log_format)
        if log_format not in ("text", "json"):
            raise SettingsError(
                f"SKILLSTREAM_LOG_FORMAT: expected text or json, got {log_format!r}"
            )
        settings = cls(
            app_id=reader.name("SKILLSTREAM_APP_ID", defaults.app_id),
            partitions=reader.integer("SKILLSTREAM_PARTITIONS", defaults.partitions),
            modes_file=_existing(env, "SKILLSTREAM_MODES_FILE"),
            corrections_file=_existing(env, "SKILLSTREAM_CORRECTIONS_FILE"),
            log_format=log_format,
            connect_timeout_seconds=reader.seconds(
                "SKILLSTREAM_CONNECT_TIMEOUT_SECONDS", defaults.connect_timeout_seconds
            ),
            kafka=kafka,
            topics=TopicNames.read(reader),
            redis=redis,
            cache=cache,
            worker=worker,
        )
        _refuse_shared_topics(settings)
        needs = store_named(worker.store, "SKILLSTREAM_STORE")
        if needs.module is not None and importlib.util.find_spec(needs.module) is None:
            raise SettingsError(
                f"SKILLSTREAM_STORE={worker.store} needs {needs.module}: {needs.install}"
            )
        return settings


def _existing(env: Mapping[str, str], name: str) -> Path | None:
    """The file variable ``name`` names (None: unset); SettingsError when there is none."""
    raw = env.get(name) or None
    if raw is None:
        return None
    path = Path(raw)
    if not path.is_file():
        raise SettingsError(f"{name}: no such file: {path}")
    return path


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
