"""`skillstream crashsim`: the deterministic crash simulator (stream/crashsim/), seed after
seed on every core. Exit code 0 if every schedule passed, 1 if one failed (each failing seed
printed, with what its checks found), 2 for a wrong option.
"""

from __future__ import annotations

import argparse
import os
import sys

import orjson

from stream.cli.subcommands import add_command


def cmd_crashsim(args: argparse.Namespace) -> int:
    from stream.cli.progress import Progress
    from stream.crashsim.explore import explore

    if args.seed is not None:
        first, count = args.seed, 1
    else:
        first, count = args.first_seed, args.schedules
    if count < 1:
        print("skillstream crashsim: error: --schedules must be at least 1", file=sys.stderr)
        return 2
    if args.short is not None and not 0.0 <= args.short <= 1.0:
        print("skillstream crashsim: error: --short must be between 0 and 1", file=sys.stderr)
        return 2
    processes = args.processes or os.cpu_count() or 1
    with Progress(count, "crashsim", unit="schedules") as bar:

        def advance(done: int, failed: int) -> None:
            bar.label = f"crashsim ({failed} failed)" if failed else "crashsim"
            bar.update(done)

        found = explore(
            first,
            count,
            processes=min(processes, count),
            short=args.short,
            use_checkpoints=not args.without_checkpoints,
            progress=advance,
        )
    if args.json:
        print(
            orjson.dumps(
                {
                    "schedules": found.schedules,
                    "failed": [
                        {"seed": o.seed, "schedule": o.description, "problems": o.problems}
                        for o in found.failed
                    ],
                    "kills": found.kills,
                    "tables_behind": found.behind,
                    "ratings": found.ratings,
                    "seconds": round(found.seconds, 1),
                }
            ).decode()
        )
    else:
        for outcome in found.failed:
            print(f"FAILED {outcome.description}")
            for problem in outcome.problems:
                print(f"  {problem}")
            print(f"  run it alone: skillstream crashsim --seed {outcome.seed}")
        rate = found.schedules / found.seconds if found.seconds else 0.0
        print(
            f"crashsim: {found.schedules - len(found.failed):,} of {found.schedules:,} schedules"
            f" passed (seeds {first} to {first + count - 1}); {found.kills:,} kills,"
            f" {found.behind:,} table partitions found behind their offsets and read again,"
            f" {found.ratings:,} rating changes; {found.seconds:.1f} s on {processes}"
            f" process(es), {rate:.0f} schedules/s"
        )
    return 1 if found.failed else 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    crashsim = add_command(
        sub,
        "crashsim",
        help="deterministic crash simulator: the real batch runner and processors on a "
        "simulated broker, seeded schedules of crashes, short changelogs and reorders",
        func=cmd_crashsim,
        description="Runs the worker's batch runner, match and player processors and commit "
        "protocol in one process on a simulated broker, under schedules drawn from seeds: "
        "workers killed between any two batches and at every step of the commit order, "
        "changelogs cut short at an earlier flush, partitions read in any interleaving, "
        "rebalances, lost records, duplicated and misrouted events, 1v1, team and free-for-all "
        "matches in waves up to 13 hours of event time apart, every mode learning its "
        "population, in a quarter of the schedules starts read late. After each schedule: "
        "nothing lost, rated twice or left waiting, and every player's last rating equal to "
        "an offline replay (with late starts, applied out of the order of play: every result "
        "counted once). A failing seed is printed and runs the same way alone (--seed). "
        "docs/crashsim.md.",
    )
    crashsim.add_argument(
        "--schedules", type=int, default=10_000, help="schedules to run (default 10000)"
    )
    crashsim.add_argument(
        "--first-seed", type=int, default=1, help="the first schedule's seed (default 1)"
    )
    crashsim.add_argument(
        "--seed", type=int, help="run this one seed's schedule alone (overrides --schedules)"
    )
    crashsim.add_argument(
        "--processes",
        type=int,
        default=None,
        help="processes to run schedules on (default: one per core)",
    )
    crashsim.add_argument(
        "--short",
        type=float,
        default=None,
        metavar="CHANCE",
        help="every kill cuts each of its partitions' changelogs short with this chance "
        "(0 to 1; default: drawn per kill from 0, 0.3 and 1)",
    )
    crashsim.add_argument(
        "--without-checkpoints",
        action="store_true",
        help="restart every input at its committed offset whatever the tables hold, as "
        "workers did before checkpoints, to see the failures they prevent",
    )
    crashsim.add_argument("--json", action="store_true", help="print the result as JSON")
