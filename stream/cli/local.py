"""`skillstream local up / down`: the embedded Tansu + Valkey stack on loopback.

``up`` runs in the foreground until Ctrl-C or SIGTERM and stops both servers on the way out;
``up --detach`` leaves them running and records their process ids in a state file, which
``down`` reads to stop exactly those processes (after checking each still runs the binary it
started, so a reused pid is never signalled). A second ``up --detach`` while the recorded stack
still runs is refused: overwriting the state file would leave that stack for ever.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from pathlib import Path

import orjson

from stream.cli.arguments import port_or_zero
from stream.cli.subcommands import add_actions
from stream.errors import UserError
from stream.local.stack import LocalStack, StackError, environment

DEFAULT_STATE = Path(".skillstream/local.json")


def _exports(stack: LocalStack) -> str:
    """What a worker needs for this stack (environment() less what the shell has already)."""
    settings = environment(stack)
    return "".join(
        f"export {name}={value}\n"
        for name, value in settings.items()
        if os.environ.get(name) != value
    )


def _running(entry: dict[str, object]) -> bool:
    """Whether the recorded process still runs the binary it was started from."""
    try:
        return os.path.realpath(f"/proc/{int(str(entry['pid']))}/exe") == str(entry["exe"])
    except (OSError, KeyError, ValueError):
        return False


def _recorded(state_file: Path) -> list[dict[str, object]]:
    """The processes a state file records (none if it is missing or unreadable)."""
    try:
        processes = orjson.loads(state_file.read_bytes())["processes"]
    except (OSError, orjson.JSONDecodeError, KeyError, TypeError):
        return []
    return [p for p in processes if isinstance(p, dict)] if isinstance(processes, list) else []


def cmd_up(args: argparse.Namespace) -> int:
    if args.detach:
        alive = [p for p in _recorded(args.state_file) if _running(p)]
        if alive:
            names = ", ".join(f"{p['name']} pid {p['pid']}" for p in alive)
            raise UserError(
                f"--state-file {args.state_file}: the stack it records still runs ({names}); "
                f"stop it first (skillstream local down --state-file {args.state_file}) "
                "or give another --state-file"
            )
    stack = LocalStack(args.kafka_port, args.redis_port)
    try:
        stack.start()
    except StackError as exc:
        print(f"skillstream local up: error: {exc}", file=sys.stderr)
        return 1
    sys.stdout.write(_exports(stack))
    sys.stdout.flush()
    if args.detach:
        state = {
            "kafka_bootstrap_servers": stack.bootstrap_servers,
            "redis_url": stack.redis_url,
            "processes": [
                {"name": s.name, "pid": s.process.pid, "exe": os.path.realpath(s.binary)}
                for s in stack.servers
            ],
        }
        args.state_file.parent.mkdir(parents=True, exist_ok=True)
        args.state_file.write_bytes(orjson.dumps(state, option=orjson.OPT_INDENT_2))
        print(
            f"# running detached; stop with: skillstream local down --state-file {args.state_file}"
        )
        return 0
    stopped = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: stopped.set())
    print("# local stack up; Ctrl-C stops it", file=sys.stderr)
    try:
        while not stopped.wait(0.5):
            if any(s.process.poll() is not None for s in stack.servers):
                print("skillstream local up: a server exited; stopping", file=sys.stderr)
                return 1
    finally:
        stack.stop()
    return 0


def cmd_down(args: argparse.Namespace) -> int:
    if not args.state_file.exists():
        print(f"skillstream local down: nothing recorded in {args.state_file}", file=sys.stderr)
        return 0
    for entry in _recorded(args.state_file):
        if not _running(entry):
            continue  # gone, or the pid now belongs to another program
        pid = int(str(entry["pid"]))
        os.kill(pid, signal.SIGTERM)
        print(f"stopped {entry['name']} (pid {pid})")
    args.state_file.unlink()
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    actions = add_actions(sub, "local", "the embedded Kafka (Tansu) + Redis (Valkey) stack")
    up = actions.add_parser("up", help="start the stack on free loopback ports")
    up.add_argument("--kafka-port", type=port_or_zero, default=0, help="default: a free port")
    up.add_argument("--redis-port", type=port_or_zero, default=0, help="default: a free port")
    up.add_argument("--detach", action="store_true", help="leave it running and return")
    _add_state_file(up, "where the servers started are noted for local down")
    up.set_defaults(func=cmd_up)
    down = actions.add_parser("down", help="stop a detached stack")
    _add_state_file(down, "the servers to stop, as local up wrote them")
    down.set_defaults(func=cmd_down)


def _add_state_file(parser: argparse.ArgumentParser, what: str) -> None:
    """``--state-file``, which local up writes and local down reads: ``what`` it is to the
    action, then its default."""
    parser.add_argument(
        "--state-file", type=Path, default=DEFAULT_STATE, help=f"{what} (default {DEFAULT_STATE})"
    )
