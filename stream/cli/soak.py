"""`skillstream soak`: seeded runs that kill workers at every phase of their lives
(stream/chaos/soak.py). Exit code 0 only if every seed passed; 1 if one failed; 2 if a run
could not start or an option is wrong.
"""

from __future__ import annotations

import argparse

from stream.cli.harnesscmd import add_common, add_seconds, config_from_args, run_harness
from stream.cli.subcommands import add_command


def cmd_soak(args: argparse.Namespace) -> int:
    from stream.chaos.soak import SoakConfig, run_soak

    def config() -> SoakConfig:
        phases = None if args.phases is None else tuple(args.phases.split(","))
        return config_from_args(SoakConfig, args, phases=phases)

    return run_harness("soak", args, config, run_soak, unit="seeds")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    soak = add_command(
        sub,
        "soak",
        help="kill workers at every phase of their lives, seed after seed, and report lost, "
        "doubled and stuck matches and the work each crash made the next worker redo",
        func=cmd_soak,
        description="For each seed: a fresh local stack, waves of matches (published in "
        "seeded orders, with duplicates, finishes before starts, instant and long matches) and "
        "kills at planned phases: early (before the first commit), mid-batch, between the "
        "delivery and the changelog flush, during the flush, between the flush and the commit, "
        "after a commit, during a rebalance, and soon after a predecessor was killed. Every "
        "rating must equal an offline replay, once; none may wait past --stuck-seconds once "
        "the workers are ready.",
    )
    soak.add_argument("--seeds", type=int, default=50, help="seeds to run (default 50)")
    soak.add_argument("--first-seed", type=int, default=1, help="the first seed (default 1)")
    soak.add_argument("--kills", type=int, default=3, help="kills per seed (default 3)")
    soak.add_argument(
        "--partitions", type=int, default=None, help="partitions per topic (default: 4)"
    )
    add_seconds(
        soak,
        "--stuck-seconds",
        30.0,
        "a match not rated this long after its wave was out and every worker ready is stuck",
    )
    soak.add_argument(
        "--phases",
        metavar="PHASE,...",
        help="one phase per kill instead of the seed's: early, processed, delivering, written, "
        "flushing, flushed, committed, soon-after, rebalance",
    )
    soak.add_argument("--matches", type=int, help="matches per wave instead of the seed's")
    soak.add_argument("--team-size", type=int, help="players per team instead of the seed's")
    soak.add_argument(
        "--order",
        choices=["starts-first", "finishes-first", "shuffled", "duplicated"],
        help="how every wave's events go out instead of the seed's",
    )
    soak.add_argument(
        "--environment",
        choices=["local", "operator"],
        help="the workers' environment instead of the seed's: the local stack's (4 partitions, "
        "a 4 s session) or an operator's (the servers and names only: every default)",
    )
    add_common(soak)
