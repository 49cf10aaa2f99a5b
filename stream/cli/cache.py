"""The Redis cache commands: `cache writer`, `cache rebuild`, `ratings get`, `ratings history`,
`ratings explain`, `leaderboard`.

All take their settings from the environment, like the worker (`REDIS_URL`,
`KAFKA_BOOTSTRAP_SERVERS`, `SKILLSTREAM_*`), so they address the same cache and topics.
Each first checks that the servers it needs answer (UnreachableError, one line naming the
setting and the address, within SKILLSTREAM_CONNECT_TIMEOUT_SECONDS).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import logging
import signal
import sys
import time
from collections.abc import Callable
from typing import Any, TypeVar

import orjson

from stream.cache.access import check_writer_access
from stream.cli.access import register_acl
from stream.cli.arguments import non_negative_float, non_negative_int, positive_int
from stream.cli.drift import register as register_drift
from stream.cli.environment import settings_or_none
from stream.cli.subcommands import add_actions, add_command
from stream.config.settings import Settings
from stream.errors import UserError, did_you_mean
from stream.reachability import (
    check_kafka,
    kafka_errors,
    quiet_kafka_logs,
    redis_client,
    redis_errors,
)


def cmd_writer(args: argparse.Namespace) -> int:
    """The feed on its own (workers with SKILLSTREAM_CACHE_WRITER=off leave it to this).

    Kafka outages once it runs are logged as the worker logs them: one line when the brokers
    stop answering, one when they are back (stream/pipeline/kafkawatch.py)."""
    from stream.cache.feed import feed_from_settings
    from stream.pipeline.kafkawatch import KafkaWatch
    from stream.pipeline.workarounds.clientlogs import quiet_kafka_client_repeats

    settings = settings_or_none("cache writer")
    if settings is None:
        return 2
    check_writer_access(settings)
    asyncio.run(check_kafka(settings))
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    quiet_kafka_client_repeats()

    async def run() -> None:
        feed = feed_from_settings(settings)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, feed.stop)
        watch = asyncio.create_task(KafkaWatch(settings).run())
        try:
            with kafka_errors(settings):
                await feed.run()
        finally:
            watch.cancel()
            await feed.writer.redis.aclose()

    asyncio.run(run())
    return 0


def cmd_rebuild(args: argparse.Namespace) -> int:
    from stream.cache.feed import redis_client as feed_redis_client
    from stream.cache.feed import writer_from_settings
    from stream.cache.rebuild import rebuild
    from stream.cli.progress import Progress

    settings = settings_or_none("cache rebuild")
    if settings is None:
        return 2
    check_writer_access(settings)

    async def run() -> int:
        await check_kafka(settings)
        client = feed_redis_client(settings.redis.url)
        writer = writer_from_settings(settings, client)
        try:
            with (
                quiet_kafka_logs(),
                kafka_errors(settings),
                redis_errors(settings),
                Progress(None, "rebuild", unit="records") as bar,
            ):

                def progress(done: int, total: int) -> None:
                    bar.total = total
                    bar.update(done)

                report = await rebuild(
                    writer,
                    settings.kafka.bootstrap_servers,
                    settings.ratings_changelog_topic,
                    progress=progress,
                    client_options=settings.kafka.security.aiokafka_options(),
                    modes=settings.load_modes(),
                )
        except LookupError as exc:
            print(f"skillstream cache rebuild: error: {exc}", file=sys.stderr)
            return 1
        finally:
            await client.aclose()
        print(
            f"read {report.records:,} changelog records in {report.seconds:.1f} s: "
            f"{report.written:,} entries written, {report.stale:,} already current, "
            f"{report.skipped:,} skipped"
        )
        return 0

    return asyncio.run(run())


T = TypeVar("T")


def cache_reader(settings: Settings) -> Any:
    from stream.cache.keys import KeyLayout
    from stream.cache.reader import SyncRatingCache

    return SyncRatingCache(
        redis_client(settings), settings.load_modes(), KeyLayout(settings.cache.prefix)
    )


def _check_names(settings: Settings, mode: str, players: list[str]) -> None:
    """An empty mode or an id longer than events may carry is in no cache: say so up front."""
    if not mode.strip():
        raise UserError("MODE: empty mode name")
    longest = settings.worker.limits.max_id_length
    for player in players:
        if not player.strip():
            raise UserError("PLAYER: empty player id")
        if len(player) > longest:
            raise UserError(
                f"PLAYER: {player[:20]!r}... has {len(player):,} characters; ids are at most "
                f"{longest} (SKILLSTREAM_MAX_ID_LENGTH)"
            )


def check_mode(settings: Settings, cache: Any, mode: str) -> None:
    """A mode the modes file does not list and the cache holds nothing of is most likely a
    typo (``rankd``): refused with the modes the cache holds and the closest of them, rather
    than answered with a new player's defaults or an empty board."""
    modes = settings.load_modes()
    if mode in modes.listed or cache.holds(mode):
        return
    held = cache.modes_held()
    shown = ", ".join(held[:20]) + (", ..." if len(held) > 20 else "") if held else "none"
    listed = "the modes file lists no such mode" if settings.modes_file else "no modes file"
    raise UserError(
        f"MODE: the cache holds nothing of mode {mode!r} and {listed} (modes the cache holds:"
        f" {shown}){did_you_mean(mode, [*held, *modes.listed])}"
    )


def _wait_for(cache: Any, mode: str, players: list[str], seconds: float) -> list[str]:
    """Read ``players`` until every one is in the cache or ``seconds`` pass; the ones still
    missing. For a script that publishes a match and then reads its rating."""
    deadline = time.monotonic() + seconds
    while True:
        found = cache.get_many(mode, players)
        missing = [player for player, entry in found.items() if entry.unknown]
        if not missing or time.monotonic() >= deadline:
            return missing
        time.sleep(0.25)


def nothing_found(command: str, what: str) -> int:
    """Exit 1 with one line: the read commands' one wording for an answer with nothing in it
    (docs/commands.md, "Exit codes")."""
    print(f"skillstream {command}: nothing found: {what}", file=sys.stderr)
    return 1


def cmd_ratings_get(args: argparse.Namespace) -> int:
    """One JSON line per player, in the order given: ``unknown`` (not in the cache: the mode's
    defaults) and ``provisional`` as rating-changed says it (fewer rated games than the mode's
    ``provisional_games``)."""
    from stream.cache.queries import UnknownModeError

    settings = settings_or_none("ratings get")
    if settings is None:
        return 2
    _check_names(settings, args.mode, args.players)
    cache = cache_reader(settings)
    try:
        with redis_errors(settings):
            missing = _wait_for(cache, args.mode, args.players, args.wait) if args.wait else []
            check_mode(settings, cache, args.mode)
            found = cache.get_many(args.mode, args.players)
    except UnknownModeError as exc:
        print(f"skillstream ratings get: error: {exc}", file=sys.stderr)
        return 2
    finally:
        cache.close()
    if missing:
        return nothing_found(
            "ratings get",
            f"after {args.wait:g} s the cache still holds no rating of"
            f" {', '.join(map(repr, missing))} in {args.mode!r}",
        )
    experience = settings.load_modes().get(args.mode).experience
    for entry in found.values():
        sys.stdout.write(
            orjson.dumps(
                {
                    "player_id": entry.player_id,
                    "mode": entry.mode,
                    "rating": entry.rating,
                    "deviation": entry.deviation,
                    "volatility": entry.volatility,
                    "rank_points": entry.rank_points,
                    "games": entry.games,
                    "version": entry.version,
                    "updated_at_ms": entry.updated_at_ms,
                    "unknown": entry.unknown,
                    "provisional": entry.unsettled(experience),
                }
            ).decode()
            + "\n"
        )
    return 0


def cmd_leaderboard(args: argparse.Namespace) -> int:
    from stream.cache.queries import UnknownModeError

    settings = settings_or_none("leaderboard")
    if settings is None:
        return 2
    _check_names(settings, args.mode, [] if args.around is None else [args.around])
    cache = cache_reader(settings)
    try:
        with redis_errors(settings):
            check_mode(settings, cache, args.mode)
            if args.around is None:
                entries = cache.top(args.mode, args.top, board=args.board, season=args.season)
            else:
                entries = cache.around(
                    args.mode, args.around, args.top, board=args.board, season=args.season
                )
    except UnknownModeError as exc:
        print(f"skillstream leaderboard: error: {exc}", file=sys.stderr)
        return 2
    finally:
        cache.close()
    if args.json:
        for e in entries:
            line = {"rank": e.rank, "player_id": e.player_id, "score": e.score}
            sys.stdout.write(orjson.dumps(line).decode() + "\n")
        return 0
    if not entries:
        where = "" if args.around is None else f" around {args.around!r}"
        season = "" if args.season is None else f" in season {args.season}"
        return nothing_found(
            "leaderboard", f"no entries{where} on the {args.board} board of {args.mode!r}{season}"
        )
    print(f"{'rank':>6}  {'player':<24} {args.board:>14}")
    for e in entries:
        marker = " <" if e.player_id == args.around else ""
        print(f"{e.rank:>6}  {e.player_id:<24} {e.score:>14.1f}{marker}")
    return 0


def _read_player(
    command: str, args: argparse.Namespace, read: Callable[[Any], T]
) -> tuple[bool, T | None]:
    """(True, ``read(cache)``) for ``args.mode`` and ``args.player`` once the settings and
    the names pass; (False, None) after the settings' one-line error."""
    settings = settings_or_none(command)
    if settings is None:
        return False, None
    _check_names(settings, args.mode, [args.player])
    cache = cache_reader(settings)
    try:
        with redis_errors(settings):
            check_mode(settings, cache, args.mode)
            return True, read(cache)
    finally:
        cache.close()


def cmd_ratings_history(args: argparse.Namespace) -> int:
    """One JSON line per rating change, newest first; exit 1 with one line when the cache keeps
    none of the player's."""
    ok, entries = _read_player(
        "ratings history", args, lambda cache: cache.history(args.mode, args.player, args.last)
    )
    if not ok or entries is None:
        return 2
    if not entries:
        return nothing_found(
            "ratings history",
            f"the cache keeps no rating change of {args.player!r} in {args.mode!r}",
        )
    for e in entries:
        line = {"player_id": args.player, "mode": args.mode, **dataclasses.asdict(e)}
        sys.stdout.write(orjson.dumps(line).decode() + "\n")
    return 0


def cmd_ratings_explain(args: argparse.Namespace) -> int:
    """Why the player's latest (or MATCH's) rating change happened, worded for a support agent
    from the cache's history; exit 1 when the cache does not keep that change."""
    from stream.cache.history import worded

    ok, entry = _read_player(
        "ratings explain", args, lambda cache: cache.explanation(args.mode, args.player, args.match)
    )
    if not ok:
        return 2
    if entry is None:
        which = "rating change" if args.match is None else f"change from match {args.match!r}"
        return nothing_found(
            "ratings explain",
            f"the cache keeps no {which} of {args.player!r} in {args.mode!r} (it keeps the last"
            " SKILLSTREAM_CACHE_HISTORY_LENGTH changes; older ones: skillstream replay HISTORY"
            " --explain PLAYER)",
        )
    if entry.retracted is not None:
        mark = entry.retracted
        who = "" if mark.by is None else f" by {mark.by}"
        return nothing_found(
            "ratings explain",
            f"match {entry.match_id!r} no longer counts for {args.player!r} in {args.mode!r}:"
            f' re-rate generation {mark.generation}{who} voided it ("{mark.reason}"), so it'
            " changed no rating",
        )
    if args.json:
        line = {"player_id": args.player, "mode": args.mode, **dataclasses.asdict(entry)}
        sys.stdout.write(orjson.dumps(line).decode() + "\n")
        return 0
    for sentence in worded(entry, args.player):
        print(sentence)
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    actions = add_actions(sub, "cache", "the Redis rating cache: run its writer, rebuild it")
    writer = actions.add_parser(
        "writer", help="run the cache writer alone (rating-changed -> Redis) until stopped"
    )
    writer.set_defaults(func=cmd_writer)
    rebuild = actions.add_parser(
        "rebuild", help="fill Redis from the ratings changelog (safe while the writer runs)"
    )
    rebuild.set_defaults(func=cmd_rebuild)
    register_acl(actions)

    ratings_actions = add_actions(sub, "ratings", "read cached ratings")
    get = ratings_actions.add_parser("get", help="players' cached ratings in one mode, as JSON")
    get.add_argument("mode", help="the game mode")
    get.add_argument("players", nargs="+", metavar="PLAYER", help="the players, in any number")
    get.add_argument(
        "--wait",
        type=non_negative_float,
        metavar="SECONDS",
        help="wait up to this long for every PLAYER to be in the cache (a script that has just"
        " published their match); exit 1 with one line if one is not",
    )
    get.set_defaults(func=cmd_ratings_get)
    history = add_command(
        ratings_actions,
        "history",
        "a player's last rating changes in one mode, newest first, as JSON",
        cmd_ratings_history,
    )
    _mode_and_player(history)
    history.add_argument(
        "--last",
        type=positive_int,
        default=20,
        metavar="N",
        help="how many (default 20; the cache keeps SKILLSTREAM_CACHE_HISTORY_LENGTH)",
    )
    explain = add_command(
        ratings_actions,
        "explain",
        "why a player's rating changed, worded for a support agent",
        cmd_ratings_explain,
    )
    _mode_and_player(explain)
    explain.add_argument("match", nargs="?", help="the match (default: the latest change)")
    explain.add_argument("--json", action="store_true", help="the cached change as JSON")
    register_drift(ratings_actions)

    board = sub.add_parser("leaderboard", help="a mode's leaderboard from the cache")
    board.add_argument("mode", help="the game mode")
    board.add_argument(
        "--board",
        choices=["rank_points", "conservative", "rating"],
        default="rank_points",
        help="what to rank by (default rank_points)",
    )
    board.add_argument(
        "--top", type=positive_int, default=20, help="how many (around: on each side)"
    )
    board.add_argument("--around", metavar="PLAYER", help="the entries around this player")
    board.add_argument(
        "--season",
        type=non_negative_int,
        metavar="S",
        help="season S's board: the current one while S is played, then its final standings",
    )
    board.add_argument("--json", action="store_true", help="JSON lines instead of a table")
    board.set_defaults(func=cmd_leaderboard)


def _mode_and_player(parser: argparse.ArgumentParser) -> None:
    """MODE and PLAYER: an action on one player's cached entry in one mode."""
    parser.add_argument("mode", help="the game mode")
    parser.add_argument("player", help="the player")
