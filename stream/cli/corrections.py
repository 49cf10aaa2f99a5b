"""`skillstream corrections void | adjust | erase`: write one correction record.

Each prints the record as one JSON line (append it to the corrections file that ``skillstream
replay --corrections`` reads), after the same checks the readers make, so a record these
commands print is always accepted. ``by`` defaults to the user running the command, ``at`` to
now (the only wall clock in the corrections: it records when the decision was made; what a
correction does never depends on it). What each correction does and what it cannot undo:
docs/operations.md#correcting-the-past.
"""

from __future__ import annotations

import argparse
import getpass
import secrets
import sys
import time
from typing import Any

import orjson

from stream.cli.arguments import iso_date
from stream.corrections.pseudonyms import pseudonym, pseudonym_key
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
        record["set" if args.set is not None else "shift"] = (
            args.set if args.set is not None else args.shift
        )
        record["effective"] = format_time(now if args.effective is None else args.effective)
    else:
        record["pseudonym"] = pseudonym(pseudonym_key(), args.player)
    try:
        checked = correction_json(parse_correction(record))
    except ValueError as exc:
        raise UserError(f"{args.action}: {exc}") from None
    sys.stdout.write(orjson.dumps(checked).decode() + "\n")
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    corrections = sub.add_parser(
        "corrections",
        help="write a correction record: void matches, adjust a rating, erase a player",
    )
    actions = corrections.add_subparsers(dest="action", required=True, metavar="ACTION")

    def common(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--reason", required=True, help="why (kept with the record)")
        parser.add_argument("--by", help="who decided (default: the user running this)")
        parser.add_argument("--id", help="the record's id (default: c-<time>-<random>)")
        parser.set_defaults(func=cmd_correction)

    void = actions.add_parser("void", help="matches that count as never played")
    void.add_argument("--matches", nargs="+", metavar="ID", help="the matches, by id")
    void.add_argument("--player", help="every match of this player in the window")
    void.add_argument("--from", dest="since", type=iso_date, metavar="TIME", help="window start")
    void.add_argument("--until", type=iso_date, metavar="TIME", help="window end (excluded)")
    void.add_argument("--mode", help="with --player: only this mode's matches")
    common(void)

    adjust = actions.add_parser("adjust", help="set or shift a player's rating in one mode")
    adjust.add_argument("mode")
    adjust.add_argument("player")
    adjust.add_argument("--set", type=float, metavar="RATING", help="the new rating")
    adjust.add_argument("--shift", type=float, metavar="POINTS", help="points to add (or take)")
    adjust.add_argument(
        "--effective",
        type=iso_date,
        metavar="TIME",
        help="event time it applies at: matches before it are rated first (default: now)",
    )
    common(adjust)

    erase = actions.add_parser(
        "erase", help="forget a player: their id read as a pseudonym (SKILLSTREAM_PSEUDONYM_KEY)"
    )
    erase.add_argument("player")
    common(erase)
