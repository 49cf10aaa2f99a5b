"""`skillstream bench`: benchmarks that print figures (never timed tests)."""

from __future__ import annotations

import argparse
import platform

from stream.bench.engine import time_replay, time_updates


def cmd_bench(args: argparse.Namespace) -> int:
    if args.target == "engine":
        return bench_engine(args)
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


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    bench = sub.add_parser("bench", help="print performance figures")
    bench.add_argument("target", choices=["engine"], help="what to measure")
    bench.add_argument("--matches", type=int, default=200_000, help="replay size")
    bench.set_defaults(func=cmd_bench)
