"""The commit protocol: in what order a batch's outputs, its state and its input offsets
become durable, and what a crash between two of them costs. Every other module that takes part
says which step it is and points here.

The order in a worker (one batch, then the commit that covers it):

1. **process** the admitted records against working copies of the table records
   (stream/pipeline/batches.py); nothing leaves the worker;
2. **deliver** the outputs (packed commands, rating changes, dead letters) and wait until the
   broker has every one (stream/delivery.py);
3. **hold** the batch's table writes: readable at once, not yet in the changelogs
   (stream/pipeline/changelogs.py); the batch's records are acked and the input positions move
   past them (stream/pipeline/positions.py). :func:`close_batch` runs 2 then 3;
4. **choose**: at a commit, Faust chooses the offsets to commit from its acks, each capped at
   the runner's position on its partition (stream/pipeline/workarounds/beforecommit.py);
5. **flush** every write held before the choice to its changelog, each changelog partition's
   batch ending with the checkpoint of the chosen offsets (stream/pipeline/checkpoints.py), and
   wait for the broker (:meth:`Commits.before_commit`); a flush that fails skips this commit;
6. **commit** the chosen offsets (:meth:`Commits.committed` once it went through).

Why it is at-least-once and never applies anything twice: a committed offset is never above
a record whose batch did not finish (4), and a finished batch's outputs are in Kafka (2) and its
state in the changelog before its offset is committed (5 before 6). A successor recovers the
tables from the changelogs and reads from the committed offsets, or from the oldest checkpoint
of a table restored short of them (a changelog that came back shorter than it was written), so
it redoes only work its state does not have all of, against state that either lacks that work
(it does it again, and sends the same bytes again) or has it (it recognises every message as
done). The table of
what a crash at each boundary leaves is in docs/guarantees.md, "What a crash can interrupt";
``SKILLSTREAM_CRASH_AT`` (stream/pipeline/crashpoints.py) kills a worker exactly at each.

The redo window, how far back a crash would send the successor, is what :class:`Commits`
keeps: the time since the oldest batch that no commit covers. A worker commits at its commit
tick, and once more :data:`FIRST_COMMIT_SECONDS` after its first batch on partitions it was
just assigned: its first batches redo its predecessor's uncommitted work, and without that
commit a kill before its tick would hand that work on again, down a chain of early kills.

The cache feed (stream/cache/feed.py) follows the same order with no hold and no flush: its
outputs are dead letters (2), its state is Redis, written through :func:`close_batch` once they
are in Kafka (3: Redis has the write when it answers, and the versioned write keeps a key's
newest), and then it commits the batch's offsets (6). A crash before the commit makes it write
the batch again, which the versions make harmless.

No Faust, Kafka or Redis here: the app (stream/pipeline/app.py) gives :class:`Commits` its
flush and commit and calls it from Faust's commit hooks.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
from typing import TypeVar

__all__ = ["FIRST_COMMIT_SECONDS", "Chosen", "Commits", "close_batch"]

# After an assignment the worker commits this long after its first batch instead of waiting
# for its next commit tick (up to a commit interval away). Long enough for Faust to have acked
# that batch (acks follow the batch), short next to the interval.
FIRST_COMMIT_SECONDS = 0.5

T = TypeVar("T")

# The offsets a commit is about to commit, per (topic, partition).
Chosen = Mapping[tuple[str, int], int]

# A crash point (stream/pipeline/crashpoints.py): a no-op unless the soak harness armed it.
CrashPoint = Callable[[str], None]
# Call a function after a delay (the event loop's call_later).
Later = Callable[[float, Callable[[], None]], object]


async def close_batch(
    deliver: Callable[[], Awaitable[object]],
    hold: Callable[[], Awaitable[T]],
    crash_point: CrashPoint = lambda point: None,
) -> T:
    """Steps 2 and 3 of a processed batch: its outputs reach the broker, then its state is
    written (held for the changelogs, or in Redis); returns what ``hold`` returns. In this
    order a crash between them only makes the successor send the same bytes again; the other
    way round, state without its outputs would make it think they went out. An error from
    either propagates and the batch is redone whole."""
    crash_point("processed")
    await deliver()
    held = await hold()
    crash_point("written")
    return held


class Commits:
    """Steps 5 and 6 for one worker, and the redo window.

    ``flush`` sends the held writes to the changelogs, with the checkpoints of the offsets
    chosen (True when all arrived); ``commit``
    commits now, as the commit tick does (through the same hooks; it handles its own failure);
    ``later`` schedules the early commit; ``clock`` is monotonic seconds.
    """

    def __init__(
        self,
        flush: Callable[[Chosen], Awaitable[bool]],
        commit: Callable[[], None],
        later: Later,
        *,
        clock: Callable[[], float] = time.monotonic,
        crash_point: CrashPoint = lambda point: None,
        on_commit: Callable[[], None] = lambda: None,
    ) -> None:
        self._flush = flush
        self._commit = commit
        self._later = later
        self._clock = clock
        self._crash_point = crash_point
        self._on_commit = on_commit
        # When the oldest batch not covered by a commit was done; when the offsets of the
        # commit in progress were chosen, and the first batch done after that.
        self._uncommitted_since: float | None = None
        self._chosen_at: float | None = None
        self._done_after_choice: float | None = None
        # Set when the consumer seeks its partitions to their commits (an assignment),
        # cleared by the first batch after it, which schedules the early commit.
        self._commit_early = False

    def sought(self) -> None:
        """The consumer sought its partitions to their commits: the next batch that moves a
        position schedules a commit :data:`FIRST_COMMIT_SECONDS` after it."""
        self._commit_early = True

    def batch_done(self) -> None:
        """A batch moved some input position (3 done): it is uncommitted work from now."""
        now = self._clock()
        if self._commit_early:
            self._commit_early = False
            self._later(FIRST_COMMIT_SECONDS, self._commit)
        if self._uncommitted_since is None:
            self._uncommitted_since = now
        if self._chosen_at is not None and self._done_after_choice is None:
            self._done_after_choice = now

    async def before_commit(self, chosen: Chosen) -> bool:
        """Faust chose the offsets (4): flush every write held so far, with the checkpoints
        of ``chosen`` (5). False skips the commit (the offsets stay acked for the next one)."""
        self._chosen_at = self._clock()
        self._done_after_choice = None
        return await self._flush(chosen)

    def committed(self) -> None:
        """A commit went through (6): what stays uncommitted is what was done after its
        offsets were chosen."""
        self._on_commit()
        self._uncommitted_since = self._done_after_choice
        self._chosen_at = self._done_after_choice = None
        self._crash_point("committed")

    def redo_window(self) -> float:
        """Seconds since the oldest batch no commit covers was done (0: none): how far back a
        crash now would send the successor."""
        since = self._uncommitted_since
        return 0.0 if since is None else self._clock() - since
