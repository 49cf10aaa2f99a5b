"""Sending a batch's outputs so that no record can take the others with it: the one sender of
the rating agents (packed commands, rating-changed, dead letters) and of the cache feed (its
dead letters).

A batch's outputs go out together and the batch waits until Kafka has every one of them. Two
kinds of failure are told apart:

- A record Kafka will never take (too large for the producer's ``max_request_size`` or the
  broker's ``message.max.bytes``): only that record is affected. An output becomes a dead
  letter with its bytes (cut to fit, marked as cut) and the reason; a dead letter that is still
  refused is cut again to half the size, down to :data:`MIN_LETTER_BYTES`. The other records
  of the batch are sent as usual.
- Anything else (broker unreachable, leader moving, timeouts): the records that failed are sent
  again with backoff (0.1 s doubling to 5 s) until Kafka has them. The batch waits; nothing is
  acked meanwhile. One warning when the outage starts, one when it ends.

Replay: sending a record again is harmless, every consumer of these topics is idempotent
(commands and rating changes are recognised by their match and version; dead letters may
repeat). Cancellation (the worker stops, a rebalance) propagates at once; the caller withholds
the batch's acks, so the batch is read again by whoever owns its partitions next. A caller that
stops by an event instead (the cache feed) passes it: set while Kafka is failing, the delivery
gives up with :class:`DeliveryStoppedError` and the batch stays uncommitted.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from aiokafka.errors import MessageSizeTooLargeError, RecordListTooLargeError, RecordTooLargeError

from stream.deadletters import DeadLetter, Origin
from stream.ratings.fastinit import fast_init
from stream.retry import Backoff, Outage

log = logging.getLogger("skillstream.worker")

# How long the acknowledgements of a batch may take before the wait is reported as an outage.
SLOW_ACK_SECONDS = 10.0
# A dead letter is never cut below this; one refused even so is logged with its origin.
MIN_LETTER_BYTES = 4096

# (topic, key, value, partition, timestamp, headers) -> a future of the record's metadata:
# the signature of Faust's producer.send.
Send = Callable[..., Awaitable[Awaitable[Any]]]


@fast_init
@dataclass(frozen=True, slots=True)
class OutRecord:
    """One record to send. ``letter`` is set for dead letters (so they can be cut again)."""

    topic: str
    key: bytes | None
    value: bytes | None
    partition: int | None = None
    headers: list[tuple[str, bytes]] | None = None
    letter: DeadLetter | None = None
    limit: int = 0  # the size the dead letter was fitted to


def too_large(exc: BaseException) -> bool:
    """Whether ``exc`` (or the Kafka error Faust wrapped in it) refuses a record for its size."""
    refusals = (MessageSizeTooLargeError, RecordTooLargeError, RecordListTooLargeError)
    return isinstance(exc, refusals) or isinstance(exc.__cause__, refusals)


def letter_record(topic: str, letter: DeadLetter, limit: int) -> OutRecord:
    """A dead letter as one record of at most ``limit`` bytes (cut and marked if needed)."""
    key, value, headers = letter.fitted(limit)
    return OutRecord(topic, key, value, None, headers, letter, limit)


class DeliveryStoppedError(Exception):
    """The caller's stop event was set while records still waited for Kafka."""


class Delivery:
    """Sends records with ``send`` (Faust's producer) under the rules of this module."""

    def __init__(
        self,
        send: Send,
        dead_letter_topic: str,
        max_request_bytes: int,
        name: str = "outputs",
        crash_point: Callable[[str], None] = lambda point: None,
    ) -> None:
        self.send = send
        # The soak harness's crash point between sending and the acks (pipeline/crashpoints.py).
        self.crash_point = crash_point
        self.dead_letter_topic = dead_letter_topic
        self.max_request_bytes = max_request_bytes
        self.outage = Outage(f"{name}: Kafka send failed")
        self.acks = Outage(f"{name}: Kafka is slow to acknowledge")
        self.rejected = 0  # records Kafka refused for their size, over the process's life

    async def deliver(
        self, records: Sequence[OutRecord], stop: asyncio.Event | None = None
    ) -> list[DeadLetter]:
        """Send ``records`` and return once Kafka has all of them (or their dead letters).

        Returns the dead letters made of outputs Kafka refused, for the caller's counts.
        DeliveryStoppedError if ``stop`` is set while a failure is being retried.
        """
        todo = list(records)
        made: list[DeadLetter] = []
        backoff = Backoff()
        while todo:
            again: list[OutRecord] = []
            waiting: list[tuple[OutRecord, Awaitable[Any]]] = []
            error: BaseException | None = None
            for record in todo:
                try:
                    future = await self.send(
                        record.topic,
                        record.key,
                        record.value,
                        record.partition,
                        None,
                        record.headers,
                    )
                except Exception as exc:
                    error = self._failed(record, exc, again, made) or error
                    continue
                waiting.append((record, future))
            self.crash_point("delivering")
            for (record, _), outcome in zip(waiting, await self._outcomes(waiting), strict=True):
                if isinstance(outcome, Exception):
                    error = self._failed(record, outcome, again, made) or error
            if error is not None:
                self.outage.failed(repr(error))
                await backoff.wait(stop)
                if stop is not None and stop.is_set():
                    raise DeliveryStoppedError(f"{len(again)} record(s) not delivered")
            todo = again
        self.outage.recovered()
        return made

    async def _outcomes(
        self, waiting: list[tuple[OutRecord, Awaitable[Any]]]
    ) -> list[BaseException | Any]:
        futures = [asyncio.ensure_future(future) for _, future in waiting]
        if not futures:
            return []
        _, slow = await asyncio.wait(futures, timeout=SLOW_ACK_SECONDS)
        if slow:
            self.acks.failed(f"{len(slow)} record(s) waiting for {SLOW_ACK_SECONDS:g} s")
            await asyncio.wait(slow)
            self.acks.recovered()
        return [f.exception() or f.result() for f in futures]

    def _failed(
        self,
        record: OutRecord,
        exc: Exception,
        again: list[OutRecord],
        made: list[DeadLetter],
    ) -> Exception | None:
        """Queue what to send instead of ``record``; the error if it is worth a retry."""
        if not too_large(exc):
            again.append(record)
            return exc
        self.rejected += 1
        letter = record.letter
        if letter is None:
            origin = Origin(record.topic, -1 if record.partition is None else record.partition, -1)
            letter = DeadLetter(record.key, record.value, origin, f"output refused: {exc!r}")
            made.append(letter)
            again.append(letter_record(self.dead_letter_topic, letter, self.max_request_bytes))
            return None
        # The broker's limit is lower than ours (message.max.bytes below max_request_size).
        smaller = record.limit // 2
        if smaller < MIN_LETTER_BYTES:
            log.error(
                "dead letter from %s[%d]@%d refused by Kafka even at %d bytes (%r); reason: %s",
                letter.origin.topic,
                letter.origin.partition,
                letter.origin.offset,
                record.limit,
                exc,
                letter.reason,
            )
            return None
        again.append(letter_record(record.topic, letter, smaller))
        return None
