"""`skillstream chaos`: the fault harness (stream/chaos) against real workers on a fresh local
stack. Exit code 0 only if every check passed; 1 if one failed; 2 if the run could not start.
"""

from __future__ import annotations

import argparse

from stream.cli.harnesscmd import (
    Advance,
    Emit,
    HarnessReport,
    add_common,
    add_seconds,
    config_from_args,
    run_harness,
)
from stream.cli.subcommands import add_command


def cmd_chaos(args: argparse.Namespace) -> int:
    from stream.chaos import ChaosConfig, run_chaos

    def config() -> ChaosConfig:
        return config_from_args(ChaosConfig, args)

    def run(config: ChaosConfig, emit: Emit, advance: Advance) -> HarnessReport:
        return run_chaos(config, emit=emit, progress=advance)

    return run_harness("chaos", args, config, run, unit="ratings")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    chaos = add_command(
        sub,
        "chaos",
        help="fault harness: kill workers, freeze the broker and Redis on a local stack, and "
        "check that every rating equals an offline replay, once",
        func=cmd_chaos,
        description="Runs the fleet simulator in waves against real worker processes on a "
        "fresh local stack (Tansu + Valkey) and injects faults at seeded waves: SIGKILL of a "
        "worker (then a restart), SIGSTOP of the broker and of Redis for a while. Then checks "
        "final states against an offline replay, one distinct rating-changed per (player, "
        "match), the cache against the ratings, and that no worker crashed by itself.",
    )
    chaos.add_argument("--matches", type=int, default=600, help="matches (default 600)")
    chaos.add_argument("--players", type=int, default=120, help="players (default 120)")
    chaos.add_argument("--team-size", type=int, default=1, help="players per team (default 1)")
    chaos.add_argument(
        "--workers", type=int, default=3, help="workers in the consumer group (default 3)"
    )
    chaos.add_argument("--kills", type=int, default=3, help="worker SIGKILLs (default 3)")
    chaos.add_argument(
        "--kill-early",
        type=int,
        default=0,
        metavar="N",
        help="N more SIGKILLs, 0-0.5 s after each of the first N waves: in the first seconds "
        "after a worker (or the previous victim's replacement) is ready (default 0)",
    )
    add_seconds(chaos, "--broker-pause", 20.0, "SIGSTOP the broker this long; 0: no broker pause")
    add_seconds(
        chaos, "--redis-pause", 30.0, "SIGSTOP Redis this long mid-stream; 0: no Redis pause"
    )
    add_seconds(
        chaos,
        "--outage",
        0.0,
        "SIGKILL every worker and go on publishing this long, then restart them all: the "
        "backlog must be rated as played; 0: no outage",
    )
    chaos.add_argument("--seed", type=int, default=1, help="seeds the matches and the faults")
    add_seconds(
        chaos,
        "--cache-deadline",
        5.0,
        "the cache must equal the ratings this soon after Redis returns",
    )
    add_common(chaos)
