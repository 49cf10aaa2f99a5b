"""A player partition's state across batches (:class:`PlayerPartition`) and within one batch
(:class:`PlayerContext`): what the player side (stream/pipeline/players.py), its half of the
event-time protocol (stream/pipeline/watermarks.py) and the liveness monitor read and change."""

from __future__ import annotations

import heapq
from collections.abc import Mapping
from dataclasses import dataclass, field

from stream.pipeline.outbox import Outbox
from stream.pipeline.view import StateView
from stream.protocol import PENDING, RATINGS, PendingMatch, PendingRecord, RatingRecord

__all__ = ["PlayerContext", "PlayerPartition"]


@dataclass(slots=True)
class PlayerPartition:
    """A player partition this worker owns, across batches: the combiner's watermark, and the
    players whose oldest pending match waits for it (rebuilt after an assignment, see
    :meth:`PlayerProcessor.restore`)."""

    number: int
    partitions: int
    # Names this life of the partition on this worker, and the combiner's life and round of the
    # latest watermark or ask read (0, 0: none): its reports carry both, so the combiner can
    # tell its reader from a worker cut off from its group (stream/pipeline/combiner.py).
    life: int = 0
    seen: tuple[int, int] = (0, 0)
    # The highest watermark the combiner sent (None: none since the assignment).
    mark: float | None = None
    # The combiner asked for a report; the watermark and whether it was pending at the last
    # report (None: none since the assignment), and when (wall time) it was sent: at most
    # every ``announce_seconds`` when only the watermark moved.
    asked: bool = False
    reported: float | None = None
    reported_pending: bool | None = None
    reported_at: float = float("-inf")
    # (player, match) whose snapshot went out since the assignment. Not stored in the pending
    # record: that was a changelog write per player and match. After a restart the snapshot is
    # sent again, and the match side ignores it if it has one; it is the same state, since no
    # other match of the player is rated before this one settles.
    snapped: set[tuple[str, str]] = field(default_factory=set)
    # (player, match) whose abandon request this worker has sent, in memory only like the
    # snapshots: after a restore each is sent again once (the match side keeps the first), so
    # a request lost with a table restored behind its offsets is never waited for in vain.
    abandon_asked: set[tuple[str, str]] = field(default_factory=set)
    # Players whose rating record was found behind their pending record (a table restored
    # behind the other): their snapshots wait until the result read again brings it up.
    behind: set[str] = field(default_factory=set)
    waiting: list[tuple[float, str]] = field(default_factory=list)
    queued: set[tuple[float, str]] = field(default_factory=set)
    # The liveness monitor's view (stream/pipeline/liveness.py): per player waiting for the
    # watermarks, since when (wall time) and the start they must pass. In memory only.
    waits: dict[str, tuple[float, float]] = field(default_factory=dict)
    # (effective time, player) of the operator's adjustments to players of this partition
    # (PlayerProcessor.restore): each player is looked at once the watermarks pass it.
    adjusting: list[tuple[float, str]] = field(default_factory=list)
    # (player, adjustment id) whose ``adj`` command this worker has sent (in memory only:
    # after a restart one may be sent again, and applies once).
    requested: set[tuple[str, str]] = field(default_factory=set)

    def sent_snapshot(self, player_id: str, match_id: str, pending: PendingMatch) -> bool:
        """Whether the player's snapshot for this pending match has gone out (this worker's
        memory, or the flag of records written before it was kept in memory only)."""
        return pending.snap or (player_id, match_id) in self.snapped

    def allows(self, started_at: float) -> bool:
        """Whether every match partition has sent the joins of all matches started up to
        ``started_at``."""
        return self.mark is not None and self.mark > started_at

    def wait(self, started_at: float, player_id: str, wall: float) -> None:
        item = (started_at, player_id)
        if item not in self.queued:
            self.queued.add(item)
            heapq.heappush(self.waiting, item)
        since = self.waits.get(player_id)
        self.waits[player_id] = (wall if since is None else since[0], started_at)

    def due(self) -> list[str]:
        """The waiting players whose oldest pending match the watermarks now allow (each once;
        callers re-check the pending record)."""
        floor = self.mark
        if floor is None:
            return []
        players: dict[str, None] = {}
        while self.waiting and self.waiting[0][0] < floor:
            item = heapq.heappop(self.waiting)
            self.queued.discard(item)
            players[item[1]] = None
        return list(players)

    def adjustments_due(self) -> list[str]:
        """The players with an adjustment the watermarks have now passed (each once; callers
        check whether it applies yet and whether it was applied before)."""
        floor = self.mark
        if not self.adjusting or floor is None:
            return []
        players: dict[str, None] = {}
        while self.adjusting and self.adjusting[0][0] < floor:
            players[heapq.heappop(self.adjusting)[1]] = None
        return list(players)


@dataclass(slots=True)
class PlayerContext:
    """One player partition in one batch: its state across batches, its two tables' working
    copies, the outbox and the wall time the batch started at."""

    partition: PlayerPartition
    ratings: StateView[str, RatingRecord]
    pending: StateView[str, PendingRecord]
    out: Outbox
    wall: float = 0.0

    @classmethod
    def of(
        cls,
        partition: PlayerPartition,
        ratings: Mapping[bytes, bytes],
        pending: Mapping[bytes, bytes],
        out: Outbox,
        wall: float = 0.0,
    ) -> PlayerContext:
        return cls(partition, StateView(ratings, RATINGS), StateView(pending, PENDING), out, wall)
