"""A batch's outbox as the records that go out: commands packed per destination partition,
rating changes keyed by player, dead letters fitted to the record limit, and identical commands
delivered again and again counted (stream/pipeline/repeats.py).

The runner (stream/pipeline/batches.py) hands these records to the delivery port (step 2 of
the commit protocol, stream/commits.py) and says which were delivered. Pure but for the
repeats' memory and the logs; replay: the same outbox gives the same bytes.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence

import orjson

from stream.config.settings import Settings
from stream.deadletters import Origin
from stream.delivery import OutRecord, letter_record
from stream.pipeline.outbox import Outbox
from stream.pipeline.repeats import RepeatedCommands
from stream.protocol import (
    Abandon,
    Cancel,
    Combined,
    Command,
    Join,
    PlayerReport,
    Rate,
    Report,
    Snapshot,
    Tick,
    View,
    encode_command,
)

__all__ = ["MAX_PACKED_BYTES", "Outputs", "command_match_id", "log_context", "pack"]

log = logging.getLogger("skillstream.worker")

# One packed message stays well under the producer's record limit (a quarter of it at most).
MAX_PACKED_BYTES = 256 * 1024
# The event-time protocol's commands: left out of the repeats' count.
CONTROL = (Report, PlayerReport, View, Combined, Tick)
# A repeated command is logged at most this often.
REPEAT_LOG_SECONDS = 60.0


def pack(commands: Sequence[bytes], budget: int = MAX_PACKED_BYTES) -> list[bytes]:
    """Commands (each already JSON) as JSON arrays of at most about ``budget`` bytes each (a
    larger command alone)."""
    messages: list[bytes] = []
    chunk: list[bytes] = []
    size = 0
    for encoded in commands:
        if chunk and size + len(encoded) > budget:
            messages.append(b"[" + b",".join(chunk) + b"]")
            chunk, size = [], 0
        chunk.append(encoded)
        size += len(encoded) + 1
    if chunk:
        messages.append(b"[" + b",".join(chunk) + b"]")
    return messages


def log_context(origin: Origin, key: bytes | None) -> dict[str, object]:
    """Log fields that find the event again (JSON logs); input events are keyed by match id."""
    return {
        "topic": origin.topic,
        "partition": origin.partition,
        "offset": origin.offset,
        "match_id": None if key is None else key.decode("utf-8", "replace")[:200],
    }


class Outputs:
    """Turns outboxes into records, remembering what was delivered to count repeats."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        # Identical commands delivered again and again are counted (a loop shows there).
        self.repeats = RepeatedCommands()
        self._repeat_said = -REPEAT_LOG_SECONDS
        self.pack_budget = min(MAX_PACKED_BYTES, settings.kafka.max_request_bytes // 4)

    def records(
        self, out: Outbox, *, after: bool = False
    ) -> tuple[list[OutRecord], list[tuple[int, bytes]]]:
        """The records to send for ``out`` (``after``: its second send, the commands that go
        once the broker has the rest), and the commands among them (destination partition,
        bytes) to report as delivered once the broker has them."""
        s = self.settings
        records: list[OutRecord] = []
        outgoing: list[tuple[str, Mapping[int, Sequence[Command]]]] = (
            [(s.match_commands_topic, out.after)]
            if after
            else [
                (s.player_commands_topic, out.player_commands),
                (s.match_commands_topic, out.match_commands),
            ]
        )
        sent: list[tuple[int, bytes]] = []
        for topic, by_partition in outgoing:
            for partition, commands in by_partition.items():
                encoded = []
                for command in commands:
                    data = orjson.dumps(encode_command(command))
                    encoded.append(data)
                    if isinstance(command, CONTROL):
                        # Event time's promises: the same bytes again say nothing new and
                        # change nothing (a frozen clock repeats them); never a loop's.
                        continue
                    sent.append((partition, data))
                    if self.repeats.repeated(partition, data):
                        out.count("repeated_commands")
                        self._repeated(command, data)
                for value in pack(encoded, self.pack_budget):
                    records.append(OutRecord(topic, None, value, partition))
        if after:
            return records, sent
        for event in out.ratings:
            key = event["player_id"].encode()
            records.append(OutRecord(s.topics.rating_changed, key, orjson.dumps(event)))
        for letter in out.dead_letters:
            log.warning(
                "dead-lettered %s[%d]@%d: %s",
                letter.origin.topic,
                letter.origin.partition,
                letter.origin.offset,
                letter.reason[:200],
                extra={**log_context(letter.origin, letter.key), "reason": letter.reason[:1000]},
            )
            records.append(letter_record(s.topics.dead_letter, letter, s.kafka.max_request_bytes))
        return records, sent

    def delivered(self, sent: list[tuple[int, bytes]]) -> None:
        """The broker has these commands (:meth:`records`' second half)."""
        self.repeats.delivered(sent)

    def _repeated(self, command: Command, data: bytes) -> None:
        """Say that a command goes out once more: the first, then at most once a minute (a
        loop repeats many)."""
        now = time.monotonic()
        if now < self._repeat_said + REPEAT_LOG_SECONDS:
            return
        self._repeat_said = now
        log.warning(
            "a command delivered %d times already goes out again (counted as "
            "repeated_commands; a loop if the count keeps rising): %s",
            self.repeats.limit,
            data[:300].decode("utf-8", "replace"),
            extra={"match_id": command_match_id(command)},
        )


def command_match_id(command: Command) -> str | None:
    """The match a command is about (for the logs), if it names one."""
    if isinstance(command, Snapshot | Abandon | Join | Rate | Cancel):
        return command.match_id
    return None
