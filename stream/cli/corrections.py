"""`skillstream corrections void | adjust | erase | ban | log`: write and read correction records.

Each of void, adjust, erase and ban prints the record as one JSON line (append it to the
corrections file that ``skillstream replay --corrections`` reads), after the same checks the
readers make, so a record these commands print is always accepted; with ``--publish`` it goes
to the audit topic first and is printed once the broker has it. ``log`` prints the audit
topic's records as a corrections file. ``by`` defaults to the user running the command, ``at`` to
now (the only wall clock in the corrections: it records when the decision was made; what a
correction does never depends on it). What each correction does and what it cannot undo:
docs/operations.md#correcting-the-past.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import secrets
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson

from stream.cli.arguments import add_jsonl_out, iso_date
from stream.cli.environment import settings_and_out, settings_or_none
from stream.cli.outputs import CORRECTIONS, Output, written
from stream.cli.progress import Progress, counting
from stream.cli.subcommands import add_actions
from stream.corrections.pseudonyms import key_fingerprint, pseudonym, pseudonym_key
from stream.corrections.records import correction_json, parse_correction
from stream.errors import UserError
from stream.events import format_time


def cmd_correction(args: argparse.Namespace) -> int:
    now = time.time()
    record: dict[str, Any] = {
        "id": args.id
        or f"c-{time.strftime('%Y%m%dT%H%M%SZ', time.gmtime(now))}-{secrets.token_hex(3)}",
        "kind": args.action,
        "by": args.by or getpass.getuser(),
        "at": format_time(now),
        "reason": args.reason,
    }
    if args.action == "void":
        if args.matches:
            if args.player or args.since is not None or args.until is not None:
                raise UserError("--matches: give match ids, or --player with --from and --until")
            if args.mode:
                raise UserError(
                    "--mode: the ids name the matches, whatever their mode; --mode goes with"
                    " --player, --from and --until"
                )
            record["matches"] = args.matches
        else:
            if not args.player or args.since is None or args.until is None:
                raise UserError("void: give --matches ID..., or --player with --from and --until")
            record.update(player=args.player, until=format_time(args.until))
            record["from"] = format_time(args.since)
            if args.mode:
                record["mode"] = args.mode
    elif args.action == "adjust":
        record.update(mode=args.mode, player=args.player)
        if (args.set is None) == (args.shift is None):
            raise UserError("adjust: give exactly one of --set RATING and --shift POINTS")
        if args.shift == 0:
            raise UserError("--shift 0 changes nothing: give the points to move the rating by")
        record["set" if args.set is not None else "shift"] = (
            args.set if args.set is not None else args.shift
        )
        record["effective"] = format_time(now if args.effective is None else args.effective)
    elif args.action == "ban":
        _ban_fields(args, now, record)
    else:
        key = pseudonym_key()
        record["pseudonym"] = pseudonym(key, args.player)
        record["key"] = key_fingerprint(key)
    if args.action in ("adjust", "erase") and args.may_match_nothing:
        record["may_match_nothing"] = True
    try:
        correction = parse_correction(record)
    except ValueError as exc:
        raise UserError(f"{args.action}: {exc}") from None
    checked = correction_json(correction)
    if args.publish:
        from stream.corrections.audit import publish

        settings = settings_or_none(f"corrections {args.action}")
        if settings is None:
            return 2
        if args.action == "ban" or (
            args.action in ("adjust", "erase") and not args.may_match_nothing
        ):
            _check_known(settings, args)
        checked = asyncio.run(publish(settings, correction))
    sys.stdout.write(orjson.dumps(checked).decode() + "\n")
    return 0


def _ban_fields(args: argparse.Namespace, now: float, record: dict[str, Any]) -> None:
    """A ban's fields from its options: the window from --since until --until (default: now,
    the moment of the ban) and the policy."""
    until = now if args.until is None else args.until
    if not args.since < until:
        which = f"--until {format_time(until)}" if args.until is not None else "now"
        raise UserError(f"--since {format_time(args.since)} is not before {which}: it bans nothing")
    record.update(mode=args.mode, player=args.player, until=format_time(until))
    record["from"] = format_time(args.since)
    record["policy"] = args.policy


def _check_known(settings: Any, args: argparse.Namespace) -> None:
    """Before a live adjust, ban or erase is published: the deployment's cache must hold the
    player (in the mode, for an adjustment or a ban), or the correction would invent a rating,
    ban nobody or erase nobody (a typo'd id or mode). Refused with one line unless
    --may-match-nothing (adjust and erase only: a ban of nobody has no use). A cache that
    cannot be read is said, and the record goes out unchecked: replay checks it again against
    the history (Ledger)."""
    from redis.exceptions import RedisError

    from stream.cli.cache import cache_reader, check_mode

    cache = cache_reader(settings)
    try:
        if args.action in ("adjust", "ban"):
            check_mode(settings, cache, args.mode)
            if cache.get_many(args.mode, [args.player])[args.player].unknown:
                raise UserError(
                    f"adjust: the cache holds no rating of {args.player!r} in {args.mode!r}: the"
                    " adjustment would invent one (--may-match-nothing records it anyway)"
                    if args.action == "adjust"
                    else f"ban: the cache holds no rating of {args.player!r} in {args.mode!r}:"
                    " the ban would refund or void nothing"
                )
        elif not any(cache.holds_player(mode, args.player) for mode in cache.modes_held()):
            raise UserError(
                f"erase: the cache holds no rating of {args.player!r} in any mode: the erasure"
                " would erase nobody (--may-match-nothing records it anyway)"
            )
    except (RedisError, OSError) as exc:
        print(
            f"skillstream corrections {args.action}: warning: could not read the cache at"
            f" REDIS_URL to check {args.player!r} ({exc}); published unchecked",
            file=sys.stderr,
        )
    finally:
        cache.close()


def cmd_log(args: argparse.Namespace) -> int:
    """The audit topic's corrections, in the order they were made, as JSON lines."""
    from stream.corrections.audit import read_log

    setup = settings_and_out("corrections log", args, CORRECTIONS)
    if setup is None:
        return 2
    settings, output = setup
    records = asyncio.run(read_log(settings))
    _write_corrections("corrections log", [c for _, c in records], output)
    print(
        f"skillstream corrections log: {len(records):,} corrections from {settings.topics.audit!r}",
        file=sys.stderr,
    )
    return 0


def _write_corrections(command: str, corrections: list[Any], output: Output) -> None:
    """The corrections as a corrections file: to the output's file (all at once), or stdout."""
    with written(command, output) as out:
        for correction in corrections:
            out.write(orjson.dumps(correction_json(correction), option=orjson.OPT_APPEND_NEWLINE))


def cmd_resolve(args: argparse.Namespace) -> int:
    """A corrections file with its window voids as match ids, from the retained inputs."""
    from stream.corrections.corrections_file import read_corrections
    from stream.corrections.resolve import resolved
    from stream.history.retained import read_inputs

    reads = {"the corrections file it reads": args.file}
    setup = settings_and_out("corrections resolve", args, CORRECTIONS, reads)
    if setup is None:
        return 2
    settings, output = setup
    corrections = read_corrections(args.file)
    with Progress(None, "reading the retained inputs", unit="records") as bar:
        starts, finishes = asyncio.run(read_inputs(settings, counting(bar)))
    found = resolved(corrections, _finished(starts, finishes, settings), str(args.file))
    _write_corrections("corrections resolve", found, output)
    print(
        f"skillstream corrections resolve: {len(found):,} corrections, "
        f"from {len(finishes):,} retained finishes",
        file=sys.stderr,
    )
    return 0


def _finished(
    starts: list[tuple[int, bytes]], finishes: list[tuple[int, bytes]], settings: Any
) -> Iterator[tuple[str, str, float, frozenset[str]]]:
    from stream.events import EventError, decode_match_finished, decode_match_started

    teams: dict[str, frozenset[str]] = {}
    for _, raw in starts:
        try:
            started = decode_match_started(raw, settings.limits)
        except EventError:
            continue
        teams.setdefault(started.match_id, frozenset(p for t in started.teams for p in t))
    for _, raw in finishes:
        try:
            finished = decode_match_finished(raw, settings.limits)
        except EventError:
            continue
        players = (
            frozenset(p for t in finished.teams for p in t)
            if finished.teams is not None
            else teams.get(finished.match_id, frozenset())
        )
        yield finished.match_id, finished.mode, finished.finished_at, players


def cmd_cutover(args: argparse.Namespace) -> int:
    """The re-rated generation takes over rating-changed (stream/corrections/cutover.py)."""
    import signal

    from stream.corrections.cutover import cut_over

    settings = settings_or_none("corrections cutover")
    if settings is None:
        return 2
    if args.generation < 2:
        raise UserError(f"--generation: a re-rate's generation is 2 or more, got {args.generation}")

    async def run() -> int:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        return await cut_over(
            settings,
            shadow=args.shadow,
            group=args.group,
            generation=args.generation,
            reason=args.reason,
            stop=stop,
            follow=not args.no_follow,
            by=args.by or getpass.getuser(),
        )

    published = asyncio.run(run())
    print(f"skillstream corrections cutover: {published:,} records published", file=sys.stderr)
    return 0


def may_match_nothing(parser: argparse.ArgumentParser, who: str) -> None:
    parser.add_argument(
        "--may-match-nothing",
        action="store_true",
        help=f"the correction names {who}: applying it to a history where the player has no "
        "match is not refused (it is otherwise: a typo would do nothing, or invent a player)",
    )


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    actions = add_actions(
        sub, "corrections", "corrections of the past (void, adjust, erase, ban) and their audit log"
    )

    def common(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--reason", required=True, help="why (kept with the record)")
        parser.add_argument("--by", help="who decided (default: the user running this)")
        parser.add_argument("--id", help="the record's id (default: c-<time>-<random>)")
        parser.add_argument(
            "--publish",
            action="store_true",
            help="append it to the audit topic (SKILLSTREAM_TOPIC_AUDIT) before printing it",
        )
        parser.set_defaults(func=cmd_correction)

    void = actions.add_parser("void", help="matches that count as never played")
    void.add_argument("--matches", nargs="+", metavar="ID", help="the matches, by id")
    void.add_argument("--player", help="every match of this player in the window")
    void.add_argument("--from", dest="since", type=iso_date, metavar="TIME", help="window start")
    void.add_argument("--until", type=iso_date, metavar="TIME", help="window end (excluded)")
    void.add_argument("--mode", help="with --player: only this mode's matches")
    common(void)

    adjust = actions.add_parser("adjust", help="set or shift a player's rating in one mode")
    adjust.add_argument("mode", help="the game mode of the rating adjusted")
    adjust.add_argument("player", help="the player whose rating is adjusted")
    adjust.add_argument("--set", type=float, metavar="RATING", help="the new rating")
    adjust.add_argument("--shift", type=float, metavar="POINTS", help="points to add (or take)")
    adjust.add_argument(
        "--effective",
        type=iso_date,
        metavar="TIME",
        help="event time it applies at: matches before it are rated first (default: now)",
    )
    may_match_nothing(adjust, "a player with no match in MODE (who starts adjusted)")
    common(adjust)

    erase = actions.add_parser(
        "erase", help="forget a player: their id read as a pseudonym (SKILLSTREAM_PSEUDONYM_KEY)"
    )
    erase.add_argument("player", help="the player erased: replaced by a keyed pseudonym everywhere")
    may_match_nothing(erase, "a player of another deployment or history")
    common(erase)

    _add_ban(actions, common)

    log = actions.add_parser(
        "log", help="the audit topic's corrections as a corrections file (JSON lines)"
    )
    add_jsonl_out(log)
    log.set_defaults(func=cmd_log)

    resolve = actions.add_parser(
        "resolve",
        help="a corrections file with voids by player and window as match ids (retained inputs)",
    )
    resolve.add_argument("file", type=Path, help="the corrections file (corrections log --out)")
    add_jsonl_out(resolve)
    resolve.set_defaults(func=cmd_resolve)

    _add_cutover(actions)


def _add_ban(
    actions: argparse._SubParsersAction[argparse.ArgumentParser],
    common: Callable[[argparse.ArgumentParser], None],
) -> None:
    ban = actions.add_parser(
        "ban",
        help="a cheater's matches refunded to those they beat (or voided) from a time on",
    )
    ban.add_argument("mode", help="the game mode the player is banned in")
    ban.add_argument("player", help="the player banned")
    ban.add_argument(
        "--since",
        type=iso_date,
        metavar="TIME",
        required=True,
        help="their matches that finished from this time on are refunded or voided",
    )
    ban.add_argument(
        "--until", type=iso_date, metavar="TIME", help="window end, excluded (default: now)"
    )
    ban.add_argument(
        "--policy",
        choices=("refund", "void"),
        default="refund",
        help="refund: their results and those of the players they beat undone, the others "
        "kept (default); void: the matches count as never played, for everyone",
    )
    common(ban)


def _add_cutover(actions: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    cutover = actions.add_parser(
        "cutover",
        help="a re-rating deployment's shadow topic takes over rating-changed (runs until stopped)",
    )
    cutover.add_argument("--shadow", required=True, help="the re-rating deployment's output topic")
    cutover.add_argument("--group", required=True, help="the re-rating deployment's app id")
    cutover.add_argument(
        "--generation", type=int, required=True, help="this re-rate's generation (2, then 3...)"
    )
    cutover.add_argument("--reason", required=True, help="why (carried by every correction)")
    cutover.add_argument("--by", help="who, for the audit record (default: the current user)")
    cutover.add_argument(
        "--no-follow",
        action="store_true",
        help="stop once the shadow's past is copied (default: go on copying until stopped)",
    )
    cutover.set_defaults(func=cmd_cutover)
