"""The Faust floor: what Faust alone costs to hand a worker both events of every match.

One agent reads match-started and match-finished on the worker's partitions, in batches as the
worker's agents do (``take_events`` with the worker's batch size and wait, the worker's Faust
settings and patches), and does nothing with them: no table, no send, no decoding. No Faust
app that reads both events of a match can rate matches faster than this one reads them, so
`skillstream bench pipeline` runs it after the flat-out run to show where the worker stands
between the raw loop and Faust's own floor (docs/benchmarks.md, "Faust's floor").

It logs one line, :data:`REPORT` and its figures, once it has seen the number of events
:data:`EVENTS_VARIABLE` names, timed from the first event it saw. Environment: the worker's
(KAFKA_BOOTSTRAP_SERVERS and SKILLSTREAM_*), plus :data:`EVENTS_VARIABLE`. Failure: a broker
error stops the process (the bench reports it with the process's output). Replay: it keeps no
state; a restarted floor app reads from its committed offsets and counts again.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from stream.config.settings import Settings
from stream.local.workers import WorkerError, WorkerProcess
from stream.pipeline import topology, workarounds

APP_ID = "faust-floor"
EVENTS_VARIABLE = "SKILLSTREAM_FLOOR_EVENTS"
# How the bench runs it: ``python -m stream.bench.faust_floor``.
FLOOR_COMMAND = ("-m", "stream.bench.faust_floor")
REPORT = "faust floor:"
_REPORT_LINE = re.compile(re.escape(REPORT) + r" (\d+) events in ([0-9.]+) s")

log = logging.getLogger("skillstream.floor")


@dataclass(frozen=True)
class FloorRun:
    """What the floor app reported: the events it read, and the seconds from its first to its
    last."""

    events: int
    seconds: float

    @property
    def events_per_second(self) -> float:
        return self.events / max(self.seconds, 1e-9)


def report_line(events: int, seconds: float) -> str:
    """The line the app logs when it is done."""
    return f"{REPORT} {events} events in {seconds:.4f} s"


def parse_report(output: str) -> FloorRun | None:
    """The app's report, from its log; None until it has logged one."""
    found = _REPORT_LINE.search(output)
    if found is None:
        return None
    return FloorRun(int(found.group(1)), float(found.group(2)))


class EventCount:
    """Counts the events the agent is handed and logs the report once ``expected`` came."""

    def __init__(self, expected: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.expected = expected
        self.clock = clock
        self.seen = 0
        self.first: float | None = None
        self.done = False

    def add(self, events: int) -> str | None:
        """Count a batch; the report line the first time the count reaches ``expected``."""
        if self.first is None:
            self.first = self.clock()
        self.seen += events
        if self.done or self.seen < self.expected:
            return None
        self.done = True
        return report_line(self.seen, self.clock() - self.first)


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


def make_app(settings: Settings, expected: int) -> Any:
    """The floor app over the worker's input topics, with the worker's Faust settings."""
    s = dataclasses.replace(settings, app_id=APP_ID)
    workarounds.install(s)
    app = topology.faust_app(s)
    both = app.topic(
        s.match_started_topic,
        s.match_finished_topic,
        key_type=bytes,
        value_type=bytes,
        key_serializer="raw",
        value_serializer="raw",
        partitions=s.partitions,
    )
    counter = EventCount(expected)

    async def read(stream: Any) -> None:
        async for events in stream.take_events(s.batch_size, s.batch_wait_seconds):
            line = counter.add(len(events))
            if line is not None:
                log.warning(line)

    app.agent(both, name="faust-floor.read", concurrency=1)(read)
    return app


def main() -> None:
    settings = Settings.from_env(os.environ)
    app = make_app(settings, int(os.environ[EVENTS_VARIABLE]))
    # Info: the bench waits for Faust's "Worker ready" line.
    sys.argv = [sys.argv[0], "worker", "--loglevel", "info", "--without-web"]
    app.main()


if __name__ == "__main__":
    main()
