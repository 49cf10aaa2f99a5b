"""Every ``SKILLSTREAM_*`` environment variable skillstream reads, and the one line said of one
it does not read (a typo runs with the default silently otherwise: ``SKILLSTREAM_PARITIONS=12``
ran with 8 partitions; issue 45).

A warning, not a refusal: a deployment's environment may hold a variable for a newer version
during a rollout. Said once per command, on stderr, with the closest name it may have meant.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping

__all__ = ["KNOWN", "PREFIX", "RETIRED", "unknown_variables"]

PREFIX = "SKILLSTREAM_"

# Read by the settings (stream/config/settings.py), the corrections (PSEUDONYM_KEY), the soak's
# crash points (CRASH_AT), a bench's Faust floor (FLOOR_EVENTS) and `cache acl` (REDIS_*_PASSWORD).
KNOWN = frozenset(
    {
        "SKILLSTREAM_APP_ID",
        "SKILLSTREAM_AUDIT_STORES",
        "SKILLSTREAM_BATCH_SIZE",
        "SKILLSTREAM_BATCH_WAIT_MS",
        "SKILLSTREAM_CACHE_CONSERVATIVE_K",
        "SKILLSTREAM_CACHE_HISTORY_LENGTH",
        "SKILLSTREAM_CACHE_INACTIVE_DAYS",
        "SKILLSTREAM_CACHE_PREFIX",
        "SKILLSTREAM_CACHE_SEASONS_KEPT",
        "SKILLSTREAM_CACHE_SEASON_GRACE_SECONDS",
        "SKILLSTREAM_CACHE_WRITER",
        "SKILLSTREAM_COMMIT_INTERVAL_SECONDS",
        "SKILLSTREAM_CONNECT_TIMEOUT_SECONDS",
        "SKILLSTREAM_CORRECTIONS_FILE",
        "SKILLSTREAM_CRASH_AT",
        "SKILLSTREAM_DATA_DIR",
        "SKILLSTREAM_EVENT_LATENESS_SECONDS",
        "SKILLSTREAM_FETCH_MAX_WAIT_MS",
        "SKILLSTREAM_FLOOR_EVENTS",
        "SKILLSTREAM_LOG_FORMAT",
        "SKILLSTREAM_MAX_EVENT_BYTES",
        "SKILLSTREAM_MAX_FUTURE_SECONDS",
        "SKILLSTREAM_MAX_ID_LENGTH",
        "SKILLSTREAM_MAX_PLAYERS",
        "SKILLSTREAM_MAX_REQUEST_BYTES",
        "SKILLSTREAM_MAX_TEAMS",
        "SKILLSTREAM_MODES_FILE",
        "SKILLSTREAM_PARTITIONS",
        "SKILLSTREAM_PROGRESS_SECONDS",
        "SKILLSTREAM_PSEUDONYM_KEY",
        "SKILLSTREAM_RECOVERY_CONSISTENCY_CHECK",
        "SKILLSTREAM_REDIS_MATCHMAKER_PASSWORD",
        "SKILLSTREAM_REDIS_WRITER_PASSWORD",
        "SKILLSTREAM_REPLICATION_FACTOR",
        "SKILLSTREAM_RETENTION_SECONDS",
        "SKILLSTREAM_SESSION_TIMEOUT_SECONDS",
        "SKILLSTREAM_STANDBY_REPLICAS",
        "SKILLSTREAM_STORE",
        "SKILLSTREAM_STUCK_SECONDS",
        "SKILLSTREAM_TICK_SECONDS",
        "SKILLSTREAM_TOPIC_AUDIT",
        "SKILLSTREAM_TOPIC_DLQ",
        "SKILLSTREAM_TOPIC_MATCH_FINISHED",
        "SKILLSTREAM_TOPIC_MATCH_STARTED",
        "SKILLSTREAM_TOPIC_RATING_CHANGED",
        "SKILLSTREAM_WEB_BIND",
        "SKILLSTREAM_WEB_PORT",
    }
)

# Variables earlier versions read, and why no longer.
RETIRED = {
    "SKILLSTREAM_VERIFY_END_OFFSETS": "every worker reads the changelogs' real ends now, whatever"
    " the broker (docs/decisions.md)",
}


def unknown_variables(env: Mapping[str, str]) -> list[str]:
    """One line for each ``SKILLSTREAM_*`` variable of ``env`` that skillstream does not read,
    with the known name closest to it, or why it is no longer read."""
    lines = []
    for name in sorted(n for n in env if n.startswith(PREFIX) and n not in KNOWN):
        if name in RETIRED:
            lines.append(f"{name} is no longer read: {RETIRED[name]}")
            continue
        # Compared without the shared prefix, which would make every name look close.
        tails = {known[len(PREFIX) :]: known for known in KNOWN}
        close = difflib.get_close_matches(name[len(PREFIX) :], tails, n=1, cutoff=0.75)
        hint = f"; did you mean {tails[close[0]]}?" if close else ""
        lines.append(f"{name} is set, but skillstream reads no such variable{hint}")
    return lines
