"""`skillstream bench`: benchmarks that print figures (never timed tests)."""

from __future__ import annotations

import argparse
import platform
import sys
from typing import TYPE_CHECKING

from stream.bench.engine import time_replay, time_updates
from stream.cli.arguments import (
    int_at_least,
    non_negative_float,
    non_negative_int,
    positive_float,
    positive_int,
)
from stream.errors import UserError
from stream.ratings.kernels import glicko2_kernel, is_compiled
from stream.simulation.partitioners import MURMUR2, PARTITIONINGS

if TYPE_CHECKING:
    from stream.bench.failover import Phases


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
    built = "compiled" if is_compiled(glicko2_kernel) else "pure Python (skillstream compile)"
    print(f"Glicko-2 arithmetic: {built}")
    print(f"{'algorithm':<10} {'update µs':>10} {'rate_player µs':>15}")
    for t in time_updates():
        print(f"{t.algorithm:<10} {t.update_us:>10.2f} {t.rate_player_us:>15.2f}")
    print(f"\nreplay of {args.matches:,} generated 1v1 matches (median of 3)")
    r = time_replay(args.matches)
    rows = [
        ("replay, built-in", r.default_s),
        ("replay, glicko2", r.replay_s),
        ("textbook plain loop", r.textbook_s),
        ("hand-tuned plain loop", r.tuned_s),
    ]
    for label, seconds in rows:
        print(f"  {label:<22} {seconds:6.2f} s  {r.matches / seconds:>9,.0f} matches/s")
    print(f"  replay speed / textbook loop:   {r.textbook_s / r.replay_s:.2f}x (published glicko2)")
    print(f"  replay speed / hand-tuned loop: {r.tuned_s / r.replay_s:.2f}x (published glicko2)")
    # The built-in defaults learn (population, drift, experience): their replay's time as a
    # multiple of the textbook loop's is what a designer waits for beyond plain Glicko-2.
    print(f"  built-in defaults' time / textbook loop's: {r.default_s / r.textbook_s:.2f}x")
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
    from stream.bench.recovery import run_lost_worker, run_recovery
    from stream.cli.progress import Progress
    from stream.local.stack import LocalStack, environment

    players = args.recovery_players
    print(f"worker start to 'Worker ready', {players:,} players in the ratings changelog")
    with LocalStack() as stack:
        with Progress(players, "changelog", unit="players") as bar:
            timings = run_recovery(environment(stack), players, bar.update)
        for t in timings:
            print(f"  {t.label:<34} {t.players:>9,} players: {t.seconds:6.1f} s", flush=True)
        lost = run_lost_worker(environment(stack), players)
    combiner = {True: ", the combiner's", False: "", None: ""}[lost.lost_combiner]
    print(
        f"a worker lost with its disk{combiner} ({lost.store} store, two workers, standby copies:"
        f" {lost.standbys}), 100 matches/s:"
        f" every match published by 1 s after the kill rated {lost.rated_again_seconds:.1f} s"
        f" after it; p99 latency {lost.before_p99_ms:,.0f} ms before, {lost.after_p99_ms:,.0f} ms"
        f" after; {lost.rated:,} of {lost.matches:,} matches rated (the standby copies caught"
        f" up {lost.standby_ready_seconds:.1f} s after both workers were ready)"
    )
    print(f"  the survivor, seconds after the kill: {_phases(lost.phases)}")
    return 0


def _phases(p: Phases) -> str:
    def at(seconds: float | None) -> str:
        return "-" if seconds is None else f"{seconds:.1f}"

    return (
        f"its rebalance began {at(p.noticed)} (the group noticed), its partitions came"
        f" {at(p.assigned)} (the broker completed the rebalance), its tables were ready"
        f" {at(p.ready)}; the rest is the outage's backlog"
    )


def bench_pipeline(args: argparse.Namespace) -> int:
    from stream.bench.pipelinebench import PipelineBench
    from stream.cli.progress import Progress

    for rate in args.rates:
        if int(rate * args.seconds) < 1:
            raise UserError(f"--rates {rate:g} for --seconds {args.seconds:g} is not one match")
    PipelineBench(args, lambda total, label: Progress(total, label, unit="ratings")).run()
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
        description="A worker's table recovery from the changelogs, the end scan every"
        " worker does, and a worker lost with its disk while another stands by, on the local"
        " stack.",
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
        "--backlog-players",
        type=int_at_least(2),  # a 1v1 match needs two
        default=None,
        metavar="PLAYERS",
        help="the backlog's players (default: a tenth of its matches, at least 2); fewer players"
        " each have more matches waiting",
    )
    pipeline.add_argument(
        "--backlog-late",
        action="store_true",
        help="date the backlog months before the warm-up (the simulated history's own dates)"
        " instead of just after it: every start read behind event time, a backlog of late"
        " starts (docs/event-time.md)",
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
        nargs="+",
        default=None,
        help="partitions per topic; several: every run at each in turn (default: the local"
        " stack's, 4)",
    )
    pipeline.add_argument(
        "--idle-seconds",
        type=non_negative_float,
        default=0.0,
        help="first, a worker with no input at all for this long: the event-time protocol's"
        " commands per second while nothing is pending (default 0: none)",
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
    _yardstick_options(pipeline)


def _yardstick_options(pipeline: argparse.ArgumentParser) -> None:
    """``bench pipeline``'s yardsticks: the naive Faust app, Faust's floor, the raw loop."""
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
