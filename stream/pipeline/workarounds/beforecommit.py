"""Running the tables' changelog flush between Faust choosing the offsets to commit and
committing them.

What: Faust's consumer commits in ``Consumer._commit_tps``: it chooses the offsets (the acked
records of each partition), publishes the messages attached to them, flushes the producer and
commits. Nothing public runs between the choice and the commit: sensors' ``on_commit_initiated``
is synchronous and runs before the choice; ``tables.on_commit`` runs after the commit.

Why: the pipeline holds changelog writes until the commit (steps 3-6 of the commit protocol,
stream/commits.py). They must reach the broker before the offsets of the records that
made them are committed, and only the writes made *before* the offsets were chosen are known to
include those records' writes: a flush run earlier could miss a batch acked while it awaited.
:func:`patch_before_commit` wraps the two steps ``_commit_tps`` calls around the publishing of
attached messages: the choice (``_filter_committable_offsets``, which also caps it, below) and
the commit (``_commit_offsets``, which runs the app's hook, :func:`before_commit`, first). So
the hook runs after the attached messages went out, which changes nothing here: the pipeline
attaches none (it sends through its own producer calls). A hook that returns False skips this
commit (the offsets go back on Faust's acked lists, which choosing took them off, and the next
commit tries again). ``_commit_tps`` itself runs as Faust wrote it, so a change to it upstream
is not silently undone.

Faust chooses from its acks, and an ack does not prove that the agent processed the record: a
record can be acked without reaching the agent, or reach it after a gap
(stream/pipeline/positions.py). So each chosen offset is also capped at the app's limit for
its partition (:func:`limit_commits`: the batch runner's position, the next offset it has to
process); a partition without a limit is not committed.

Upstream: no issue found for a hook between the choice and the commit in the faust-streaming
tracker (searched 2026-11-25). The closest is faust-streaming/faust#273 (merged: the producer is
flushed before a commit), which this patch keeps: Faust's own ``_commit_offsets`` still does it.

Written for faust-streaming 0.15.3, aiokafka 0.14.0, mode-streaming 0.7.1.
tests/unit/pipeline/workarounds/test_before_commit.py fails when the hook stops running between
the choice and the commit, when a limit stops applying, or when the source of any of Faust's
``force_commit``, ``_commit_tps``, ``_filter_committable_offsets`` or ``_commit_offsets``
changes (then revisit this patch).

Failure: a hook that returns False costs one commit interval of progress, nothing else; a hook
must not raise (the changelog flush does not). Replay: records after the last commit are read
again after a crash, as without the hook; every handler is idempotent.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

from faust.transport.consumer import Consumer
from faust.types import TP

__all__ = ["after_commit", "before_commit", "limit_commits", "patch_before_commit"]

# The app attribute holding its hook.
HOOK = "skillstream_before_commit"

# The app attributes holding its limits and what it runs once a commit went through.
LIMIT = "skillstream_commit_limit"
AFTER = "skillstream_after_commit"
# The consumer attribute holding the choices between _filter_committable_offsets and
# _commit_offsets.
CHOICES = "skillstream_choices"

# Called with the offsets about to be committed.
Hook = Callable[[Mapping[TP, int]], Awaitable[bool]]
# The highest offset that may be committed on (topic, partition); None: none.
Limit = Callable[[str, int], int | None]


def before_commit(app: Any, hook: Hook) -> None:
    """Run ``hook`` with the offsets chosen before every commit of ``app``'s consumer."""
    setattr(app, HOOK, hook)


def limit_commits(app: Any, limit: Limit) -> None:
    """Never commit an offset above ``limit(topic, partition)`` on ``app``'s consumer."""
    setattr(app, LIMIT, limit)


def after_commit(app: Any, callback: Callable[[Mapping[TP, int]], None]) -> None:
    """Call ``callback`` with the offsets after every commit of ``app``'s consumer that went
    through (the redo window's bookkeeping, the soak harness's crash point)."""
    setattr(app, AFTER, callback)


def _capped(self: Any, chosen: dict[TP, int]) -> dict[TP, int]:
    """The chosen offsets within the app's limits, each still above the last commit."""
    limit: Limit | None = getattr(self.app, LIMIT, None)
    if limit is None:
        return chosen
    capped: dict[TP, int] = {}
    for tp, offset in chosen.items():
        ceiling = limit(tp.topic, tp.partition)
        if ceiling is None:
            continue
        allowed = min(offset, ceiling)
        if self._should_commit(tp, allowed):
            capped[tp] = allowed
    return capped


def _put_back(self: Any, acked: dict[TP, list[int]], kept: dict[TP, int]) -> None:
    """Return to Faust's acked lists the offsets that choosing took off them and that are not
    committed now (above ``kept``, or all of a partition not in it): without them the next
    commit would see a hole where they were."""
    for tp, offsets in acked.items():
        floor = kept.get(tp)
        back = [o for o in offsets if floor is None or o >= floor]
        missing = [o for o in back if o not in self._acked_index[tp]]
        if missing:
            self._acked[tp].extend(missing)
            self._acked[tp].sort()
            self._acked_index[tp].update(missing)


def patch_before_commit() -> None:
    """Make Faust's consumer cap the offsets it chooses and run the app's hook between choosing
    and committing them (once per process). Faust's ``_commit_tps`` runs as written: its
    choice (``_filter_committable_offsets``) and its commit (``_commit_offsets``) are wrapped."""
    if hasattr(Consumer._commit_offsets, "__wrapped__"):
        return
    choose = Consumer._filter_committable_offsets
    commit = Consumer._commit_offsets

    @functools.wraps(choose)
    def filter_committable_offsets(self: Any, tps: Iterable[TP]) -> dict[TP, int]:
        tps = list(tps)
        # Choosing the offsets takes them off the acked lists: kept to put back what is not
        # committed (above a limit, or all of it if the hook fails).
        acked = {tp: list(self._acked[tp]) for tp in tps}
        chosen = _capped(self, choose(self, tps))
        _put_back(self, acked, chosen)
        if chosen:
            # Faust hands this very dict to _commit_offsets: the acks are found by it.
            _choices(self)[id(chosen)] = (chosen, acked)
        return chosen

    @functools.wraps(commit)
    async def commit_offsets(
        self: Any, offsets: Mapping[TP, int], start_new_transaction: bool = True
    ) -> bool:
        _, acked = _choices(self).pop(id(offsets), (offsets, {}))
        hook: Hook | None = getattr(self.app, HOOK, None)
        if hook is not None and not await hook(offsets):
            _put_back(self, acked, {})
            return False
        committed: bool = await commit(self, offsets, start_new_transaction=start_new_transaction)
        after: Callable[[Mapping[TP, int]], None] | None = getattr(self.app, AFTER, None)
        if committed and after is not None:
            after(offsets)
        return committed

    Consumer._filter_committable_offsets = filter_committable_offsets  # type: ignore[method-assign]
    Consumer._commit_offsets = commit_offsets  # type: ignore[method-assign]


def _choices(consumer: Any) -> dict[int, tuple[Mapping[TP, int], dict[TP, list[int]]]]:
    """The choices in progress on ``consumer``: the offsets chosen and the acks they took."""
    found: dict[int, tuple[Mapping[TP, int], dict[TP, list[int]]]] | None = getattr(
        consumer, CHOICES, None
    )
    if found is None:
        found = {}
        setattr(consumer, CHOICES, found)
    return found
