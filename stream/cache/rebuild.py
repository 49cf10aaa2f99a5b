"""`skillstream cache rebuild`: fill Redis from the rating state itself.

The source is the ratings table's changelog topic: compacted, keyed by (player, mode), each
record the player's whole state and version. So it holds every player's latest state for as long
as the deployment exists, unlike rating-changed, whose retention is bounded.

Safe while the live feed writes: every entry goes through the same versioned script, so a
rebuilt entry never replaces a newer one the feed wrote, and the feed's newer writes win over
whatever the rebuild wrote before them.

Seasons: an entry goes onto the boards of the season of its player's last match (from the
modes file), so an empty Redis gets back the current season's boards; the final standings of
past seasons are not in the changelog (only each player's latest state is) and are not rebuilt.

Failure: a Kafka or Redis error stops the rebuild with the error; running it again is safe (it
is idempotent) and starts over. Records that cannot be decoded are counted and skipped (they
are the worker's own writes; the count says if any exist).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import orjson
from aiokafka import AIOKafkaConsumer, TopicPartition

from stream.cache.entry import CachedRating
from stream.cache.writer import CacheWriter
from stream.config.modes import Modes
from stream.protocol import RATINGS, ProtocolError, decode_rating_key
from stream.protocol.checkpoints import is_checkpoint
from stream.reachability import missing_topic


@dataclass(frozen=True)
class RebuildReport:
    records: int  # changelog records read (latest and superseded ones)
    written: int  # entries the cache did not have at this version or newer
    stale: int  # entries the cache already had (the feed is current for them)
    skipped: int  # tombstones and undecodable records
    seconds: float


def entry_from_changelog(key: bytes | None, value: bytes | None) -> CachedRating | None:
    """The cache entry a ratings-changelog record stands for; None for a tombstone.

    Key and value as the player agent writes them: the JSON of ``rating_key`` and a
    :class:`RatingRecord` (stream/protocol/tables.py). ValueError if malformed.
    """
    if value is None:
        return None
    try:
        player_id, mode = decode_rating_key(orjson.loads(key or b""))
        record = RATINGS.value(value)
    except (orjson.JSONDecodeError, ProtocolError) as exc:
        raise ValueError(f"not a ratings-changelog record: {exc}") from None
    state = record.state
    return CachedRating.from_state(
        mode,
        player_id,
        state,
        games=state.games,
        version=record.version,
        updated_at_ms=0 if state.last_played is None else round(state.last_played * 1000),
        match_id=record.recent[-1] if record.recent else None,
    )


async def rebuild(
    writer: CacheWriter,
    bootstrap_servers: str,
    changelog_topic: str,
    *,
    batch_size: int = 2000,
    progress: Callable[[int, int], None] | None = None,
    client_options: dict[str, Any] | None = None,
    modes: Modes | None = None,
) -> RebuildReport:
    """Write every player's latest state in ``changelog_topic`` to the cache.

    Reads each partition from its start to the end offset it had when the rebuild began (records
    written later reach Redis through the live feed). ``progress(done, total)`` counts records.
    """
    started = time.monotonic()
    consumer = AIOKafkaConsumer(
        bootstrap_servers=bootstrap_servers,
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        fetch_max_wait_ms=50,
        **(client_options or {}),
    )
    await consumer.start()
    records = written = stale = skipped = 0
    try:
        # topics() refreshes the metadata, so a topic created a moment ago is found too.
        partitions = (
            consumer.partitions_for_topic(changelog_topic)
            if changelog_topic in await consumer.topics()
            else None
        )
        if not partitions:
            raise LookupError(f"{missing_topic(changelog_topic)} (no worker ran yet?)")
        tps = [TopicPartition(changelog_topic, p) for p in sorted(partitions)]
        consumer.assign(tps)
        await consumer.seek_to_beginning(*tps)
        starts = await consumer.beginning_offsets(tps)
        ends = await consumer.end_offsets(tps)
        total = sum(ends[tp] - starts[tp] for tp in tps)
        remaining = {tp for tp in tps if ends[tp] > starts[tp]}
        while remaining:
            batches = await consumer.getmany(*remaining, timeout_ms=500, max_records=batch_size)
            entries: list[CachedRating] = []
            for tp, batch in batches.items():
                for record in batch:
                    if is_checkpoint(record.key):
                        continue  # the table's bookkeeping, not a player
                    records += 1
                    try:
                        entry = entry_from_changelog(record.key, record.value)
                        if entry is not None:
                            writer.check(entry)
                            entry = _in_season(entry, modes)
                    except ValueError:
                        entry = None
                    if entry is None:
                        skipped += 1
                    else:
                        entries.append(entry)
                # A whole fetched batch is always used: some brokers report end offsets that
                # fall inside their last record batch (docs/decisions.md, known problems).
                if batch and batch[-1].offset + 1 >= ends[tp]:
                    remaining.discard(tp)
            if entries:
                result = await writer.write(entries)
                written += result.applied
                stale += result.stale
            if progress is not None:
                progress(records, max(total, records))
    finally:
        await consumer.stop()
    return RebuildReport(records, written, stale, skipped, time.monotonic() - started)


def _in_season(entry: CachedRating, modes: Modes | None) -> CachedRating:
    """``entry`` with the season of its last match, when its mode has seasons."""
    if modes is None or not entry.updated_at_ms or not modes.accepts(entry.mode):
        return entry
    seasons = modes.get(entry.mode).seasons
    if seasons is None:
        return entry
    return dataclasses.replace(entry, season=seasons.season_of(entry.updated_at_ms / 1000))
