"""`skillstream ratings drift MODE`: where the mode's active players' ratings and Rank Points
sit over time (stream.offline.ratingdrift), as JSON lines and, with ``--plot``, a picture.

With ``--history FILE`` the history is replayed (the built-in defaults, or ``--modes-file``)
and a point taken every ``--every-days`` of event time over the players active within
``--active-days`` before it. Without it the deployment's cache is read (``REDIS_URL``): one
point per past season whose final standings it keeps and one for the season being played, over
the players its boards hold (those who played in the season, within the writer's inactivity
window when one is set). Reading the cache changes nothing in it.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from typing import Any

import orjson

from stream.cli.arguments import (
    add_jsonl_out,
    existing_file,
    existing_named_file,
    positive_float,
)
from stream.cli.offline import plot_file
from stream.cli.outputs import PICTURE, Kind, Output, check_outputs, written, written_by
from stream.cli.subcommands import add_command
from stream.errors import UserError, did_you_mean
from stream.offline.ratingdrift import DriftPoint, DriftWatch, spread

DAY = 86_400.0
# Read from the cache's sorted sets this many members a round trip.
CHUNK = 10_000

DRIFT = Kind(
    "rating drift points",
    "points",
    lambda line: line.startswith(b'{"mode":') and b'"active":' in line,
)


def cmd_drift(args: argparse.Namespace) -> int:
    out = Output("--out", args.out, DRIFT)
    plot = Output("--plot", args.plot, PICTURE)
    reads = {"the history it reads": args.history, "the modes file it reads": args.modes_file}
    check_outputs(reads, [out, plot], force=args.force)
    if args.history is None:
        given = {"--modes-file": args.modes_file, "--active-days": args.active}
        given["--every-days"] = args.every
        for option, value in given.items():
            if value is not None:
                raise UserError(
                    f"{option} is for a replayed history: give --history FILE (the cache's"
                    " points are its seasons' boards)"
                )
        points = _cached(args)
        if points is None:
            return 2
    else:
        points = _replayed(args)
    if not points:
        from stream.cli.cache import nothing_found

        return nothing_found("ratings drift", f"the cache holds no player of {args.drift_mode!r}")
    with written("ratings drift", out) as stream:
        for point in points:
            stream.write(orjson.dumps(point.to_json(), option=orjson.OPT_APPEND_NEWLINE))
    if args.plot is not None:
        from stream.cli.plots import drift_plot

        source = args.history.name if args.history is not None else "the cache"
        with written_by("ratings drift", plot) as temporary:
            drift_plot(points, temporary, title=f"Active players of {args.drift_mode}: {source}")
    return 0


def _replayed(args: argparse.Namespace) -> list[DriftPoint]:
    """The points of ``args.drift_mode`` in the replay of ``--history`` (module docstring)."""
    from stream.cli.offline import make_replayer, stream_history

    replayer = make_replayer(args)
    modes = replayer.mode_choice[0]
    if not modes.accepts(args.drift_mode):
        listed = ", ".join(sorted(modes.listed)) or "none"
        raise UserError(
            f"mode {args.drift_mode!r}: {args.modes_file} lists no such mode and rejects unlisted"
            f" modes (listed: {listed}){did_you_mean(args.drift_mode, modes.listed)}"
        )
    seasons = modes.get(args.drift_mode).seasons
    active = (28.0 if args.active is None else args.active) * DAY
    step = (7.0 if args.every is None else args.every) * DAY
    watch = DriftWatch(
        args.drift_mode, active, step, None if seasons is None else seasons.season_of
    )
    points: list[DriftPoint] = []
    modes_seen: set[str] = set()
    for match in stream_history(args.history, "ratings drift", replayer, args):
        name = replayer.mode_name(match)
        replayer.rate(match)
        modes_seen.add(name)
        if name != args.drift_mode:
            continue
        table = replayer.tables[name]
        for team in match.teams:
            for pid in team:
                state = table.get(pid)
                if state is not None:
                    points.extend(watch.observe(pid, match.at, state.rating, state.rank_points))
    points.extend(watch.finish())
    if not points:
        raise UserError(
            f"{args.history}: no match is in mode {args.drift_mode!r} (modes: "
            f"{', '.join(sorted(modes_seen)) or 'none'}){did_you_mean(args.drift_mode, modes_seen)}"
        )
    return points


def _cached(args: argparse.Namespace) -> list[DriftPoint] | None:
    """The cache's points of ``args.drift_mode`` (module docstring); None once a bad setting
    was said."""
    from stream.cli.cache import cache_reader
    from stream.cli.environment import settings_or_none
    from stream.reachability import redis_errors

    settings = settings_or_none("ratings drift")
    if settings is None:
        return None
    cache = cache_reader(settings)
    try:
        with redis_errors(settings):
            return _cached_points(args.drift_mode, settings, cache)
    finally:
        cache.close()


def _cached_points(mode: str, settings: Any, cache: Any) -> list[DriftPoint]:
    """:func:`_cached`'s points, read with ``cache`` (stream.cache.reader.SyncRatingCache)."""
    from stream.cache.drift import season_started
    from stream.cli.cache import check_mode

    check_mode(settings, cache, mode)
    layout = cache.queries.layout
    held = cache.seasons(mode)
    modes = settings.load_modes()
    points: list[DriftPoint] = []
    for season in held.past:
        # A past season's standings are final when the next one starts.
        end = season_started(modes, mode, season + 1)
        boards = (
            layout.past_board(mode, season, "rating"),
            layout.past_board(mode, season, "rank_points"),
        )
        points.extend(_point(cache.redis, mode, boards, end, season))
    clock = cache.redis.get(layout.clock(mode))
    now = None if clock is None else int(clock) / 1000.0
    boards = (layout.by_rating(mode), layout.by_rank_points(mode))
    points.extend(_point(cache.redis, mode, boards, now, held.current))
    return points


def _point(
    redis: Any, mode: str, boards: tuple[str, str], at: float | None, season: int | None
) -> Iterator[DriftPoint]:
    """The point of the players on ``boards`` (by rating, by Rank Points); none when empty
    (or emptied between the two reads)."""
    ratings = list(_scores(redis, boards[0]))
    rank_points = list(_scores(redis, boards[1]))
    if ratings and rank_points:
        yield DriftPoint(mode, at, len(ratings), spread(ratings), spread(rank_points), season)


def _scores(redis: Any, key: str) -> Iterator[float]:
    """Every score of sorted set ``key``, :data:`CHUNK` members a round trip."""
    start = 0
    while True:
        reply = redis.zrange(key, start, start + CHUNK - 1, withscores=True)
        for _member, score in reply:
            yield float(score)
        if len(reply) < CHUNK:
            return
        start += CHUNK


def register(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``ratings drift`` under ``skillstream ratings``."""
    drift = add_command(
        actions,
        "drift",
        "where a mode's active players' ratings and Rank Points sit over time (JSON lines, a plot)",
        cmd_drift,
    )
    drift.add_argument("drift_mode", metavar="mode", help="the game mode")
    drift.add_argument(
        "--history",
        type=existing_file,
        metavar="FILE",
        help="replay this history instead of reading the cache (CSV or JSON lines)",
    )
    drift.add_argument("--modes-file", type=existing_named_file, help="with --history: modes TOML")
    drift.add_argument(
        "--active-days",
        dest="active",
        type=positive_float,
        metavar="DAYS",
        help="with --history: a player is active this long after a match (default 28)",
    )
    drift.add_argument(
        "--every-days",
        dest="every",
        type=positive_float,
        metavar="DAYS",
        help="with --history: a point every this many days of event time (default 7)",
    )
    drift.add_argument(
        "--plot", type=plot_file, metavar="FILE", help="also draw the points: .png, .svg or .pdf"
    )
    add_jsonl_out(drift)
    # What the replay behind --history takes besides (rated as its own modes, no seeds).
    drift.set_defaults(
        mode=None,
        algorithm=None,
        seed_ratings=None,
        seed_games=None,
        seed_bounds=None,
        on_error="stop",
    )
