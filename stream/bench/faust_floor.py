"""The Faust floor: what Faust alone costs to hand a worker both events of every match.

One agent reads match-started and match-finished on the worker's partitions, in batches as the
worker's agents do (``take_events`` with the worker's batch size and wait, the worker's Faust
settings and patches), and does nothing with them: no table, no send, no decoding. No Faust
app that reads both events of a match can rate matches faster than this one reads them, so
`skillstream bench pipeline` runs it after the flat-out run to show where the worker stands
between the raw loop and Faust's own floor (docs/benchmarks.md, "Faust's floor").

It runs as the worker does (uvloop, the worker's garbage-collector settings) and logs one line,
:data:`REPORT` and its figures, once it has read the number of events :data:`EVENTS_VARIABLE`
names: how many, and the wall times it got the first and the last of them. The bench publishes
the events before it starts the app, so that the load generator, which is slower than this app,
does not set the pace. Environment: the worker's (KAFKA_BOOTSTRAP_SERVERS and SKILLSTREAM_*),
plus :data:`EVENTS_VARIABLE`. Failure: a broker error stops the process (the bench reports it
with the process's output). Replay: it keeps no state; a restarted floor app reads from its
committed offsets and counts again.
"""

from __future__ import annotations

import asyncio
import dataclasses
import gc
import logging
import os
import re
import time
from collections.abc import Callable
from typing import Any

import faust
import uvloop

from stream.config.settings import Settings
from stream.local.workers import WorkerError, WorkerProcess
from stream.pipeline import topology, workarounds

APP_ID = "faust-floor"
EVENTS_VARIABLE = "SKILLSTREAM_FLOOR_EVENTS"
# How the bench runs it: ``python -m stream.bench.faust_floor``.
FLOOR_COMMAND = ("-m", "stream.bench.faust_floor")
REPORT = "faust floor:"
_REPORT_LINE = re.compile(
    re.escape(REPORT) + r" (\d+) events, the first at ([0-9.]+), the last at ([0-9.]+)"
)

log = logging.getLogger("skillstream.floor")


@dataclasses.dataclass(frozen=True)
class FloorRun:
    """What the floor app reported: the events it read, and the wall times (epoch seconds) it
    got the first and the last of them."""

    events: int
    first_at: float
    last_at: float

    @property
    def seconds(self) -> float:
        return self.last_at - self.first_at


def report_line(events: int, first_at: float, last_at: float) -> str:
    """The line the app logs when it is done."""
    return f"{REPORT} {events} events, the first at {first_at:.6f}, the last at {last_at:.6f}"


def parse_report(output: str) -> FloorRun | None:
    """The app's report, from its log; None until it has logged one."""
    found = _REPORT_LINE.search(output)
    if found is None:
        return None
    return FloorRun(int(found.group(1)), float(found.group(2)), float(found.group(3)))


class EventCount:
    """Counts the events the agent is handed; the report line once ``expected`` came."""

    def __init__(self, expected: int, clock: Callable[[], float] = time.time) -> None:
        self.expected = expected
        self.clock = clock
        self.seen = 0
        self.first_at: float | None = None
        self.done = False

    def add(self, events: int) -> str | None:
        """Count a batch; the report line the first time the count reaches ``expected``."""
        now = self.clock()
        if self.first_at is None:
            self.first_at = now
        self.seen += events
        if self.done or self.seen < self.expected:
            return None
        self.done = True
        return report_line(self.seen, self.first_at, now)


def await_report(app: WorkerProcess, timeout: float = 300.0, poll: float = 0.1) -> FloorRun:
    """Wait until the floor app ``app`` has logged its report; WorkerError if it exits first
    or ``timeout`` passes."""
    deadline = time.monotonic() + timeout
    while True:
        found = parse_report(app.output())
        if found is not None:
            return found
        if not app.running:
            raise WorkerError(f"{app.name} exited before its report:\n{app.output()[-4000:]}")
        if time.monotonic() > deadline:
            raise WorkerError(f"{app.name}: no report in {timeout:g} s:\n{app.output()[-4000:]}")
        time.sleep(poll)


def make_app(settings: Settings, expected: int) -> faust.App:
    """The floor app over the worker's input topics, with the worker's Faust settings."""
    s = dataclasses.replace(settings, app_id=APP_ID)
    workarounds.install(s)
    app = topology.faust_app(s)
    both = app.topic(
        s.topics.match_started,
        s.topics.match_finished,
        key_type=bytes,
        value_type=bytes,
        key_serializer="raw",
        value_serializer="raw",
        partitions=s.partitions,
    )
    counter = EventCount(expected)

    # Any: Faust's StreamT does not declare take_events (the worker's agents type it the same).
    async def read(stream: Any) -> None:
        async for events in stream.take_events(s.worker.batch_size, s.worker.batch_wait_seconds):
            line = counter.add(len(events))
            if line is not None:
                # A warning: it reaches the log whatever the level.
                log.warning(line)

    app.agent(both, name="faust-floor.read", concurrency=1)(read)
    return app


def main() -> None:
    # The worker's runtime (stream/cli/worker.py): uvloop, and the collector tuned the same way.
    asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    asyncio.set_event_loop(asyncio.new_event_loop())
    app = make_app(Settings.from_env(os.environ), int(os.environ[EVENTS_VARIABLE]))
    gc.collect()
    gc.freeze()
    gc.set_threshold(20_000, 20, 20)
    # Info: the bench waits for Faust's "Worker ready" line.
    faust.Worker(app, loglevel="info", quiet=True).execute_from_commandline()


if __name__ == "__main__":
    main()
