"""`skillstream topics create [--dry-run]`: provision every topic from the worker's settings.

Idempotent: existing topics are left as they are (a wrong partition count is an error, since
matches and players would be looked for on the wrong partitions); only missing ones are created.
With ``--principal ROLE=PRINCIPAL`` (repeatable) it also grants each named principal the Kafka
ACLs of its role (stream/access/kafka.py), after the topics; ``--dry-run`` prints both plans.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from stream.access.apply import AclError, apply_bindings
from stream.access.kafka import ROLES, bindings_for, parse_principals
from stream.cli.environment import settings_or_none
from stream.cli.subcommands import add_actions
from stream.pipeline.topics import TopicError, TopicSpec, ensure_topics, topic_specs


def _describe(spec: TopicSpec) -> str:
    config = ", ".join(f"{k}={v}" for k, v in sorted(spec.config.items()))
    return (
        f"{spec.name:<40} partitions {spec.partitions:>3}  replication {spec.replication_factor}"
        f"  {config}"
    )


def cmd_topics_create(args: argparse.Namespace) -> int:
    settings = settings_or_none("topics create", modes=False)
    if settings is None:
        return 2
    specs = topic_specs(settings)
    bindings = bindings_for(settings, parse_principals(args.principal), args.rerate_app_id)
    if args.dry_run:
        print(f"would ensure on {settings.kafka.bootstrap_servers}:")
        for spec in specs:
            print(f"  {_describe(spec)}")
        if bindings:
            print("would grant (Kafka ACLs, any host):")
            for binding in bindings:
                print(f"  {binding}")
        return 0
    try:
        created = set(asyncio.run(ensure_topics(settings, specs)))
    except TopicError as exc:
        print(f"skillstream topics create: error: {exc}", file=sys.stderr)
        return 1
    for spec in specs:
        state = "created" if spec.name in created else "exists "
        print(f"{state}  {_describe(spec)}")
    if not bindings:
        return 0
    try:
        asyncio.run(apply_bindings(settings, bindings))
    except AclError as exc:
        print(f"skillstream topics create: error: {exc}", file=sys.stderr)
        return 1
    for binding in bindings:
        print(f"granted  {binding}")
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    actions = add_actions(sub, "topics", "Kafka topics: create every topic the workers use")
    create = actions.add_parser(
        "create", help="create the missing topics (partitions, replication, configs from settings)"
    )
    create.add_argument("--dry-run", action="store_true", help="print the plan, connect to nothing")
    create.add_argument(
        "--principal",
        action="append",
        default=[],
        metavar="ROLE=PRINCIPAL",
        help=f"grant PRINCIPAL (e.g. User:game-servers) the Kafka ACLs of ROLE"
        f" ({', '.join(ROLES)}); repeatable; docs/operations.md#access-who-may-do-what",
    )
    create.add_argument(
        "--rerate-app-id",
        metavar="ID",
        help="the re-rating deployment's app id (the rerate role's topics and group, and what the"
        " operator role may read of it)",
    )
    create.set_defaults(func=cmd_topics_create)
