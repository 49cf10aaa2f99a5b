"""Records Faust's consumer fetched and did not hand on are read again.

What: Faust's consumer asks aiokafka, on its consumer thread, for the records of its *live* set
of active (not paused) partitions, and then hands on only the records of partitions still in
that set when it walks the batch; it also leaves the rest of a batch when the flow stops or the
group's generation changes. aiokafka has already moved every fetched partition's position past
the whole batch, so a record fetched and not handed on is never fetched again unless something
seeks its partition. Worse, aiokafka reads an empty set as "every partition", and the live set
goes empty while a fetch waits whenever a rebalance pauses everything: that fetch then drains
every assigned partition, paused or not. Faust seeks everything after a rebalance, but not
what it pauses and resumes while the flow runs: standby changelog partitions are sought to
their copies' offsets, paused while their ends are read and only then resumed, and the records
drained in between were lost. ``skillstream chaos --seed 7`` with standby copies showed it: a
worker's standby copy of ``matches[0]``, sought to 0 on its assignment, never got offsets 0-32
(fetched 11 ms after the seek with the live set empty, dropped by Faust's filter) and was
audited different from its changelog; the next take-over of that partition would have kept
the difference for good.

Fix (:func:`patch_unread`): the fetch gets a copy of the set taken when it starts (an empty copy
fetches nothing), and the records of a batch not handed on are *un-read*: each such partition
is sought back to its first record not handed on, on the consumer thread, if its position is
still the one the fetch left (the same aiokafka partition state, the same offset: a seek since
then, such as Faust's own after a rebalance, or a new assignment wins). The position is taken
on the consumer thread right after the fetch, not computed from the last record: on a compacted
changelog the position moves past a batch's last offset, which compaction keeps although it
removed that record. Once a partition has a record left in a batch, the rest of its records in
that batch are left too, so what is read again follows what was handed on, in order. The
un-read is queued on the consumer thread without waiting for it (ahead of the next fetch,
which is queued the same way): a rebalance that cancels the delivery loop cannot drop it. A
record handed on is one the consumer yielded to Faust's delivery loop; what that loop does
with it (its callback abandoned when a rebalance suspends the flow) is covered by the seeks
after that rebalance. Left open: a seek from the main thread (Faust's own, the watchdog's) that
lands between the un-read's check and its seek is overridden (the window is one statement on
the other thread; the watchdog reads a stalled partition again).

Second fix, in the same walk: a seek undone. Faust sets a partition's read offset from each
record it hands over and drops those below it, so after a seek through Faust's
``Consumer.seek`` (the batch runner reading a gap again, the stall watchdog) the records
fetched before it (past the gap) would raise the offset again and the records read again would
be dropped (seen after a fail-over, 2026-12-06: the gap sought again a second later). Now a
partition sought since its fetch began has the rest of its records in the batch left, as
above (their un-read finds the position moved by the seek and leaves it; after a seek that
aiokafka made before the fetch ran, it reads them again: one fetch more); and a seek made while
Faust delivered one of the partition's records, which Faust follows by setting the read offset
from that record, has the offset put back to the seek's when the walk resumes. Left open: a
seek made from the main thread between a fetch's end and the position noted after it on the
consumer thread is taken for the fetch's own, and the un-read overrides it (as it does one
between its own check and seek, above); the batch runner seeks a gap still there again after
0.2 s (stream/pipeline/positions.py).

Upstream: none found (faust-streaming's ``Consumer.getmany`` and aiokafka's
``Fetcher.fetched_records``; searched 2026-12-05).

Written for faust-streaming 0.15.3, aiokafka 0.14.0, mode-streaming 0.7.1.
tests/unit/pipeline/workarounds/test_unread.py checks which records are read again (a
partition sought midway, or while the fetch waits, hands on nothing more of its batch, and
its read offset stays the seek's; a failed seek's does not) and that
the patch replaces Faust's methods; tests/integration/pipeline/workarounds/test_unread_seek.py
un-reads on a real broker and checks that a seek since the fetch wins.

Failure: an error of the un-read is logged (a warning) and the partition goes on from where
the fetch left it, as without this patch; a consumer stopping or gone un-reads nothing.
Replay: the records un-read are fetched again and handed on in order, once; a record handed
on before is never un-read.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Iterable, Mapping, Sequence
from typing import Any

from aiokafka import AIOKafkaConsumer
from faust.transport.drivers import aiokafka as aiokafka_driver

__all__ = ["Fetched", "after_fetch", "not_handed_on", "patch_unread", "unread"]

log = logging.getLogger(__name__)

# The consumer's attribute holding its seeks (stream's own, not Faust's).
_SEEKS = "_skillstream_seeks"


class Seeks:
    """The seeks made through one consumer: how many were begun per partition, and the last
    one made (its number and offset)."""

    def __init__(self) -> None:
        self.count: dict[Any, int] = {}
        self.made: dict[Any, tuple[int, int]] = {}

    def begin(self, tp: Any) -> int:
        self.count[tp] = number = self.count.get(tp, 0) + 1
        return number

    def made_to(self, tp: Any) -> int | None:
        """The offset of the partition's last seek begun, if it was made (None: it failed)."""
        made = self.made.get(tp)
        return made[1] if made is not None and made[0] == self.count.get(tp) else None


# Partition -> (its aiokafka state object, its position) right after a fetch.
After = Mapping[Any, tuple[Any, int]]


class Fetched(dict[Any, Any]):
    """A fetch's records per partition, with where each partition's position was right after
    it (:attr:`after`), taken on the consumer thread."""

    def __init__(self, records: Mapping[Any, Any], after: After) -> None:
        super().__init__(records)
        self.after = after


def after_fetch(consumer: AIOKafkaConsumer, tps: Iterable[Any]) -> dict[Any, tuple[Any, int]]:
    """Each assigned partition's aiokafka state and position now (consumer thread only)."""
    subscription = consumer._subscription
    after = {}
    for tp in tps:
        if subscription.is_assigned(tp):
            state = subscription.subscription.assignment.state_value(tp)
            if state.has_valid_position:
                after[tp] = (state, state.position)
    return after


def not_handed_on(
    records: Mapping[Any, Sequence[Any]], handed: Mapping[Any, int]
) -> dict[Any, int]:
    """Per partition of a fetched batch whose records were not all handed on: the first offset
    not handed on. ``handed`` holds, per partition, the offset after the last record handed on
    (absent: none was)."""
    rest = {}
    for tp, batch in records.items():
        if not batch:
            continue
        first = handed.get(tp, batch[0].offset)
        if first <= batch[-1].offset:
            rest[tp] = first
    return rest


def unread(consumer: AIOKafkaConsumer, rest: Mapping[Any, int], after: After) -> list[Any]:
    """Seek each partition of ``rest`` back to its first offset not handed on if its state and
    position are still those ``after`` the fetch; returns the partitions sought. Call it on the
    consumer's own loop (Faust's consumer thread)."""
    now = after_fetch(consumer, [tp for tp in rest if tp in after])
    sought = []
    for tp, first in rest.items():
        if tp in now and now[tp][0] is after[tp][0] and now[tp][1] == after[tp][1]:
            consumer.seek(tp, first)
            sought.append(tp)
    return sought


def _unread_logged(consumer: AIOKafkaConsumer, rest: Mapping[Any, int], after: After) -> None:
    try:
        sought = unread(consumer, rest, after)
    except Exception as exc:  # the partition goes on as without the patch
        log.warning("could not read again records fetched and not handed on: %r", exc)
        return
    if sought and log.isEnabledFor(logging.DEBUG):
        log.debug("fetched, not handed on, read again: %s", _named(sought, rest))


def _named(sought: Iterable[Any], rest: Mapping[Any, int]) -> str:
    return ", ".join(f"{tp.topic}[{tp.partition}] from {rest[tp]}" for tp in sought)


def _schedule_unread(thread: Any, rest: Mapping[Any, int], after: After) -> None:
    # Queued, not awaited: a cancelled delivery loop cannot drop it, and the next fetch is
    # queued on the same loop after it.
    consumer = getattr(thread, "_consumer", None)
    loop = getattr(thread, "thread_loop", None)
    if consumer is None or loop is None or loop.is_closed():
        return
    loop.call_soon_threadsafe(_unread_logged, consumer, rest, after)


async def _handed_on(consumer: Any, timeout: float) -> AsyncGenerator[tuple[Any, Any], None]:
    """Faust's ``Consumer.getmany`` (faust-streaming 0.15.3), un-reading what it leaves."""
    seeks = _seeks(consumer)
    count = seeks.count
    seeks_before = dict(count)  # before the fetch: a seek while it waits counts too
    records, active_partitions = await consumer._wait_next_records(timeout)
    generation_id = consumer.app.consumer_generation_id
    if records is None or consumer.should_stop:
        return
    handed: dict[Any, int] = {}
    left: set[Any] = set()
    try:
        if not consumer.flow_active:
            await _seek_committed(consumer)
            return
        for tp, record in consumer.scheduler.iterate(records):
            if not consumer.flow_active or consumer.app.consumer_generation_id != generation_id:
                break
            if count.get(tp, 0) != seeks_before.get(tp, 0):
                # Sought since the fetch: what the batch holds of it is from before the seek.
                # Handed on, its offsets would raise Faust's read offset past the seek's and
                # the records read again would be dropped below it: the seek undone.
                left.add(tp)
            if tp not in left and (
                active_partitions is None
                or tp in active_partitions
                or tp in consumer._buffered_partitions
            ):
                consumer.app.monitor.track_tp_end_offset(tp, consumer.highwater(tp))
                # Counted before the yield: a record yielded is handed on even if the
                # delivery loop closes this generator right there.
                handed[tp] = record.offset + 1
                sought = count.get(tp, 0)
                yield tp, consumer._to_message(tp, record)
                if count.get(tp, 0) != sought:
                    _keep_seek(consumer, seeks, tp, record.offset, generation_id)
            else:
                left.add(tp)  # the rest of this partition's batch is read again, in order
    finally:
        rest = not_handed_on(records, handed)
        # A stopping consumer reads nothing again (its consumer may be gone already).
        if rest and not consumer.should_stop:
            _schedule_unread(consumer._thread, rest, getattr(records, "after", {}))


def _keep_seek(consumer: Any, seeks: Seeks, tp: Any, offset: int, generation_id: int) -> None:
    """``tp`` was sought while Faust delivered its record at ``offset``: if Faust then set the
    read offset from that record, over the seek's, put the seek's back (Faust would drop what
    is read again below it). Not after a failed seek, nor once anything else (a rebalance's
    seeks, a revocation) has set the read offset."""
    to = seeks.made_to(tp)
    read_offset = consumer._read_offset
    if (
        to is not None
        and consumer.app.consumer_generation_id == generation_id
        and read_offset.get(tp) == offset
    ):
        read_offset[tp] = to if to else None  # as Faust's seek sets it


def _seeks(consumer: Any) -> Seeks:
    """The seeks made through ``consumer`` (main thread only)."""
    seeks: Seeks | None = consumer.__dict__.get(_SEEKS)
    if seeks is None:
        seeks = consumer.__dict__[_SEEKS] = Seeks()
    return seeks


async def _seek_committed(consumer: Any) -> None:
    # What Faust does when a fetch returns while the flow is stopped.
    try:
        await consumer.perform_seek()
    except Exception as exc:  # Faust logs it and goes on, as here
        consumer.log.warning(f"exception performing seek when flow not active {exc}")


def patch_unread() -> None:
    """Make Faust's aiokafka consumer fetch with a copy of its active partitions, note where
    each fetch left the positions, count its seeks, and un-read the records it does not hand
    on (once per process)."""
    consumer = aiokafka_driver.Consumer
    if hasattr(consumer.getmany, "__wrapped__"):
        return
    original_getmany = consumer.getmany

    @functools.wraps(original_getmany)
    def getmany(self: Any, timeout: float) -> AsyncIterator[tuple[Any, Any]]:
        return _handed_on(self, timeout)

    consumer.getmany = getmany  # type: ignore[method-assign]
    original_seek = consumer.seek

    @functools.wraps(original_seek)
    async def seek(self: Any, partition: Any, offset: int) -> None:
        # Counted before the seek is made (Faust makes aiokafka's from this thread): from now
        # on the walk leaves the partition's fetched records, which are from before it. A
        # seek that fails still leaves them; they are read again (the un-read).
        seeks = _seeks(self)
        number = seeks.begin(partition)
        await original_seek(self, partition, offset)
        seeks.made[partition] = (number, offset)

    consumer.seek = seek  # type: ignore[method-assign]

    thread = aiokafka_driver.AIOKafkaConsumerThread
    original_getmany_on_thread = thread.getmany
    original_fetch_records = thread._fetch_records

    @functools.wraps(original_getmany_on_thread)
    async def fetch(self: Any, active_partitions: Any, timeout: float) -> Any:
        if active_partitions is None:
            return await original_getmany_on_thread(self, None, timeout)
        # A copy: the live set changes while the fetch waits, and aiokafka reads an empty
        # set as every partition.
        snapshot = set(active_partitions)
        if not snapshot:
            return {}
        return await original_getmany_on_thread(self, snapshot, timeout)

    @functools.wraps(original_fetch_records)
    async def fetch_records(self: Any, kafka: AIOKafkaConsumer, *args: Any, **kwargs: Any) -> Any:
        records = await original_fetch_records(self, kafka, *args, **kwargs)
        if not records:
            return records
        return Fetched(records, after_fetch(kafka, records))  # still on the consumer thread

    thread.getmany = fetch  # type: ignore[method-assign]
    thread._fetch_records = fetch_records  # type: ignore[method-assign,assignment]
