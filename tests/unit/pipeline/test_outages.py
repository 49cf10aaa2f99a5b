"""The worker's outage watch: a probe of a broker that does not answer starts one outage
(the log filter it drives: workarounds/test_client_logs.py)."""

from __future__ import annotations

import logging

import pytest
from failing_servers import closed_port

from stream.config.settings import KafkaSettings, Settings
from stream.pipeline.kafkawatch import KafkaWatch


async def test_a_probe_of_a_closed_port_starts_an_outage_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    port = closed_port()
    watch = KafkaWatch(
        Settings(kafka=KafkaSettings(f"127.0.0.1:{port}"), connect_timeout_seconds=2)
    )
    caplog.set_level(logging.INFO, logger="skillstream.worker")
    await watch.probe()
    await watch.probe()
    assert watch.down
    ours = [r.getMessage() for r in caplog.records if r.name == "skillstream.worker"]
    assert ours == [
        f"Kafka at 127.0.0.1:{port} (KAFKA_BOOTSTRAP_SERVERS) stopped answering (no broker "
        "accepted a connection); retrying, with the Kafka clients' errors held back until it "
        "answers"
    ]
