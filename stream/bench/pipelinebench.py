"""`skillstream bench pipeline`, run by run: each run on a fresh local stack (Tansu and one
worker), its figures printed as it ends, and the targets' lines from all of them at the end.

The runs (docs/benchmarks.md): the worker flat out on instant matches, then a raw aiokafka loop
on the same broker (the ratio of the two is the figure that survives a change of machine);
the naive Faust app and the Faust floor as yardsticks; a backlog drained by a worker started
after it was published; and for each paced rate, every producer style (the start at the start,
both at the end, the finish only, instant matches).

Failure: a stack, worker or yardstick app that does not start raises (the command says why in
one line); a run's worker is stopped and its stack taken down whatever happens.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from typing import Protocol

from aiokafka import TopicPartition

from stream.bench.faust_floor import EVENTS_VARIABLE, FLOOR_COMMAND, await_report
from stream.bench.naive_faust import NAIVE_COMMAND, NAIVE_TOPICS
from stream.bench.pipeline import (
    LATE_KINDS,
    CpuClock,
    PipelineRun,
    last_rating_at,
    late_counts,
    publish_backlog,
    publish_flat_out,
    rating_offsets,
    run_load,
)
from stream.bench.rawloop import create_topics, run_raw_loop
from stream.bench.recordcounts import (
    P99_RATE,
    by_class,
    control_line,
    records_lines,
    style_lines,
    target_lines,
)
from stream.bench.topics import Log, count_logs, per_topic
from stream.config.settings import Settings
from stream.local.stack import LOCAL_PARTITIONS, LocalStack, environment, free_port
from stream.local.workers import WorkerError, WorkerProcess
from stream.simulation.partitioners import PARTITIONINGS

__all__ = ["Bar", "PipelineBench"]

# An idle worker's count starts this long after it is ready: its first rounds of reports,
# sent as it takes its partitions over, are not what it writes while idle.
IDLE_SETTLE_SECONDS = 5.0


class Updated(Protocol):
    def update(self, done: int) -> None: ...


# A progress bar for ``total`` ratings under a label (the command's: stream/cli/progress.py).
Bar = Callable[[int, str], AbstractContextManager[Updated]]


@dataclass(frozen=True)
class Measured:
    rate: float
    match_seconds: float
    at_end: bool
    run: PipelineRun
    worker_cpu: float
    finish_only: bool = False

    @property
    def style(self) -> str:
        """The producer style, as the targets name it."""
        if self.finish_only:
            return "finish only"
        if self.at_end:
            return "both at the end"
        return "instant" if self.match_seconds == 0 else "start at the start"


@dataclass
class PipelineBench:
    """One ``bench pipeline`` command: its options and what its runs measured."""

    args: argparse.Namespace
    bar: Bar
    measured: list[Measured] = field(default_factory=list)
    raw_events_per_second: list[float] = field(default_factory=list)
    naive_rates: list[float] = field(default_factory=list)
    floor_rates: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.partition_counts: list[int] = self.args.partitions or [LOCAL_PARTITIONS]
        self.partitions = self.partition_counts[0]
        self.partitioning = PARTITIONINGS[self.args.partitioner]

    def run(self) -> None:
        """Every run the options ask for, at each partition count in turn, then the targets'
        lines (from the first partition count's runs)."""
        for partitions in self.partition_counts:
            self.partitions = partitions
            self.run_all()
        for line in self.targets():
            print(line)

    def run_all(self) -> None:
        """Every run the options ask for, in order, at ``self.partitions``."""
        args = self.args
        self.say_what_is_measured()
        if args.idle_seconds > 0:
            self.idle(args.idle_seconds)
        flat_out = args.pipeline_matches > 0
        if flat_out:
            self.measure(
                "flat out, instant matches",
                args.pipeline_matches,
                0.0,
                0.0,
                then_raw=args.raw_events > 0,
            )
        if flat_out and args.naive_faust:
            self.naive(args.pipeline_matches)
        if flat_out and args.faust_floor:
            self.floor(args.pipeline_matches)
        if args.backlog > 0:
            self.drain(args.backlog)
        for rate in args.rates:
            self.producer_styles(rate, int(rate * args.seconds))
        if args.raw_events > 0 and not flat_out:
            # No flat-out run to share a broker with: the loop gets a fresh one, as every run
            # does.
            with LocalStack() as stack:
                self.raw_loop(stack.bootstrap_servers, "a fresh broker")

    def say_what_is_measured(self) -> None:
        seconds = self.args.match_seconds
        print(
            f"each run on a fresh local stack: Tansu + one worker, {self.partitions} partitions,"
            f" {os.cpu_count()} cores shared with the load generator"
        )
        print(
            "latency: match-finished produced -> rating-changed produced; "
            f"{seconds:g} s matches produce the start {seconds:g} s before the"
            " finish; 'at the end': both produced at the finish, the start dated"
            f" {seconds:g} s earlier; 'finish only': no start, the finish carries the"
            " line-up (it waits for event time to pass it: no start can come); instant matches"
            " start and finish at the moment both are produced (the start waits for event time"
            " to pass it: the lateness and two more hops on the critical path)"
        )
        print(
            f"load generator's producer, --partitioner {self.partitioning.name}:"
            f" {self.partitioning.description}"
        )
        print(
            "records per match: what each topic gained from before the measured run to after"
            " the worker stopped (the warm-up's records left out), read from the log, per match"
            " published; control: the event-time protocol's commands (docs/event-time.md) per"
            " second of the same span"
        )

    def producer_styles(self, rate: float, matches: int) -> None:
        """Every producer style at ``rate`` matches a second."""
        seconds = self.args.match_seconds
        if seconds > 0:
            self.measure(f"{rate:,.0f}/s, {seconds:g} s matches", matches, rate, seconds)
            self.measure(
                f"{rate:,.0f}/s, {seconds:g} s, at the end", matches, rate, seconds, at_end=True
            )
            self.measure(
                f"{rate:,.0f}/s, finish only",
                matches,
                rate,
                seconds,
                at_end=True,
                finish_only=True,
            )
        self.measure(f"{rate:,.0f}/s, instant matches", matches, rate, 0.0)

    # --- the runs -----------------------------------------------------------------------------

    def measure(
        self,
        label: str,
        matches: int,
        rate: float,
        match_seconds: float,
        *,
        at_end: bool = False,
        finish_only: bool = False,
        then_raw: bool = False,
    ) -> None:
        """The worker under the load generator: throughput, latency, CPU and records."""
        # A fresh broker per run: Tansu's in-memory engine has no retention, and the cost of
        # its fetches grows with what it holds, which would charge one run for the last.
        with LocalStack() as stack:
            env = self.worker_env(stack)
            web_port = free_port()
            env["SKILLSTREAM_WEB_PORT"] = str(web_port)
            servers = stack.bootstrap_servers
            with self.started(WorkerProcess(env)) as worker:
                self.warm_up(servers)
                logs_before = asyncio.run(count_logs(servers))
                span = time.monotonic()
                cpu = CpuClock([*stack.pids(), worker.pid or 0])
                with self.bar(2 * matches, label) as bar:
                    run = asyncio.run(
                        run_load(
                            servers,
                            matches,
                            rate,
                            seed=2,
                            match_seconds=match_seconds,
                            at_end=at_end,
                            finish_only=finish_only,
                            progress=lambda done, _total: bar.update(done),
                            partitioning=self.partitioning,
                            alive=lambda: worker.running,
                        )
                    )
                used = cpu.used()
                _require_every_rating(label, run.ratings, 2 * run.matches, worker)
                late = late_counts(web_port)
            broker, worker_cpu = used[0], used[-1]
            print(
                f"  {label:<30} {run.matches:>7,} matches in {run.rating_seconds:6.2f} s"
                f" = {run.matches_per_second:>7,.0f} matches/s;"
                f" latency p50 {run.median_ms:6.1f} ms, p99 {run.percentile(0.99):7.1f} ms,"
                f" max {max(run.latencies_ms, default=float('nan')):7.1f} ms;"
                f" CPU s broker {broker:5.1f}, worker {worker_cpu:5.1f}"
                f" ({1000 * worker_cpu / max(run.matches, 1):.2f} ms per match);"
                f" late starts, finishes, joins {_late_line(late)}"
            )
            # After the worker stopped: whatever it flushed on the way out counts too.
            self.print_records(
                servers,
                Settings.from_env(env),
                logs_before,
                run.matches,
                seconds=time.monotonic() - span,
            )
            self.measured.append(
                Measured(rate, match_seconds, at_end, run, worker_cpu, finish_only)
            )
            if then_raw:
                # The same broker process, its worker stopped; the loop's topics are new, and
                # Tansu's fetch cost grows per partition with the batches that partition holds,
                # so what the run left elsewhere does not slow the loop's fetches.
                self.raw_loop(servers, "same broker, after")

    def drain(self, matches: int) -> None:
        """The worker stopped (gracefully) after a warm-up, the backlog published, and a new
        worker started: from its "Worker ready" to the last rating."""
        with LocalStack() as stack:
            env = self.worker_env(stack)
            servers = stack.bootstrap_servers
            with self.started(WorkerProcess(env, "first-worker")):
                self.warm_up(servers)
            offsets = asyncio.run(rating_offsets(servers))
            logs_before = asyncio.run(count_logs(servers))
            published = time.monotonic()
            players = self.args.backlog_players or max(2, matches // 10)
            backlog = publish_backlog(
                servers,
                matches,
                seed=2,
                players=players,
                partitioning=self.partitioning,
                late=self.args.backlog_late,
            )
            asyncio.run(backlog)
            published = time.monotonic() - published
            launched = time.time()
            with self.started(WorkerProcess(env, "new-worker")) as worker:
                ready = time.time()
                cpu = CpuClock([worker.pid or 0])
                with self.bar(2 * matches, "backlog") as bar:
                    got, last = asyncio.run(
                        last_rating_at(
                            servers,
                            offsets,
                            2 * matches,
                            progress=lambda done, _total: bar.update(done),
                            alive=lambda: worker.running,
                        )
                    )
                (worker_cpu,) = cpu.used()
                _require_every_rating("backlog", got, 2 * matches, worker)
            seconds = max(last - ready, 1e-9)
            print(
                f"  backlog of {matches:,} matches among {players:,} players, published in"
                f" {published:5.1f} s with no worker; the new worker ready after"
                f" {ready - launched:4.1f} s, then {got:,} rating-changed records"
                f" ({2 * matches:,} expected; a redelivery repeats one) in"
                f" {seconds:6.2f} s = {matches / seconds:>7,.0f} matches/s; CPU s worker"
                f" {worker_cpu:5.1f} ({1000 * worker_cpu / matches:.2f} ms per match)"
            )
            self.print_records(servers, Settings.from_env(env), logs_before, matches)

    def naive(self, matches: int) -> None:
        """The naive Faust app (stream/bench/naive_faust.py) on a fresh stack, one partition,
        the same load generator flat out: the do-it-yourself yardstick of issue 16."""
        with LocalStack() as stack:
            env = environment(stack)
            servers = stack.bootstrap_servers
            asyncio.run(create_topics(servers, list(NAIVE_TOPICS), 1))
            with self.started(WorkerProcess(env, "naive-faust", NAIVE_COMMAND)) as app:
                self.warm_up(servers)
                cpu = CpuClock([*stack.pids(), app.pid or 0])
                with self.bar(2 * matches, "naive Faust app") as bar:
                    run = asyncio.run(
                        run_load(
                            servers,
                            matches,
                            0.0,
                            seed=2,
                            progress=lambda done, _total: bar.update(done),
                            partitioning=self.partitioning,
                            alive=lambda: app.running,
                        )
                    )
                used = cpu.used()
                _require_every_rating("naive Faust app", run.ratings, 2 * run.matches, app)
        self.naive_rates.append(run.matches_per_second)
        print(
            f"  {'naive Faust app, 1 partition':<30} {run.matches:>7,} matches in"
            f" {run.rating_seconds:6.2f} s = {run.matches_per_second:>7,.0f} matches/s;"
            f" latency p50 {run.median_ms:6.1f} ms, p99 {run.percentile(0.99):7.1f} ms;"
            f" CPU s broker {used[0]:5.1f}, app {used[-1]:5.1f}"
            f" ({1000 * used[-1] / max(run.matches, 1):.2f} ms per match)"
        )

    def floor(self, matches: int) -> None:
        """The Faust floor (stream/bench/faust_floor.py) on a fresh stack, the worker's
        partitions and settings, the same matches published flat out: the fastest any Faust
        app reading both events of a match could go."""
        with LocalStack() as stack:
            env = self.worker_env(stack)
            env[EVENTS_VARIABLE] = str(2 * matches)
            servers = stack.bootstrap_servers
            s = Settings.from_env(env)
            inputs = [s.topics.match_started, s.topics.match_finished]
            asyncio.run(create_topics(servers, inputs, self.partitions))
            # Published first: the load generator is slower than the app, and would set the
            # pace.
            asyncio.run(publish_flat_out(servers, matches, seed=2, partitioning=self.partitioning))
            with self.started(WorkerProcess(env, "faust-floor", FLOOR_COMMAND)) as app:
                cpu = CpuClock([*stack.pids(), app.pid or 0])
                run = await_report(app)
                used = cpu.used()
        # From the first event the app was handed to the last.
        seconds = max(run.seconds, 1e-9)
        per_second = matches / seconds
        self.floor_rates.append(per_second)
        print(
            f"  {f'Faust floor, {self.partitions} partitions':<30} {run.events:>7,} events in"
            f" {seconds:6.2f} s = {per_second:>7,.0f} matches/s (both events read, nothing"
            f" done); CPU s broker {used[0]:5.1f}, app {used[-1]:5.1f}"
            f" ({1000 * used[-1] / max(matches, 1):.2f} ms per match)"
        )

    def raw_loop(self, servers: str, where: str) -> None:
        """A plain aiokafka consume-and-produce loop: the broker's own pace here."""
        raw = asyncio.run(run_raw_loop(servers, self.args.raw_events, partitions=self.partitions))
        self.raw_events_per_second.append(raw.events_per_second)
        print(
            f"  {'raw loop (' + where + ')':<30} {raw.events:>7,} events in"
            f" {raw.seconds:6.2f} s = {raw.events_per_second:>7,.0f} events/s"
            f" ({raw.outputs:,} records produced, {raw.keys:,} keys)"
        )

    # --- what the runs share ------------------------------------------------------------------

    def worker_env(self, stack: LocalStack) -> dict[str, str]:
        """A worker's environment on ``stack``: the bench's partitions, the stack's session."""
        env = environment(stack)
        env["SKILLSTREAM_PARTITIONS"] = str(self.partitions)
        return env

    def warm_up(self, servers: str) -> None:
        """200 matches through a started worker, with the producer of the measured runs."""
        asyncio.run(run_load(servers, 200, 200.0, seed=1, partitioning=self.partitioning))

    @staticmethod
    @contextmanager
    def started(process: WorkerProcess) -> Iterator[WorkerProcess]:
        """``process`` started, and stopped whatever happens."""
        try:
            process.start()
            yield process
        finally:
            process.cleanup()

    def print_records(
        self,
        servers: str,
        settings: Settings,
        before: dict[TopicPartition, Log],
        matches: int,
        *,
        seconds: float | None = None,
    ) -> None:
        """What the topics gained since ``before``, per match; with ``seconds`` (the span
        counted), the control commands per second too."""
        after = asyncio.run(count_logs(servers, before, kinds_of=_command_topics(settings)))
        counts = by_class(per_topic(after), settings)
        for line in records_lines(counts, matches):
            print(line)
        if seconds is not None:
            print(control_line(counts.classes["commands"], seconds, self.partitions))

    def idle(self, seconds: float) -> None:
        """A worker with no input at all, then the same worker after a warm-up once its matches
        are rated: what the event-time protocol writes while nothing is pending, each counted
        over ``seconds`` from ``IDLE_SETTLE_SECONDS`` after the worker was ready or the
        warm-up ended."""
        with LocalStack() as stack:
            env = self.worker_env(stack)
            with self.started(WorkerProcess(env)) as worker:
                self.idle_window(stack, env, worker, "idle, no input yet", seconds)
                self.warm_up(stack.bootstrap_servers)
                self.idle_window(stack, env, worker, "idle, after 200 matches", seconds)

    def idle_window(
        self,
        stack: LocalStack,
        env: dict[str, str],
        worker: WorkerProcess,
        label: str,
        seconds: float,
    ) -> None:
        """One idle window of ``seconds``, ``IDLE_SETTLE_SECONDS`` from now: its two lines."""
        servers = stack.bootstrap_servers
        time.sleep(IDLE_SETTLE_SECONDS)
        logs_before = asyncio.run(count_logs(servers))
        span = time.monotonic()
        cpu = CpuClock([worker.pid or 0])
        time.sleep(seconds)
        settings = Settings.from_env(env)
        logs_after = asyncio.run(
            count_logs(servers, logs_before, kinds_of=_command_topics(settings))
        )
        (worker_cpu,) = cpu.used()
        span = time.monotonic() - span
        commands = by_class(per_topic(logs_after), settings).classes["commands"]
        print(
            f"  {f'{label}, {self.partitions} partitions':<42} {span:5.1f} s:"
            f" {commands.records / span:>9,.1f} command records/s;"
            f" worker CPU {worker_cpu / span:.3f} s per s"
        )
        print(control_line(commands, span, self.partitions))

    def targets(self) -> list[str]:
        """The targets' lines (stream/bench/recordcounts.py) from the runs measured."""
        raw = self.raw_events_per_second[0] if self.raw_events_per_second else None
        fastest = next((m for m in self.measured if m.rate == 0.0), None)
        ratio = fastest.run.matches_per_second / raw if fastest is not None and raw else None
        cpu_per_match = 1000 * fastest.worker_cpu / max(fastest.run.matches, 1) if fastest else None
        paced = next(
            (
                m
                for m in self.measured
                if m.rate == P99_RATE and m.match_seconds > 0 and not m.at_end
            ),
            None,
        )
        p99_label = f"{paced.match_seconds:g} s matches" if paced else "matches that last"
        naive_ratio = self.naive_rates[0] / raw if self.naive_rates and raw else None
        floor_ratio = self.floor_rates[0] / raw if self.floor_rates and raw else None
        start_p99 = paced.run.percentile(0.99) if paced else None
        # Each other style's first run at that rate (the first partition count's).
        styles: dict[str, float] = {}
        for m in self.measured:
            if m.rate == P99_RATE and m is not paced and m.style != "start at the start":
                styles.setdefault(m.style, m.run.percentile(0.99))
        return [
            *target_lines(ratio, cpu_per_match, start_p99, p99_label, naive_ratio, floor_ratio),
            *style_lines(ratio, start_p99, list(styles.items())),
        ]


def _require_every_rating(label: str, got: int, expected: int, process: WorkerProcess) -> None:
    """Raise WorkerError unless ``got`` ratings reached the ``expected``: a run that lost its
    worker or timed out has no throughput, latency or ratio to print (it would print a rate
    from the few ratings that came, or from none), so the bench stops there with the worker's
    last lines."""
    if got >= expected:
        return
    state = (
        "still running"
        if process.running
        else f"exited with {None if process.process is None else process.process.returncode}"
    )
    raise WorkerError(
        f"{label}: {got:,} of {expected:,} ratings arrived; {process.name} {state},"
        f" its log ends:\n{process.output()[-4000:]}"
    )


def _command_topics(settings: Settings) -> tuple[str, str]:
    """The worker's two command topics: the ones whose records are counted per kind."""
    return settings.match_commands_topic, settings.player_commands_topic


def _late_line(late: dict[str, int] | None) -> str:
    if late is None:
        return "- (the worker's /metrics did not answer)"
    return ", ".join(f"{late[kind]:,}" for kind in LATE_KINDS)
