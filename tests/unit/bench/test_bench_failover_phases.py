"""stream/bench/failover.py's reading of the survivor's log: each phase of a fail-over is the
first of its line after the one before, after the kill."""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta

import orjson
import pytest

from stream.bench.failover import Phases, phases
from stream.pipeline.app import REVOKED

KILLED = time.mktime(time.strptime("2026-12-06 07:03:45", "%Y-%m-%d %H:%M:%S")) + 0.5


def line(stamp: str, text: str) -> str:
    return f"[2026-12-06 {stamp}] [4383] [INFO] {text} "


def test_each_phase_is_dated_from_the_kill() -> None:
    log = "\n".join(
        [
            line("07:03:40,000", f"{REVOKED}: 4 partition(s)"),  # an earlier rebalance
            line("07:03:40,100", "Executing _on_partitions_assigned"),
            line("07:03:41,000", "[^---Recovery]: Worker ready"),
            line("07:03:51,600", "counts: {}"),
            line("07:03:51,750", f"{REVOKED}: 2 partition(s)"),
            line("07:03:54,723", "Executing _on_partitions_assigned"),
            line("07:03:54,937", "[^---Recovery]: Worker ready"),
            line("07:03:58,000", f"{REVOKED}: 4 partition(s)"),  # a later one
        ]
    )
    found = phases(log, KILLED)
    assert (found.noticed, found.assigned, found.ready) == pytest.approx((6.25, 9.223, 9.437))


def test_a_phase_counts_only_after_the_one_before() -> None:
    log = "\n".join(
        [
            line("07:03:46,000", "[^---Recovery]: Worker ready"),  # before the rebalance
            line("07:03:52,000", f"{REVOKED}: 2 partition(s)"),
        ]
    )
    found = phases(log, KILLED)
    assert found.noticed == pytest.approx(6.5)
    assert (found.assigned, found.ready) == (None, None)


def test_json_lines_are_dated_by_their_utc_time() -> None:
    def entry(stamp: str, text: str) -> str:
        utc = datetime.fromtimestamp(KILLED, UTC) + timedelta(seconds=float(stamp))
        return orjson.dumps(
            {"ts": utc.isoformat(timespec="milliseconds"), "message": text}
        ).decode()

    log = "\n".join(
        [
            entry("-3", f"{REVOKED}: 4 partition(s)"),
            entry("6.25", f"{REVOKED}: 2 partition(s)"),
            entry("9.5", "Executing _on_partitions_assigned"),
            entry("9.75", "[^---Recovery]: Worker ready"),
        ]
    )
    found = phases(log, KILLED)
    assert (found.noticed, found.assigned, found.ready) == pytest.approx((6.25, 9.5, 9.75))


def test_a_log_without_the_lines_or_their_times_says_nothing() -> None:
    log = '{"message": "Worker ready"}\n{"ts": "not a time", "message": "Worker ready"}\n'
    assert phases(log, KILLED) == Phases(None, None, None)
