"""`skillstream bench`: benchmarks that print figures (never timed tests)."""

from __future__ import annotations

import argparse
import platform

from stream.bench.engine import time_replay, time_updates


def cmd_bench(args: argparse.Namespace) -> int:
    if args.target == "engine":
        return bench_engine(args)
    if args.target == "pipeline":
        return bench_pipeline(args)
    raise SystemExit(f"unknown benchmark {args.target!r}")


def bench_engine(args: argparse.Namespace) -> int:
    print(f"python {platform.python_version()} on {platform.machine()}")
    print(f"{'algorithm':<10} {'update µs':>10} {'rate_player µs':>15}")
    for t in time_updates():
        print(f"{t.algorithm:<10} {t.update_us:>10.2f} {t.rate_player_us:>15.2f}")
    print(f"\nreplay --algorithm glicko2, {args.matches:,} generated 1v1 matches (median of 3)")
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


def bench_pipeline(args: argparse.Namespace) -> int:
    import asyncio
    import os

    from stream.bench.pipeline import PipelineRun, run_load
    from stream.local.stack import LocalStack, environment
    from stream.local.workers import WorkerProcess

    matches = args.pipeline_matches
    print(f"local stack: Tansu + one worker ({os.cpu_count()} cores shared with the load)")
    with LocalStack() as stack:
        env = environment(stack)
        env.setdefault("SKILLSTREAM_SESSION_TIMEOUT_SECONDS", "6")
        worker = WorkerProcess(env)
        try:
            worker.start()
            servers = stack.bootstrap_servers

            def show(label: str, run: PipelineRun) -> None:
                print(
                    f"  {label:<26} {run.matches:>7,} matches in {run.total_seconds:6.2f} s"
                    f" = {run.matches_per_second:>7,.0f} matches/s;"
                    f" latency p50 {run.median_ms:6.1f} ms, p99 {run.percentile(0.99):7.1f} ms,"
                    f" max {max(run.latencies_ms, default=float('nan')):7.1f} ms"
                )

            asyncio.run(run_load(servers, 200, 200.0, seed=1))  # warm-up
            flat = asyncio.run(run_load(servers, matches, 0.0, seed=2))
            show("flat out", flat)
            for rate in args.rates:
                paced = asyncio.run(run_load(servers, int(rate * args.seconds), rate, seed=3))
                show(f"paced at {rate:,.0f}/s", paced)
        finally:
            worker.cleanup()
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    bench = sub.add_parser("bench", help="print performance figures")
    bench.add_argument("target", choices=["engine", "pipeline"], help="what to measure")
    bench.add_argument(
        "--pipeline-matches", type=int, default=30_000, help="pipeline: flat-out run size"
    )
    bench.add_argument(
        "--rates", type=float, nargs="*", default=[500.0], help="pipeline: paced runs (matches/s)"
    )
    bench.add_argument("--seconds", type=float, default=20.0, help="pipeline: paced run length")
    bench.add_argument("--matches", type=int, default=200_000, help="replay size")
    bench.set_defaults(func=cmd_bench)
