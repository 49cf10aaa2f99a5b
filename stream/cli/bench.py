"""`skillstream bench`: benchmarks that print figures (never timed tests)."""

from __future__ import annotations

import argparse
import dataclasses
import platform
import sys

from stream.bench.engine import time_replay, time_updates
from stream.cli.arguments import non_negative_float, non_negative_int, positive_float, positive_int
from stream.errors import UserError
from stream.simulation.partitioners import MURMUR2, PARTITIONINGS


def cmd_bench(args: argparse.Namespace) -> int:
    if args.target == "engine":
        return bench_engine(args)
    runs = {"pipeline": bench_pipeline, "cache": bench_cache, "recovery": bench_recovery}
    if args.target in runs:
        from stream.local.stack import StackError
        from stream.local.workers import WorkerError

        try:
            return runs[args.target](args)
        except (StackError, WorkerError) as exc:
            # The local stack, a worker or a yardstick app did not start: its output says why.
            print(f"skillstream bench {args.target}: error: {exc}", file=sys.stderr)
            return 1
    if args.target == "state":
        from stream.bench.state import table_bytes_per_player

        held: list[object] = []
        for learning, what in ((False, "a fixed mode"), (True, "a learning mode (drift slopes)")):
            per_player = table_bytes_per_player(learning=learning, keep=held)
            print(
                f"ratings table, memory store, {what}: {per_player:,.0f} bytes per player and"
                " mode (RSS growth over 200,000 full records: state, version, last 16 match ids)"
            )
        return 0
    raise UserError(f"unknown benchmark {args.target!r}")


def bench_engine(args: argparse.Namespace) -> int:
    print(f"python {platform.python_version()} on {platform.machine()}")
    print(f"{'algorithm':<10} {'update µs':>10} {'rate_player µs':>15}")
    for t in time_updates():
        print(f"{t.algorithm:<10} {t.update_us:>10.2f} {t.rate_player_us:>15.2f}")
    print(f"\nreplay, published glicko2, {args.matches:,} generated 1v1 matches (median of 3)")
    r = time_replay(args.matches)
    rows = [
        ("skillstream replay", r.replay_s),
        ("textbook plain loop", r.textbook_s),
        ("hand-tuned plain loop", r.tuned_s),
    ]
    for label, seconds in rows:
        print(f"  {label:<22} {seconds:6.2f} s  {r.matches / seconds:>9,.0f} matches/s")
    print(f"  replay speed / textbook loop:   {r.textbook_s / r.replay_s:.2f}x")
    print(f"  replay speed / hand-tuned loop: {r.tuned_s / r.replay_s:.2f}x")
    print(f"  largest rating difference from the loops: {r.max_rating_difference:.1e}")
    return 0


def bench_cache(args: argparse.Namespace) -> int:
    import asyncio

    from stream.bench.cache import time_feed, time_lookups, time_writes
    from stream.cli.progress import Progress
    from stream.local.stack import LocalStack

    players = args.cache_players
    print(f"on a fresh local stack (Valkey, Tansu); {players:,} players in one mode")
    with LocalStack() as stack:
        with Progress(2 * players, "writer", unit="entries") as bar:
            w = asyncio.run(time_writes(stack.redis_url, "bw", players, 2, progress=bar.update))
        print(
            f"  CacheWriter.write, batches of {w.batch:,}: {w.entries:,} rating changes in"
            f" {w.seconds:.2f} s = {w.per_second:,.0f}/s;"
            f" Redis memory {w.memory_bytes / players:,.0f} bytes per player (hash + 3 sorted sets)"
        )
        with Progress(5 * players, "feed", unit="events") as bar:
            f = asyncio.run(
                time_feed(stack.bootstrap_servers, stack.redis_url, "bf", players, 5, bar.update)
            )
        print(
            f"  cache writer (Kafka -> Redis, the feed): {f.entries:,} rating-changed in"
            f" {f.seconds:.2f} s = {f.per_second:,.0f}/s"
        )
        lookups = time_lookups(stack.redis_url, "bw", players, 100, args.cache_lookups)
        print(
            f"  get_many of 100 players (sync client), {lookups.calls:,} calls:"
            f" p50 {lookups.median_ms:.2f} ms, p99 {lookups.percentile(0.99):.2f} ms,"
            f" max {max(lookups.latencies_ms):.2f} ms"
        )
    return 0


def bench_recovery(args: argparse.Namespace) -> int:
    from stream.bench.recovery import run_recovery
    from stream.cli.progress import Progress
    from stream.local.stack import LocalStack, environment

    players = args.recovery_players
    print(f"worker start to 'Worker ready', {players:,} players in the ratings changelog")
    with LocalStack() as stack, Progress(players, "changelog", unit="players") as bar:
        timings = run_recovery(environment(stack), players, bar.update)
    for t in timings:
        print(f"  {t.label:<34} {t.players:>9,} players: {t.seconds:6.1f} s")
    return 0


def bench_pipeline(args: argparse.Namespace) -> int:
    import asyncio
    import os
    import time

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
    from stream.bench.recordcounts import P99_RATE, by_class, records_lines, target_lines
    from stream.bench.topics import Log, count_logs, per_topic
    from stream.cli.progress import Progress
    from stream.config.settings import Settings
    from stream.local.stack import LOCAL_PARTITIONS, LocalStack, environment, free_port
    from stream.local.workers import WorkerProcess

    partitions = args.partitions or LOCAL_PARTITIONS
    partitioning = PARTITIONINGS[args.partitioner]
    for rate in args.rates:
        if int(rate * args.seconds) < 1:
            raise UserError(f"--rates {rate:g} for --seconds {args.seconds:g} is not one match")
    print(
        f"each run on a fresh local stack: Tansu + one worker, {partitions} partitions,"
        f" {os.cpu_count()} cores shared with the load generator"
    )
    print(
        "latency: match-finished produced -> rating-changed produced; "
        f"{args.match_seconds:g} s matches produce the start {args.match_seconds:g} s before the"
        " finish; 'at the end': both produced at the finish, the start dated"
        f" {args.match_seconds:g} s earlier; 'finish only': no start, the finish carries the"
        " line-up (it waits for event time to pass it: no start can come); instant matches"
        " start and finish at the moment both are produced (the start waits for event time to"
        " pass it: the lateness and two more hops on the critical path)"
    )
    print(
        f"load generator's producer, --partitioner {partitioning.name}: {partitioning.description}"
    )
    print(
        "records per match: what each topic gained from before the measured run to after the"
        " worker stopped (the warm-up's records left out), read from the log, per match published"
    )

    def print_records(
        servers: str, settings: Settings, before: dict[TopicPartition, Log], matches: int
    ) -> None:
        after = asyncio.run(count_logs(servers, before))
        for line in records_lines(by_class(per_topic(after), settings), matches):
            print(line)

    @dataclasses.dataclass(frozen=True)
    class Measured:
        rate: float
        match_seconds: float
        at_end: bool
        run: PipelineRun
        worker_cpu: float

    measured: list[Measured] = []

    def warm_up(servers: str) -> None:
        """200 matches through a started worker, with the producer of the measured runs."""
        asyncio.run(run_load(servers, 200, 200.0, seed=1, partitioning=partitioning))

    raw_events_per_second: list[float] = []

    def raw_loop(servers: str, where: str) -> None:
        raw = asyncio.run(run_raw_loop(servers, args.raw_events, partitions=partitions))
        raw_events_per_second.append(raw.events_per_second)
        print(
            f"  {'raw loop (' + where + ')':<30} {raw.events:>7,} events in"
            f" {raw.seconds:6.2f} s = {raw.events_per_second:>7,.0f} events/s"
            f" ({raw.outputs:,} records produced, {raw.keys:,} keys)"
        )

    def late_line(late: dict[str, int] | None) -> str:
        if late is None:
            return "- (the worker's /metrics did not answer)"
        return ", ".join(f"{late[kind]:,}" for kind in LATE_KINDS)

    def worker_env(stack: LocalStack) -> dict[str, str]:
        """A worker's environment on ``stack``: the bench's partitions, a short session."""
        env = environment(stack)
        env.setdefault("SKILLSTREAM_SESSION_TIMEOUT_SECONDS", "6")
        env["SKILLSTREAM_PARTITIONS"] = str(partitions)
        return env

    def measure(
        label: str,
        matches: int,
        rate: float,
        match_seconds: float,
        *,
        at_end: bool = False,
        finish_only: bool = False,
        then_raw: bool = False,
    ) -> None:
        # A fresh broker per run: Tansu's in-memory engine has no retention, and the cost of
        # its fetches grows with what it holds, which would charge one run for the last.
        with LocalStack() as stack:
            env = worker_env(stack)
            web_port = free_port()
            env["SKILLSTREAM_WEB_PORT"] = str(web_port)
            worker = WorkerProcess(env)
            servers = stack.bootstrap_servers
            try:
                worker.start()
                warm_up(servers)
                logs_before = asyncio.run(count_logs(servers))
                cpu = CpuClock([*stack.pids(), worker.pid or 0])
                with Progress(2 * matches, label, unit="ratings") as bar:
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
                            partitioning=partitioning,
                        )
                    )
                used = cpu.used()
                late = late_counts(web_port)
            finally:
                worker.cleanup()
            broker, worker_cpu = used[0], used[-1]
            print(
                f"  {label:<30} {run.matches:>7,} matches in {run.rating_seconds:6.2f} s"
                f" = {run.matches_per_second:>7,.0f} matches/s;"
                f" latency p50 {run.median_ms:6.1f} ms, p99 {run.percentile(0.99):7.1f} ms,"
                f" max {max(run.latencies_ms, default=float('nan')):7.1f} ms;"
                f" CPU s broker {broker:5.1f}, worker {worker_cpu:5.1f}"
                f" ({1000 * worker_cpu / max(run.matches, 1):.2f} ms per match);"
                f" late starts, finishes, joins {late_line(late)}"
            )
            # After the worker stopped: whatever it flushed on the way out counts too.
            print_records(servers, Settings.from_env(env), logs_before, run.matches)
            measured.append(Measured(rate, match_seconds, at_end, run, worker_cpu))
            if then_raw:
                # The same broker process, its worker stopped; the loop's topics are new, and
                # Tansu's fetch cost grows per partition with the batches that partition holds,
                # so what the run left elsewhere does not slow the loop's fetches.
                raw_loop(servers, "same broker, after")

    def drain(matches: int) -> None:
        # The worker is stopped (gracefully) after a warm-up, the backlog published, and a
        # new worker started: from its "Worker ready" to the last rating.
        with LocalStack() as stack:
            env = worker_env(stack)
            servers = stack.bootstrap_servers
            first = WorkerProcess(env, "before")
            try:
                first.start()
                warm_up(servers)
            finally:
                first.cleanup()
            offsets = asyncio.run(rating_offsets(servers))
            logs_before = asyncio.run(count_logs(servers))
            published = time.monotonic()
            backlog = publish_backlog(
                servers,
                matches,
                seed=2,
                players=max(2, matches // 10),
                partitioning=partitioning,
            )
            asyncio.run(backlog)
            published = time.monotonic() - published
            worker = WorkerProcess(env, "after")
            try:
                launched = time.time()
                worker.start()
                ready = time.time()
                cpu = CpuClock([worker.pid or 0])
                with Progress(2 * matches, "backlog", unit="ratings") as bar:
                    got, last = asyncio.run(
                        last_rating_at(
                            servers,
                            offsets,
                            2 * matches,
                            progress=lambda done, _total: bar.update(done),
                        )
                    )
                (worker_cpu,) = cpu.used()
            finally:
                worker.cleanup()
            seconds = max(last - ready, 1e-9)
            print(
                f"  {'backlog of ' + format(matches, ',') + ' matches':<30} published in"
                f" {published:5.1f} s with no worker; the new worker ready after"
                f" {ready - launched:4.1f} s, then {got:,} rating-changed records"
                f" ({2 * matches:,} expected; a redelivery repeats one) in"
                f" {seconds:6.2f} s = {matches / seconds:>7,.0f} matches/s; CPU s worker"
                f" {worker_cpu:5.1f}"
            )
            print_records(servers, Settings.from_env(env), logs_before, matches)

    naive_rates: list[float] = []

    def naive(matches: int) -> None:
        """The naive Faust app (stream/bench/naive_faust.py) on a fresh stack, one partition,
        the same load generator flat out: the do-it-yourself yardstick of issue 16."""
        with LocalStack() as stack:
            env = environment(stack)
            servers = stack.bootstrap_servers
            asyncio.run(create_topics(servers, list(NAIVE_TOPICS), 1))
            app = WorkerProcess(env, "naive-faust", NAIVE_COMMAND)
            try:
                app.start()
                warm_up(servers)
                cpu = CpuClock([*stack.pids(), app.pid or 0])
                with Progress(2 * matches, "naive Faust app", unit="ratings") as bar:
                    run = asyncio.run(
                        run_load(
                            servers,
                            matches,
                            0.0,
                            seed=2,
                            progress=lambda done, _total: bar.update(done),
                            partitioning=partitioning,
                        )
                    )
                used = cpu.used()
            finally:
                app.cleanup()
        naive_rates.append(run.matches_per_second)
        print(
            f"  {'naive Faust app, 1 partition':<30} {run.matches:>7,} matches in"
            f" {run.rating_seconds:6.2f} s = {run.matches_per_second:>7,.0f} matches/s;"
            f" latency p50 {run.median_ms:6.1f} ms, p99 {run.percentile(0.99):7.1f} ms;"
            f" CPU s broker {used[0]:5.1f}, app {used[-1]:5.1f}"
            f" ({1000 * used[-1] / max(run.matches, 1):.2f} ms per match)"
        )

    floor_rates: list[float] = []

    def floor(matches: int) -> None:
        """The Faust floor (stream/bench/faust_floor.py) on a fresh stack, the worker's
        partitions and settings, the same matches published flat out: the fastest any Faust
        app reading both events of a match could go."""
        with LocalStack() as stack:
            env = worker_env(stack)
            env[EVENTS_VARIABLE] = str(2 * matches)
            servers = stack.bootstrap_servers
            s = Settings.from_env(env)
            inputs = [s.topics.match_started, s.topics.match_finished]
            asyncio.run(create_topics(servers, inputs, partitions))
            # Published first: the load generator is slower than the app, and would set the pace.
            asyncio.run(publish_flat_out(servers, matches, seed=2, partitioning=partitioning))
            app = WorkerProcess(env, "faust-floor", FLOOR_COMMAND)
            try:
                app.start()
                cpu = CpuClock([*stack.pids(), app.pid or 0])
                run = await_report(app)
                used = cpu.used()
            finally:
                app.cleanup()
        # From the first event the app was handed to the last.
        seconds = max(run.seconds, 1e-9)
        per_second = matches / seconds
        floor_rates.append(per_second)
        print(
            f"  {f'Faust floor, {partitions} partitions':<30} {run.events:>7,} events in"
            f" {seconds:6.2f} s = {per_second:>7,.0f} matches/s (both events read, nothing"
            f" done); CPU s broker {used[0]:5.1f}, app {used[-1]:5.1f}"
            f" ({1000 * used[-1] / max(matches, 1):.2f} ms per match)"
        )

    flat_out = args.pipeline_matches > 0
    if flat_out:
        measure(
            "flat out, instant matches",
            args.pipeline_matches,
            0.0,
            0.0,
            then_raw=args.raw_events > 0,
        )
    if flat_out and args.naive_faust:
        naive(args.pipeline_matches)
    if flat_out and args.faust_floor:
        floor(args.pipeline_matches)
    if args.backlog > 0:
        drain(args.backlog)
    for rate in args.rates:
        n = int(rate * args.seconds)
        if args.match_seconds > 0:
            measure(f"{rate:,.0f}/s, {args.match_seconds:g} s matches", n, rate, args.match_seconds)
            measure(
                f"{rate:,.0f}/s, {args.match_seconds:g} s, at the end",
                n,
                rate,
                args.match_seconds,
                at_end=True,
            )
            measure(
                f"{rate:,.0f}/s, finish only",
                n,
                rate,
                args.match_seconds,
                at_end=True,
                finish_only=True,
            )
        measure(f"{rate:,.0f}/s, instant matches", n, rate, 0.0)
    if args.raw_events > 0 and not flat_out:
        # No flat-out run to share a broker with: the loop gets a fresh one, as every run does.
        with LocalStack() as stack:
            raw_loop(stack.bootstrap_servers, "a fresh broker")

    fastest = next((m for m in measured if m.rate == 0.0), None)
    ratio = (
        fastest.run.matches_per_second / raw_events_per_second[0]
        if fastest is not None and raw_events_per_second
        else None
    )
    cpu_per_match = (
        1000 * fastest.worker_cpu / max(fastest.run.matches, 1) if fastest is not None else None
    )
    paced = next(
        (m for m in measured if m.rate == P99_RATE and m.match_seconds > 0 and not m.at_end),
        None,
    )
    p99_label = f"{paced.match_seconds:g} s matches" if paced is not None else "matches that last"
    naive_ratio = (
        naive_rates[0] / raw_events_per_second[0] if naive_rates and raw_events_per_second else None
    )
    floor_ratio = (
        floor_rates[0] / raw_events_per_second[0] if floor_rates and raw_events_per_second else None
    )
    for line in target_lines(
        ratio,
        cpu_per_match,
        paced.run.percentile(0.99) if paced else None,
        p99_label,
        naive_ratio,
        floor_ratio,
    ):
        print(line)
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    bench = sub.add_parser(
        "bench",
        help="print performance figures",
        description="Benchmarks that print figures (docs/benchmarks.md); `skillstream bench"
        " TARGET --help` lists a target's options and their defaults.",
    )
    targets = bench.add_subparsers(dest="target", required=True, metavar="TARGET")
    engine = targets.add_parser(
        "engine",
        help="the algorithms' updates and replay against two plain loops (make bench)",
        description="Each algorithm's one-game update and the engine's entry point, then replay"
        " of generated 1v1 matches against a textbook and a hand-tuned Glicko-2 loop.",
    )
    engine.add_argument(
        "--matches",
        type=positive_int,
        default=200_000,
        help="generated matches replayed (default 200000)",
    )
    _pipeline_target(targets)
    cache = targets.add_parser(
        "cache",
        help="Redis cache writes and batch lookups on a local Valkey",
        description="The cache writer's throughput and get_many's latency on the local Valkey.",
    )
    cache.add_argument(
        "--cache-players",
        type=positive_int,
        default=50_000,
        help="players written, then read (default 50000)",
    )
    cache.add_argument(
        "--cache-lookups",
        type=positive_int,
        default=2000,
        help="get_many calls timed (default 2000)",
    )
    recovery = targets.add_parser(
        "recovery",
        help="how long a worker takes to restore its tables",
        description="A worker's table recovery from the changelogs, and the end scan every"
        " worker does, on the local stack.",
    )
    recovery.add_argument(
        "--recovery-players",
        type=positive_int,
        default=100_000,
        help="players in the restored ratings table (default 100000)",
    )
    targets.add_parser(
        "state",
        help="bytes per player in the ratings table",
        description="The ratings table's memory per player and mode, fixed and learning modes.",
    )
    bench.set_defaults(func=cmd_bench)


def _pipeline_target(targets: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    pipeline = targets.add_parser(
        "pipeline",
        help="matches/s and latency through the live pipeline on the local stack",
        description="A flat-out run, paced runs with their latency, and the yardsticks (a naive"
        " Faust app, Faust's floor, a plain aiokafka loop) on the local stack.",
    )
    pipeline.add_argument(
        "--pipeline-matches",
        type=non_negative_int,
        default=30_000,
        help="flat-out run size (default 30000; 0: none)",
    )
    pipeline.add_argument(
        "--backlog",
        type=non_negative_int,
        default=0,
        metavar="MATCHES",
        help="also publish this many matches with the worker stopped, then time how fast a new"
        " worker rates them (default 0: none)",
    )
    pipeline.add_argument(
        "--rates",
        type=positive_float,
        nargs="*",
        default=[500.0, 1000.0],
        help="paced runs, matches/s (default 500 1000; none: no paced run)",
    )
    pipeline.add_argument(
        "--seconds", type=positive_float, default=20.0, help="paced run length (default 20)"
    )
    pipeline.add_argument(
        "--partitions",
        type=positive_int,
        default=None,
        help="partitions per topic (default: the local stack's, 4)",
    )
    pipeline.add_argument(
        "--match-seconds",
        type=non_negative_float,
        default=2.0,
        help="paced matches last this long: the start is produced this much earlier (default 2)",
    )
    pipeline.add_argument(
        "--partitioner",
        choices=list(PARTITIONINGS),
        default=MURMUR2.name,
        help="how the load generator's producer partitions: by match id with murmur2 as Java"
        " clients (every event on its home partition; the default), with CRC32 as librdkafka's"
        " default, or no key (a random partition); the last two forward most events home",
    )
    pipeline.add_argument(
        "--naive-faust",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="after the flat-out run, the same matches through a naive Faust app (one agent, a"
        " Table, await send; stream/bench/naive_faust.py) on one partition (default: on)",
    )
    pipeline.add_argument(
        "--faust-floor",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="after the flat-out run, the same matches read by a Faust agent that does nothing"
        " (stream/bench/faust_floor.py) on the worker's partitions: Faust's floor, the most"
        " matches/s any Faust app reading both events could rate (default: on)",
    )
    pipeline.add_argument(
        "--raw-events",
        type=non_negative_int,
        default=50_000,
        metavar="EVENTS",
        help="events through a plain aiokafka consume-update-produce loop on the flat-out run's"
        " broker, the ceiling the worker is compared with (default 50000; 0: none)",
    )
