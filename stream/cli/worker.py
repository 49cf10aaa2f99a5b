"""`skillstream worker`: one Faust worker of the live pipeline, configured from the environment.

It creates the missing topics, then runs until SIGINT or SIGTERM; on either it stops
consuming, finishes the batch in hand, flushes the producer and commits, then exits.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import logging
import socket
import sys

from stream.cli.environment import settings_or_none
from stream.config.settings import Settings
from stream.errors import UserError
from stream.pipeline.topics import TopicError, ensure_topics, worker_optional_topics


def check_web_address(settings: Settings) -> None:
    """Listen on the web pages' address once, now: Faust finds a port in use or an address
    not on this machine only after joining the group, and dies with a traceback."""
    if settings.worker.web_port is None:
        return
    address = (settings.worker.web_bind, settings.worker.web_port)
    family = socket.AF_INET6 if ":" in settings.worker.web_bind else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            # As aiohttp listens: a port left in TIME_WAIT by a previous worker is free.
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(address)
    except OSError as exc:
        raise UserError(
            f"SKILLSTREAM_WEB_PORT={settings.worker.web_port},"
            f" SKILLSTREAM_WEB_BIND={settings.worker.web_bind}:"
            f" cannot listen there ({exc.strerror or exc})"
        ) from None


def run_worker(settings: Settings, loglevel: str = "info") -> int:
    """Create topics and run a worker in this process until it is stopped: the rating app and,
    with SKILLSTREAM_CACHE_WRITER=worker, the cache feed beside it as a sibling service (its own
    consumer group; the rating app knows nothing of Redis, its metrics read the feed's figures).

    The web pages' address must be free, and Kafka, and Redis when this worker writes the
    cache, must answer at start (a UserError otherwise: one line, exit code 2); a Kafka outage
    after that is waited out, not fatal."""
    import faust
    import uvloop

    from stream.access.kafka import grants
    from stream.access.preflight import check_grants
    from stream.cache.access import check_writer_access
    from stream.cache.service import CacheFeedService
    from stream.corrections.inputs import load_input_corrections
    from stream.pipeline.app import build_worker
    from stream.pipeline.logs import logging_config

    # A mistake in the file is the user's: said before any server is asked anything.
    load_input_corrections(settings.corrections_file, settings.load_modes())
    check_web_address(settings)
    if settings.cache.writer == "worker":
        check_writer_access(settings)
    # The grants first: a topic the principal may not see would otherwise look missing.
    asyncio.run(check_grants(settings, grants(settings, "worker")))
    created = asyncio.run(ensure_topics(settings, optional=worker_optional_topics(settings)))
    if created:
        logging.getLogger("skillstream.worker").info("created topics: %s", ", ".join(created))
    asyncio.set_event_loop_policy(uvloop.EventLoopPolicy())
    asyncio.set_event_loop(asyncio.new_event_loop())
    pipeline = build_worker(settings)
    siblings = []
    if settings.cache.writer == "worker":
        cache = CacheFeedService(settings)
        pipeline.metrics.watch_cache(lambda: cache.stats)
        siblings.append(cache)
    # The libraries' objects live as long as the process: keep them out of every collection,
    # and collect the young generation less often (each batch allocates thousands of objects).
    gc.collect()
    gc.freeze()
    gc.set_threshold(20_000, 20, 20)
    worker = faust.Worker(
        pipeline.app,
        *siblings,
        loglevel=loglevel,
        quiet=True,
        logging_config=logging_config(loglevel, settings.log_format),
    )
    worker.execute_from_commandline()
    return 0


def cmd_worker(args: argparse.Namespace) -> int:
    settings = settings_or_none("worker")
    if settings is None:
        return 2
    try:
        return run_worker(settings, args.loglevel)
    except TopicError as exc:
        print(f"skillstream worker: error: {exc}", file=sys.stderr)
        return 1


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    worker = sub.add_parser(
        "worker",
        help="run a live-pipeline worker (settings from KAFKA_BOOTSTRAP_SERVERS, REDIS_URL, "
        "SKILLSTREAM_*)",
    )
    worker.add_argument(
        "--loglevel",
        default="info",
        choices=["debug", "info", "warning", "error"],
        help="the least severe log lines written (default info)",
    )
    worker.set_defaults(func=cmd_worker)
