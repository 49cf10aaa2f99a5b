"""Settings from the environment: defaults, every kind of bad value, secrets kept out of repr."""

from __future__ import annotations

import logging
import ssl
from pathlib import Path

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from stream.config.security import KafkaSecurity
from stream.config.settings import (
    TABLES,
    CacheSettings,
    RedisSettings,
    Settings,
    SettingsError,
    redact_url,
)
from stream.pipeline.logs import JsonFormatter, logging_config
from stream.pipeline.topics import topic_specs


def test_defaults_without_any_variable() -> None:
    s = Settings.from_env({})
    assert s == Settings()
    assert s.kafka.security.aiokafka_options() == {}
    assert s.kafka.security.faust_credentials() is None
    cache = (s.cache.writer, s.cache.prefix, s.cache.conservative_k)
    assert cache == ("worker", "skillstream", 3.0)
    kept = (s.cache.history_length, s.cache.seasons_kept, s.cache.inactive_seconds)
    assert kept == (20, 4, 0.0)
    assert s.cache.season_grace_seconds == 600.0
    assert s.worker.recovery_consistency_check is True
    assert s.worker.max_future_seconds == 300.0
    assert s.log_format == "text"
    assert (s.worker.commit_interval_seconds, s.worker.crash_at) == (2.8, None)


def test_a_crash_point_is_a_point_and_how_many_times_it_is_passed_first() -> None:
    assert Settings.from_env({"SKILLSTREAM_CRASH_AT": "flushing:3"}).worker.crash_at == (
        "flushing",
        3,
    )
    assert Settings.from_env({"SKILLSTREAM_CRASH_AT": "revoked"}).worker.crash_at == ("revoked", 1)


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("SKILLSTREAM_PARTITIONS", "eight", "expected a whole number"),
        ("SKILLSTREAM_PARTITIONS", "0", "at least 1"),
        ("SKILLSTREAM_STANDBY_REPLICAS", "-1", "must be 0 or more, got -1"),
        ("SKILLSTREAM_STANDBY_REPLICAS", "one", "expected a whole number"),
        ("SKILLSTREAM_AUDIT_STORES", "maybe", "expected true or false"),
        ("SKILLSTREAM_BATCH_WAIT_MS", "-5", "positive number"),
        ("SKILLSTREAM_MAX_FUTURE_SECONDS", "inf", "positive number"),
        ("SKILLSTREAM_STORE", "redis", "memory or rocksdb"),
        ("SKILLSTREAM_CACHE_WRITER", "sometimes", "worker or off"),
        ("SKILLSTREAM_CACHE_CONSERVATIVE_K", "-1", "finite number >= 0"),
        ("SKILLSTREAM_CACHE_CONSERVATIVE_K", "nan", "finite number >= 0"),
        ("SKILLSTREAM_CACHE_PREFIX", "a{b}", "not a valid Kafka name"),
        ("SKILLSTREAM_CACHE_HISTORY_LENGTH", "0", "at least 1"),
        ("SKILLSTREAM_CACHE_SEASONS_KEPT", "two", "expected a whole number"),
        ("SKILLSTREAM_CACHE_INACTIVE_DAYS", "-3", "finite number >= 0"),
        ("SKILLSTREAM_CACHE_SEASON_GRACE_SECONDS", "-1", "finite number >= 0"),
        ("SKILLSTREAM_RECOVERY_CONSISTENCY_CHECK", "maybe", "expected true or false"),
        ("SKILLSTREAM_LOG_FORMAT", "xml", "text or json"),
        ("SKILLSTREAM_TOPIC_DLQ", "dead letters", "not a valid Kafka name"),
        ("KAFKA_SECURITY_PROTOCOL", "TLS", "KAFKA_SECURITY_PROTOCOL: expected one of"),
        ("KAFKA_SASL_MECHANISM", "GSSAPI", "KAFKA_SASL_MECHANISM: expected one of"),
        ("SKILLSTREAM_MODES_FILE", "/nonexistent/modes.toml", "no such file"),
        ("SKILLSTREAM_COMMIT_INTERVAL_SECONDS", "0", "positive number"),
        ("SKILLSTREAM_CRASH_AT", "somewhere", "unknown crash point 'somewhere'"),
        ("SKILLSTREAM_CRASH_AT", "flushing:x", "whole number n"),
        ("SKILLSTREAM_CRASH_AT", "flushing:0", "at least 1"),
    ],
)
def test_a_bad_value_names_its_variable(name: str, value: str, message: str) -> None:
    with pytest.raises(SettingsError, match=message) as caught:
        Settings.from_env({name: value})
    assert name in str(caught.value) or "KAFKA" in name


def test_the_cache_keeps_what_it_is_told() -> None:
    s = Settings.from_env(
        {
            "SKILLSTREAM_CACHE_HISTORY_LENGTH": "50",
            "SKILLSTREAM_CACHE_SEASONS_KEPT": "1",
            "SKILLSTREAM_CACHE_INACTIVE_DAYS": "1.5",
            "SKILLSTREAM_CACHE_SEASON_GRACE_SECONDS": "0",
        }
    )
    assert (s.cache.history_length, s.cache.seasons_kept) == (50, 1)
    assert s.cache.inactive_seconds == 1.5 * 86_400.0
    assert s.cache.season_grace_seconds == 0.0


@pytest.mark.parametrize(("raw", "expected"), [("false", False), ("0", False), ("ON", True)])
def test_booleans(raw: str, expected: bool) -> None:
    env = {"SKILLSTREAM_RECOVERY_CONSISTENCY_CHECK": raw}
    assert Settings.from_env(env).worker.recovery_consistency_check is expected


def test_standby_copies_one_by_default_none_on_request_and_no_audit_by_default() -> None:
    assert Settings.from_env({}).worker.standby_replicas == 1
    assert Settings.from_env({"SKILLSTREAM_STANDBY_REPLICAS": "0"}).worker.standby_replicas == 0
    assert Settings.from_env({}).worker.audit_stores is False
    assert Settings.from_env({"SKILLSTREAM_AUDIT_STORES": "1"}).worker.audit_stores is True


def test_sasl_needs_a_username_and_a_password() -> None:
    with pytest.raises(SettingsError, match="needs KAFKA_SASL_USERNAME and KAFKA_SASL_PASSWORD"):
        Settings.from_env({"KAFKA_SECURITY_PROTOCOL": "SASL_PLAINTEXT"})


def test_sasl_ssl_options_for_every_kafka_client() -> None:
    env = {
        "KAFKA_SECURITY_PROTOCOL": "sasl_ssl",
        "KAFKA_SASL_MECHANISM": "scram-sha-512",
        "KAFKA_SASL_USERNAME": "rater",
        "KAFKA_SASL_PASSWORD": "hunter2",
    }
    settings = Settings.from_env(env)
    options = settings.kafka.security.aiokafka_options()
    assert options["security_protocol"] == "SASL_SSL"
    assert options["sasl_mechanism"] == "SCRAM-SHA-512"
    assert (options["sasl_plain_username"], options["sasl_plain_password"]) == ("rater", "hunter2")
    assert isinstance(options["ssl_context"], ssl.SSLContext)
    credentials = settings.kafka.security.faust_credentials()
    assert credentials.protocol.value == "SASL_SSL"
    assert credentials.mechanism.value == "SCRAM-SHA-512"
    # The password is in neither the settings' nor the credentials' repr.
    assert "hunter2" not in repr(settings)
    assert "hunter2" not in repr(credentials)


def test_tls_files_that_cannot_be_loaded_are_a_clear_error(tmp_path: Path) -> None:
    missing = tmp_path / "ca.pem"
    security = KafkaSecurity.from_env(
        {"KAFKA_SECURITY_PROTOCOL": "SSL", "KAFKA_SSL_CAFILE": str(missing)}
    )
    with pytest.raises(ValueError, match="KAFKA_SSL_"):
        security.aiokafka_options()


def test_the_redis_password_stays_out_of_repr_and_logs() -> None:
    settings = Settings.from_env({"REDIS_URL": "rediss://cache:s3cret@redis.internal:6380/0"})
    assert "s3cret" not in repr(settings)
    assert settings.redis.url_redacted == "rediss://cache:***@redis.internal:6380/0"
    assert redact_url("redis://:onlypass@h:1/0") == "redis://:***@h:1/0"
    assert redact_url("redis://h:6379/0") == "redis://h:6379/0"


def test_topics_cover_the_changelogs_compacted_and_durable_with_three_replicas() -> None:
    specs = {
        t.name: t
        for t in topic_specs(
            Settings.from_env({"SKILLSTREAM_REPLICATION_FACTOR": "3", "SKILLSTREAM_APP_ID": "r"})
        )
    }
    for table in TABLES:
        changelog = specs[f"r-{table}-changelog"]
        assert changelog.config["cleanup.policy"] == "compact"
        assert changelog.config["min.insync.replicas"] == "2"
    assert specs["match-finished"].config["retention.ms"] == str(7 * 86_400_000)
    # The audit log has one order: one partition; every other topic has the worker's count.
    assert specs["skillstream-audit"].partitions == 1
    assert specs["skillstream-audit"].config["retention.ms"] == "-1"
    assert {t.partitions for name, t in specs.items() if name != "skillstream-audit"} == {8}
    single = topic_specs(Settings())
    assert all("min.insync.replicas" not in t.config for t in single)


def test_the_app_tables_are_the_changelogs_topics_create_makes() -> None:
    from stream.pipeline.app import build_worker

    pipeline = build_worker(Settings(app_id="names", cache=CacheSettings(writer="off")))
    tables = [
        pipeline.match_table,
        pipeline.clock_table,
        pipeline.rating_table,
        pipeline.pending_table,
        pipeline.population_table,
    ]
    names = {t.changelog_topic.get_topic_name() for t in tables}
    assert names == {f"names-{table}-changelog" for table in TABLES}
    assert Settings(app_id="names").ratings_changelog_topic in names


def test_json_logs_carry_the_ids_of_the_event() -> None:
    record = logging.LogRecord("skillstream", logging.WARNING, "x", 1, "dead %s", ("m",), None)
    record.__dict__.update({"topic": "match-finished", "partition": 3, "offset": 17})
    line = orjson.loads(JsonFormatter().format(record))
    assert line["message"] == "dead m"
    assert line["level"] == "warning"
    assert (line["topic"], line["partition"], line["offset"]) == ("match-finished", 3, 17)
    assert "match_id" not in line
    assert logging_config("info", "text") is None
    assert logging_config("info", "json")["root"]["level"] == "INFO"  # type: ignore[index]


TOPIC_VARIABLES = (
    "SKILLSTREAM_TOPIC_MATCH_STARTED",
    "SKILLSTREAM_TOPIC_MATCH_FINISHED",
    "SKILLSTREAM_TOPIC_RATING_CHANGED",
    "SKILLSTREAM_TOPIC_DLQ",
    "SKILLSTREAM_TOPIC_AUDIT",
)


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("SKILLSTREAM_WEB_PORT", "0", "between 1 and 65535, got 0"),
        ("SKILLSTREAM_WEB_PORT", "99999", "between 1 and 65535, got 99999"),
        ("SKILLSTREAM_WEB_PORT", "http", "expected a port number, got 'http'"),
        ("SKILLSTREAM_WEB_BIND", "everywhere", "expected an IP address"),
        ("SKILLSTREAM_WEB_BIND", "127.0.0.256", "got '127.0.0.256'"),
        ("SKILLSTREAM_CONNECT_TIMEOUT_SECONDS", "0", "positive number"),
        ("REDIS_URL", "garbage", "'garbage' must start with redis://"),
        ("REDIS_URL", "http://cache:6379/0", "must start with redis://"),
        ("REDIS_URL", "redis://cache:99999/0", "not a usable URL"),
        ("REDIS_URL", "redis://cache:0/0", "between 1 and 65535, got 0"),
        ("REDIS_URL", "redis://cache:port/0", "not a usable URL"),
        ("REDIS_URL", "redis:///0", "names no host"),
        ("REDIS_URL", "redis://cache:6379/zero", "database must be a number"),
        ("REDIS_URL", "unix://", "names no socket path"),
        ("KAFKA_BOOTSTRAP_SERVERS", "", "no broker address given"),
        ("KAFKA_BOOTSTRAP_SERVERS", "broker:x", "expected a port number, got 'x'"),
        ("KAFKA_BOOTSTRAP_SERVERS", "broker:70000", "between 1 and 65535, got 70000"),
        ("KAFKA_BOOTSTRAP_SERVERS", "kafka://broker:9092", "no scheme"),
        ("KAFKA_BOOTSTRAP_SERVERS", "a:9092,,b:9092", "empty address"),
        ("KAFKA_BOOTSTRAP_SERVERS", "::1:9092", "IPv6 address in brackets"),
        ("KAFKA_BOOTSTRAP_SERVERS", ":9092", "no usable host name"),
        ("SKILLSTREAM_TOPIC_DLQ", "match-finished", "is also SKILLSTREAM_TOPIC_MATCH_FINISHED"),
        ("SKILLSTREAM_TOPIC_RATING_CHANGED", "match-started", "'match-started' is also"),
        ("SKILLSTREAM_TOPIC_DLQ", "skillstream-ratings-changelog", "ratings table's changelog"),
        ("SKILLSTREAM_TOPIC_MATCH_STARTED", "skillstream-match-commands", "match commands"),
    ],
)
def test_a_setting_that_cannot_work_is_refused_naming_it(
    name: str, value: str, message: str
) -> None:
    with pytest.raises(SettingsError, match=message) as caught:
        Settings.from_env({name: value})
    assert str(caught.value).startswith(name)


def test_the_password_of_a_refused_redis_url_is_not_shown() -> None:
    with pytest.raises(SettingsError) as caught:
        Settings.from_env({"REDIS_URL": "redis://u:hunter2@cache:6379/db"})
    assert "hunter2" not in str(caught.value)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("KAFKA_BOOTSTRAP_SERVERS", "a.example:9092, b.example:9093,c"),
        ("KAFKA_BOOTSTRAP_SERVERS", "[::1]:9092,[fe80::1]"),
        ("REDIS_URL", "rediss://user:secret@cache.internal:6380/2"),
        ("REDIS_URL", "redis://cache"),
        ("REDIS_URL", "unix:///run/redis.sock?db=1"),
        ("SKILLSTREAM_WEB_BIND", "::"),
        ("SKILLSTREAM_WEB_PORT", "65535"),
    ],
)
def test_usable_addresses_are_accepted(name: str, value: str) -> None:
    group, field = {
        "KAFKA_BOOTSTRAP_SERVERS": ("kafka", "bootstrap_servers"),
        "REDIS_URL": ("redis", "url"),
        "SKILLSTREAM_WEB_BIND": ("worker", "web_bind"),
        "SKILLSTREAM_WEB_PORT": ("worker", "web_port"),
    }[name]
    read = getattr(Settings.from_env({name: value}), group)
    assert str(getattr(read, field)) == value


def test_web_bind_defaults_to_every_interface_and_takes_loopback() -> None:
    assert Settings.from_env({}).worker.web_bind == "0.0.0.0"
    assert Settings.from_env({"SKILLSTREAM_WEB_BIND": "127.0.0.1"}).worker.web_bind == "127.0.0.1"


def test_the_redis_address_shown_in_errors() -> None:
    assert Settings(redis=RedisSettings("rediss://u:p@cache:6380/1")).redis.address == "cache:6380"
    assert Settings(redis=RedisSettings("redis://cache")).redis.address == "cache:6379"
    assert Settings(redis=RedisSettings("unix:///run/r.sock")).redis.address == "/run/r.sock"


def expect_read_exactly_when(valid: bool, env: dict[str, str], refusal: str) -> Settings | str:
    """``env`` read, when ``valid``; else refused with a message ``refusal`` matches, and the
    message."""
    if valid:
        return Settings.from_env(env)
    with pytest.raises(SettingsError, match=refusal) as caught:
        Settings.from_env(env)
    return str(caught.value)


@given(st.integers(min_value=-100_000, max_value=200_000))
def test_a_web_port_is_accepted_exactly_in_range(port: int) -> None:
    env = {"SKILLSTREAM_WEB_PORT": str(port)}
    read = expect_read_exactly_when(1 <= port <= 65535, env, f"SKILLSTREAM_WEB_PORT: .*got {port}")
    assert isinstance(read, str) or read.worker.web_port == port


@given(
    st.lists(
        st.tuples(
            st.from_regex(r"[a-z][a-z0-9.-]{0,20}", fullmatch=True),
            st.integers(min_value=-5, max_value=70_000),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_bootstrap_servers_are_refused_exactly_when_a_port_is_out_of_range(
    servers: list[tuple[str, int]],
) -> None:
    raw = ",".join(f"{host}:{port}" for host, port in servers)
    valid = all(1 <= port <= 65535 for _, port in servers)
    refusal = r"KAFKA_BOOTSTRAP_SERVERS .*between 1 and 65535"
    read = expect_read_exactly_when(valid, {"KAFKA_BOOTSTRAP_SERVERS": raw}, refusal)
    assert isinstance(read, str) or read.kafka.bootstrap_servers == raw


@given(
    st.fixed_dictionaries(
        {},
        optional={
            name: st.sampled_from(
                [
                    "match-started",
                    "match-finished",
                    "rating-changed",
                    "skillstream-dlq",
                    "skillstream-ratings-changelog",
                    "skillstream-player-commands",
                    "other",
                    "x",
                ]
            )
            for name in TOPIC_VARIABLES
        },
    )
)
def test_topic_names_are_refused_exactly_when_two_roles_share_one(env: dict[str, str]) -> None:
    defaults = Settings()
    names = [topic for topic, _ in defaults.named_topics()]
    for index, name in enumerate(TOPIC_VARIABLES):
        names[index] = env.get(name, names[index])
    message = expect_read_exactly_when(len(set(names)) == len(names), env, "needs its own name")
    if isinstance(message, Settings):
        return
    assert message.split(":", maxsplit=1)[0] in TOPIC_VARIABLES
    assert any(f"'{topic}'" in message for topic in names if names.count(topic) > 1)


def test_the_web_pages_listen_where_web_bind_says() -> None:
    from stream.pipeline.app import build_worker

    for bind in ("127.0.0.1", "0.0.0.0"):
        settings = Settings.from_env({"SKILLSTREAM_WEB_BIND": bind, "SKILLSTREAM_WEB_PORT": "6070"})
        conf = build_worker(settings).app.conf
        assert (conf.web_bind, conf.web_port, conf.web_enabled) == (bind, 6070, True)


@given(
    scheme=st.sampled_from(["redis", "rediss", "http", "tcp", ""]),
    host=st.sampled_from(["cache", "10.0.0.7", "[::1]", ""]),
    port=st.one_of(st.none(), st.integers(min_value=-1, max_value=70_000)),
    database=st.sampled_from(["", "/", "/0", "/15", "/x"]),
)
def test_a_redis_url_is_accepted_exactly_when_a_client_could_use_it(
    scheme: str, host: str, port: int | None, database: str
) -> None:
    url = f"{scheme}://{host}{'' if port is None else f':{port}'}{database}"
    usable = (
        scheme in ("redis", "rediss")
        and host != ""
        and (port is None or 1 <= port <= 65535)
        and database != "/x"
    )
    if usable:
        assert Settings.from_env({"REDIS_URL": url}).redis.url == url
    else:
        with pytest.raises(SettingsError, match=r"^REDIS_URL: "):
            Settings.from_env({"REDIS_URL": url})
