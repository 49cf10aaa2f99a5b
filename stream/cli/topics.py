"""`skillstream topics create [--dry-run]`: provision every topic from the worker's settings.

Idempotent: existing topics are left as they are (a wrong partition count is an error, since
matches and players would be looked for on the wrong partitions); only missing ones are created.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

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
    if args.dry_run:
        print(f"would ensure on {settings.kafka.bootstrap_servers}:")
        for spec in specs:
            print(f"  {_describe(spec)}")
        return 0
    try:
        created = set(asyncio.run(ensure_topics(settings, specs)))
    except TopicError as exc:
        print(f"skillstream topics create: error: {exc}", file=sys.stderr)
        return 1
    for spec in specs:
        state = "created" if spec.name in created else "exists "
        print(f"{state}  {_describe(spec)}")
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    actions = add_actions(sub, "topics", "Kafka topics: create every topic the workers use")
    create = actions.add_parser(
        "create", help="create the missing topics (partitions, replication, configs from settings)"
    )
    create.add_argument("--dry-run", action="store_true", help="print the plan, connect to nothing")
    create.set_defaults(func=cmd_topics_create)
