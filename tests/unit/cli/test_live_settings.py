"""The demo's worker settings (`skillstream live`): fewer, larger batches on the local broker,
unless the user's environment says otherwise."""

from __future__ import annotations

import pytest

from stream.cli.live import DEMO_WORKER_SETTINGS, demo_settings
from stream.config.settings import Settings
from stream.simulation.gamefleet import FleetConfig


def test_the_demo_settings_replace_the_local_stacks_defaults() -> None:
    env = {"SKILLSTREAM_PARTITIONS": "4", "KAFKA_BOOTSTRAP_SERVERS": "127.0.0.1:1"}
    got = demo_settings(env, {})
    assert got["SKILLSTREAM_PARTITIONS"] == "1"
    assert got["SKILLSTREAM_BATCH_WAIT_MS"] == "50"
    assert got["KAFKA_BOOTSTRAP_SERVERS"] == "127.0.0.1:1"
    assert env["SKILLSTREAM_PARTITIONS"] == "4"  # the caller's mapping is left alone


def test_a_variable_the_user_set_wins() -> None:
    user = {"SKILLSTREAM_PARTITIONS": "4", "SKILLSTREAM_FETCH_MAX_WAIT_MS": "20"}
    got = demo_settings(dict(user), user)
    assert got["SKILLSTREAM_PARTITIONS"] == "4"
    assert got["SKILLSTREAM_FETCH_MAX_WAIT_MS"] == "20"
    assert got["SKILLSTREAM_BATCH_WAIT_MS"] == "50"


def test_the_worker_accepts_every_demo_setting() -> None:
    settings = Settings.from_env(DEMO_WORKER_SETTINGS)
    assert settings.partitions == 1
    assert settings.worker.batch_wait_seconds == pytest.approx(0.05)
    assert settings.kafka.fetch_max_wait_seconds == pytest.approx(0.1)


def test_the_fleet_refuses_a_negative_linger() -> None:
    with pytest.raises(ValueError, match="linger_ms"):
        FleetConfig(linger_ms=-1)
