"""The simulated fleet's producer styles on the local broker, read back with librdkafka: a
match published once it is over (both events at once, the start dated the match's length
earlier), and a fleet that publishes only the finish, with the line-up."""

from __future__ import annotations

import asyncio
import time

import orjson
import pytest
from librdkafka_clients import Reader
from pipeline_env import fleet_to_own_topics

from stream.events import decode_match_finished, decode_match_started
from stream.local.stack import LocalStack
from stream.simulation import SimulationConfig, simulate
from stream.simulation.gamefleet import FleetConfig

MATCHES = 6
SECONDS = 90.0


def publish(
    stack: LocalStack, prefix: str, *, at_end: bool, finish_only: bool = False
) -> tuple[list[bytes], list[bytes]]:
    """``MATCHES`` matches published in a style, to topics of their own: (starts, finishes)."""
    started, finished = f"{prefix}-started", f"{prefix}-finished"
    matches = list(simulate(SimulationConfig(seed=3, matches=MATCHES, players=20)))
    config = FleetConfig(rate=0, match_seconds=SECONDS, at_end=at_end, finish_only=finish_only)
    asyncio.run(fleet_to_own_topics(stack, matches, (started, finished), 1, config))
    finishes = Reader(stack.bootstrap_servers, finished, 1)
    starts = Reader(stack.bootstrap_servers, started, 1)
    try:
        done = [m.value() for m in finishes.until(MATCHES, timeout=30)]
        # Whatever starts there are were produced before the finishes: a short wait finds them.
        begun = [m.value() for m in starts.read_until(lambda r: len(r) >= MATCHES, timeout=3)]
    finally:
        finishes.close()
        starts.close()
    return begun, done


def test_a_match_published_at_the_end_goes_out_at_once_with_its_start_dated_back(
    stack: LocalStack,
) -> None:
    before = time.time()
    begun, done = publish(stack, "at-end", at_end=True)
    assert (len(begun), len(done)) == (MATCHES, MATCHES)
    starts = {e.match_id: e for e in map(decode_match_started, begun)}
    for finish in map(decode_match_finished, done):
        # Published now, not SECONDS from now.
        assert before <= finish.finished_at <= time.time()
        assert finish.finished_at - starts[finish.match_id].started_at == pytest.approx(SECONDS)


def test_a_fleet_that_publishes_only_the_finish_sends_no_start_and_the_line_up(
    stack: LocalStack,
) -> None:
    begun, done = publish(stack, "finish-only", at_end=True, finish_only=True)
    assert (len(begun), len(done)) == (0, MATCHES)
    for value in done:
        assert decode_match_finished(value).teams
        assert "started_at" not in orjson.loads(value)


def test_a_fleet_that_publishes_only_the_finish_cannot_omit_the_line_up() -> None:
    with pytest.raises(ValueError, match="omit_teams_rate"):
        FleetConfig(finish_only=True, omit_teams_rate=0.1)
