"""Dead letters: an input a consumer cannot use, with its original bytes, where it came from
and why, sized to fit one Kafka record.

Shared by the rating agents (stream/pipeline/) and the cache feed (stream/cache/), which both
send what they cannot use to the dead-letter topic. No I/O here: sending is the caller's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from aiokafka.record.default_records import DefaultRecordBatchBuilder

from stream.ratings.fastinit import fast_init

# A reason is a sentence; one quoting an attacker's multi-megabyte value is cut to this.
MAX_REASON_BYTES = 1024

TRUNCATED = "skillstream.error.truncated"
SOURCE_SIZE = "skillstream.source.size"
SOURCE_KEY_SIZE = "skillstream.source.key-size"

# A reason's kind, for the ``reason`` label of the dead-letter metrics: the reason itself is a
# sentence quoting the bad value, far too many distinct values for a label. First match wins;
# what matches none is a field with a wrong value ("invalid_field").
REASON_KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("internal_error", re.compile(r"internal error")),
    ("output_refused", re.compile(r"output refused")),
    ("too_large", re.compile(r"over the limit of \d+ bytes")),
    ("not_json", re.compile(r"not valid JSON|expected a JSON (object|array)")),
    (
        "missing_field",
        re.compile(r"required field is missing|missing field|field '[^']*' is missing"),
    ),
    ("unknown_mode", re.compile(r"not in the modes file")),
    ("future_time", re.compile(r"ahead of the worker's clock")),
    ("no_start", re.compile(r"no match-started arrived")),
    ("mismatch", re.compile(r"differs? from the match-started")),
)
OTHER_REASON = "invalid_field"


def reason_kind(reason: str) -> str:
    """The kind of a dead letter's ``reason`` (one of :data:`REASON_KINDS`' names or
    ``invalid_field``): a bounded label for metrics."""
    for kind, pattern in REASON_KINDS:
        if pattern.search(reason):
            return kind
    return OTHER_REASON


def record_bytes(key: bytes | None, value: bytes | None, headers: list[tuple[str, bytes]]) -> int:
    """The size of a record alone in its batch, exactly as the producer checks it against its
    ``max_request_size`` (and as the broker checks the batch against ``message.max.bytes``)."""
    size: int = DefaultRecordBatchBuilder.estimate_size_in_bytes(key, value, headers)
    return size


@fast_init
@dataclass(frozen=True, slots=True)
class Origin:
    """Where an input came from: enough to find it again in Kafka."""

    topic: str
    partition: int
    offset: int
    timestamp_ms: int | None = None


@fast_init
@dataclass(frozen=True, slots=True)
class DeadLetter:
    """An input the worker cannot use, with its original bytes and why."""

    key: bytes | None
    value: bytes | None
    origin: Origin
    reason: str

    def headers(self) -> list[tuple[str, bytes]]:
        """Kafka headers naming the source and the reason (the value stays the original bytes)."""
        reason = self.reason.encode(errors="replace")
        if len(reason) > MAX_REASON_BYTES:
            reason = reason[: MAX_REASON_BYTES - 3].decode(errors="ignore").encode() + b"..."
        headers = [
            ("skillstream.error.reason", reason),
            ("skillstream.source.topic", self.origin.topic.encode()),
            ("skillstream.source.partition", str(self.origin.partition).encode()),
            ("skillstream.source.offset", str(self.origin.offset).encode()),
        ]
        if self.origin.timestamp_ms is not None:
            headers.append(("skillstream.source.timestamp", str(self.origin.timestamp_ms).encode()))
        return headers

    def fitted(self, limit: int) -> tuple[bytes | None, bytes | None, list[tuple[str, bytes]]]:
        """Key, value and headers of this dead letter as one record of at most ``limit`` bytes.

        Whole when it fits. Otherwise the headers stay whole (reason, origin), three more say
        that it was cut (``skillstream.error.truncated: true``) and the original value and key
        sizes, and the value and key keep their first bytes: the key whole if the value leaves
        room for it, else each half of the room. ValueError if the headers alone exceed
        ``limit`` (a limit far below any real broker's).
        """
        key, value = self.key, self.value
        headers = self.headers()
        if record_bytes(key, value, headers) <= limit:
            return key, value, headers
        headers += [
            (TRUNCATED, b"true"),
            (SOURCE_SIZE, str(len(value or b"")).encode()),
            (SOURCE_KEY_SIZE, str(len(key or b"")).encode()),
        ]
        # Each length is a varint of at most 5 bytes in the record; empty fields count 1.
        room = limit - record_bytes(b"", b"", headers) - 8
        if room < 0:
            raise ValueError(f"a dead letter's headers alone exceed {limit} bytes")
        key_len, value_len = len(key or b""), len(value or b"")
        keep_key = min(key_len, max(room - value_len, room // 2))
        keep_value = min(value_len, room - keep_key)
        cut_key = None if key is None else key[:keep_key]
        cut_value = None if value is None else value[:keep_value]
        return cut_key, cut_value, headers
