"""`skillstream live` (what `make run` runs): the whole product on the embedded local stack.

It starts Tansu and Valkey on free loopback ports, one worker, and the fleet simulator, and
shows the top players, events per second, the rating lag and the prediction quality per mode
(log loss, Brier score and calibration error over the latest rating changes, as the worker's
``skillstream_prediction_*`` metrics) until Ctrl-C (or ``--seconds``); then it stops exactly the
processes it started.

The demo's matches last seconds, not minutes, so its grace period is scaled down with them
(unless SKILLSTREAM_MODES_FILE is set): with the default 60 s, each abandoned match held its
players' next matches for a minute, their opponents' next matches waited on those, and within
a minute almost no one was rated (docs/decisions.md: the grace period must be shorter than
the mode's matches).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from collections import deque
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import orjson
from aiokafka import AIOKafkaConsumer

from stream.cache.entry import CachedRating
from stream.cache.reader import RatingCache
from stream.cli.arguments import non_negative_float, positive_float, positive_int
from stream.config.modes import Modes
from stream.local.stack import LocalStack, StackError, environment
from stream.local.workers import WorkerError, WorkerProcess
from stream.quality import ModeQuality, PredictionQuality
from stream.simulation import SimulationConfig, Simulator
from stream.simulation.gamefleet import FleetConfig, FleetReport, run_fleet

# Tansu's memory engine lists every batch a partition has stored, on every fetch that brings
# that partition new records, and keeps every batch for the life of the process: its work grows
# with (fetches that bring records) x (batches stored), so each extra batch per second costs twice
# over, and a run at 100 matches/s saturated the broker within a minute (docs/benchmarks.md, "The
# demo over ten minutes"). The demo therefore produces fewer, larger batches: one partition per
# topic (one worker gains nothing from more), 50 ms batches in the worker, 100 ms in the fleet
# (its two topics are read by the worker), and readers that fetch less often. A variable set in
# the environment wins over these.
DEMO_WORKER_SETTINGS = {
    "SKILLSTREAM_PARTITIONS": "1",
    "SKILLSTREAM_BATCH_WAIT_MS": "50",
    "SKILLSTREAM_FETCH_MAX_WAIT_MS": "100",
}
DEMO_FLEET_LINGER_MS = 100
# The latency shown is the rating-changed record's own timestamp against its finish's, so this
# reader's fetches may be large and rare.
METER_FETCH_WAIT_MS = 250
METER_FETCH_MIN_BYTES = 1 << 20
RATE_WINDOW_SECONDS = 5


def demo_settings(env: dict[str, str], user: Mapping[str, str]) -> dict[str, str]:
    """``env`` with the demo's worker settings, except those the ``user`` environment sets."""
    return {**env, **{k: v for k, v in DEMO_WORKER_SETTINGS.items() if k not in user}}


def demo_grace_seconds(match_seconds: float) -> float:
    """A grace period shorter than the demo's matches: three quarters of one, at least 0.5 s
    (event-time reordering on the local broker is milliseconds), at most the default 60 s."""
    return min(60.0, max(0.5, 0.75 * match_seconds))


def demo_modes(match_seconds: float) -> str:
    """The modes file of the demo: the defaults with a grace period scaled to its matches."""
    return (
        f"# skillstream live: {match_seconds:g} s matches, so a grace period shorter than one\n"
        "[default.pending]\n"
        f"grace_seconds = {demo_grace_seconds(match_seconds)!r}\n"
    )


def cmd_live(args: argparse.Namespace) -> int:
    print("starting the local stack (Tansu, Valkey) and a worker ...", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="skillstream-live-") as tmp:
        return _run(args, Path(tmp))


def _run(args: argparse.Namespace, tmp: Path) -> int:
    try:
        with LocalStack() as stack:
            env = environment(stack)
            env = demo_settings(env, os.environ)
            if "SKILLSTREAM_MODES_FILE" not in env:
                modes_file = tmp / "modes.toml"
                modes_file.write_text(demo_modes(args.match_seconds), encoding="utf-8")
                env["SKILLSTREAM_MODES_FILE"] = str(modes_file)
            worker = WorkerProcess(env, "live")
            try:
                worker.start()
                print(
                    f"broker {stack.bootstrap_servers}, redis {stack.redis_url}, "
                    f"worker pid {worker.pid}; Ctrl-C stops everything",
                    file=sys.stderr,
                )
                asyncio.run(_live(stack.bootstrap_servers, stack.redis_url, args))
            except KeyboardInterrupt:
                pass
            finally:
                worker.cleanup()
    except (StackError, WorkerError) as exc:
        print(f"skillstream live: error: {exc}", file=sys.stderr)
        return 1
    print("stopped the worker, the broker and the cache", file=sys.stderr)
    return 0


async def _live(bootstrap_servers: str, redis_url: str, args: argparse.Namespace) -> None:
    consumer = AIOKafkaConsumer(
        "rating-changed",
        bootstrap_servers=bootstrap_servers,
        auto_offset_reset="earliest",
        fetch_max_wait_ms=METER_FETCH_WAIT_MS,
        fetch_min_bytes=METER_FETCH_MIN_BYTES,
    )
    await consumer.start()
    # The leaderboard is read from the Redis cache, as a matchmaker or a game's UI would.
    cache = RatingCache.from_url(redis_url, Modes())
    report = FleetReport()
    simulation = SimulationConfig(
        seed=args.seed, matches=10**9, players=args.players, initial_players=args.players
    )
    fleet = FleetConfig(
        rate=args.rate,
        match_seconds=args.match_seconds,
        duplicate_rate=0.02,
        reorder_rate=0.05,
        abandon_rate=0.01,
        seed=args.seed,
        linger_ms=DEMO_FLEET_LINGER_MS,
    )
    producing = asyncio.create_task(
        run_fleet(Simulator(simulation), bootstrap_servers, fleet, report=report)
    )
    players: dict[str, dict[str, Any]] = {}
    rated: set[str] = set()
    quality = PredictionQuality()
    started = time.monotonic()
    last_sent, ratings = 0, 0
    # Ratings per second over the last few seconds: this reader fetches a few times a second,
    # so a single second's count would swing with where its fetches fell.
    recent_ratings: deque[int] = deque([0], maxlen=RATE_WINDOW_SECONDS)
    try:
        while args.seconds is None or time.monotonic() - started < args.seconds:
            if producing.done():
                producing.result()
            tick = time.monotonic()
            latencies: list[float] = []
            while time.monotonic() - tick < 1.0:
                batch = await consumer.getmany(timeout_ms=200)
                for records in batch.values():
                    for record in records:
                        event = orjson.loads(record.value)
                        ratings += 1
                        rated.add(event["match_id"])
                        players[event["player_id"]] = event
                        quality.observe_event(event)
                        sent = report.finished_at_wall.get(event["match_id"])
                        if sent is not None:
                            latencies.append((record.timestamp / 1000.0 - sent) * 1000.0)
            # Finished and not yet rated; abandoned matches are rated without a finish, so
            # the two counts alone do not say it.
            waiting = sum(1 for m in report.finished_at_wall if m not in rated)
            mode = next(iter(players.values()))["mode"] if players else None
            board = [] if mode is None else await cache.top(mode, 10)
            cached = (
                {} if mode is None else await cache.get_many(mode, [e.player_id for e in board])
            )
            _show(
                players,
                [cached[e.player_id] for e in board],
                matches_per_s=report.matches - last_sent,
                ratings_per_s=round((ratings - recent_ratings[0]) / len(recent_ratings)),
                waiting=waiting,
                latency_ms=statistics.median(latencies) if latencies else None,
                elapsed=time.monotonic() - started,
                quality=quality_lines(quality.summaries()),
            )
            last_sent = report.matches
            recent_ratings.append(ratings)
    finally:
        producing.cancel()
        await asyncio.gather(producing, return_exceptions=True)
        await consumer.stop()
        await cache.aclose()


def _show(
    players: dict[str, dict[str, Any]],
    top: list[CachedRating],
    *,
    matches_per_s: int,
    ratings_per_s: int,
    waiting: int,
    latency_ms: float | None,
    elapsed: float,
    quality: list[str],
) -> None:
    latency = "-" if latency_ms is None else f"{latency_ms:.0f} ms"
    status = (
        f"{elapsed:5.0f} s  matches/s {matches_per_s:5d}  ratings/s {ratings_per_s:5d}  "
        f"lag {waiting:5d} matches  latency p50 {latency}  players {len(players)}"
    )
    if not sys.stdout.isatty():
        print("\n".join([status, *quality]), flush=True)
        return
    # "cache behind": the cached version is older than the last rating-changed seen here.
    behind = sum(1 for e in top if e.version < players.get(e.player_id, {}).get("version", 0))
    lines = [
        "\x1b[H\x1b[2J" + status,
        *quality,
        "",
        f"  top 10 from the Redis cache ({behind} of them behind the topic)",
        "  # player     rank pts  rating ± dev   games",
    ]
    for i, e in enumerate(top, 1):
        lines.append(
            f"{i:3d} {e.player_id:<10} {e.rank_points:8d}  "
            f"{e.rating:6.0f} ± {e.deviation:3.0f}  {e.games:6d}"
        )
    print("\n".join(lines), flush=True)


def quality_lines(summaries: dict[str, ModeQuality]) -> list[str]:
    """One line per mode: its prediction quality over the latest rating changes (a coin flip
    scores log loss 0.693 and Brier 0.250: lower is better; docs/quality.md)."""
    return [
        f"  prediction {mode}: log loss {q.log_loss:.3f}  brier {q.brier:.3f}  "
        f"calibration error {q.calibration_error:.3f}  over {q.observations} rating changes"
        for mode, q in sorted(summaries.items())
    ]


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    live = sub.add_parser(
        "live", help="run the whole pipeline on the embedded local stack with a live view"
    )
    live.add_argument(
        "--rate", type=positive_float, default=100.0, help="matches per second (default 100)"
    )
    live.add_argument(
        "--players", type=positive_int, default=2_000, help="simulated players (default 2000)"
    )
    live.add_argument(
        "--match-seconds",
        type=non_negative_float,
        default=2.0,
        help="each match's start is published this long before its finish (default 2)",
    )
    live.add_argument("--seed", type=int, default=0, help="seeds the simulated fleet (default 0)")
    live.add_argument("--seconds", type=float, help="stop after this long (default: Ctrl-C)")
    live.set_defaults(func=cmd_live)
