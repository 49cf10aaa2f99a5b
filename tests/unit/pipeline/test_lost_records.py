"""Records lost between the consumer and the agent (issue 28's wedge).

After an assignment Faust could hand a partition's next record to the agent while the one
before it never arrived (stream/pipeline/positions.py). Processed in that order a player
partition reads a watermark before the join it covers, a rate command is never applied, the
commit stays below the lost record: matches stuck, or rated out of order, until a stall
watchdog read everything since the commit again. On the real batch runner, with batches that
span partitions: whichever records are lost, every (player, match) is rated exactly as without
the loss, nothing is left waiting, and the partitions were read again at once.
"""

from __future__ import annotations

from harness import PLAYER_COMMANDS
from hypothesis import example, given, settings
from hypothesis import strategies as st
from test_rollback import backlog, played, ratings

from stream.protocol import MATCHES, PENDING


def test_a_lost_join_is_read_again_before_the_watermark_after_it_is_used() -> None:
    """The first records of every player partition's command log are the joins of the first
    matches, then the watermarks covering them: lose a join and the watermark after it must
    not let the player's later match take its snapshot first."""
    events = backlog(0, matches=30)
    clean = played(events)
    clean.run()
    lossy = played(events)
    lossy.batch = 8
    # Every player partition's first command (a join), as it is delivered the first time.
    lossy.lost = {(PLAYER_COMMANDS, p, 0) for p in range(lossy.partitions)}
    lossy.run()
    assert ratings(lossy) == ratings(clean)
    assert {(PLAYER_COMMANDS, p, 0) for p in range(lossy.partitions)} <= set(lossy.rewinds)


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 3),
    batch=st.integers(1, 40),
    lost=st.sets(st.integers(0, 3000), min_size=1, max_size=12),
)
@example(seed=0, batch=1, lost={40})
@example(seed=1, batch=25, lost={0, 1, 2, 3, 200, 201})
def test_whatever_records_are_lost_every_match_is_rated_once_as_without_the_loss(
    seed: int, batch: int, lost: set[int]
) -> None:
    events = backlog(seed, matches=60)
    clean = played(events)
    clean.run()
    lossy = played(events)
    lossy.batch = batch
    lossy.lost_deliveries = lost
    lossy.run()
    assert ratings(lossy) == ratings(clean)
    assert all(MATCHES.value(v).done is not None for v in lossy.match_table.values())
    assert not any(PENDING.value(v).matches for v in lossy.pending_table.values())
    assert not lossy.dead_letters
