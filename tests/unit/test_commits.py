"""The commit protocol's own steps (stream/commits.py): a batch delivers before it
holds its state, a commit flushes before it commits, the first commit after an assignment
comes early, and the redo window is the age of the oldest batch no commit covers."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stream.commits import FIRST_COMMIT_SECONDS, Chosen, Commits, close_batch

# The offsets a commit chooses, which the flush writes its checkpoints with.
CHOSEN = {("match-started", 0): 7}


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Worker:
    """Commits with a clock, a flush that works or not, and every call recorded."""

    def __init__(self, flush_works: bool = True) -> None:
        self.clock = Clock()
        self.flush_works = flush_works
        self.calls: list[str] = []
        self.flushed: list[Chosen] = []
        self.scheduled: list[tuple[float, Callable[[], None]]] = []
        self.commits = Commits(
            self.flush,
            lambda: self.calls.append("commit"),
            self.later,
            clock=self.clock,
            crash_point=self.calls.append,
            on_commit=lambda: self.calls.append("counted"),
        )

    async def flush(self, chosen: Chosen) -> bool:
        self.calls.append("flush")
        self.flushed.append(chosen)
        return self.flush_works

    def later(self, delay: float, call: Callable[[], None]) -> None:
        self.scheduled.append((delay, call))

    async def commit_cycle(self) -> bool:
        """What Faust's commit does through the hooks: choose, flush, commit if it worked."""
        if not await self.commits.before_commit(CHOSEN):
            return False
        self.commits.committed()
        return True


async def test_a_batch_delivers_before_it_holds_its_state() -> None:
    calls: list[str] = []

    async def deliver() -> None:
        calls.append("deliver")

    async def hold() -> None:
        calls.append("hold")

    await close_batch(deliver, hold, calls.append)
    assert calls == ["processed", "deliver", "hold", "written"]


async def test_a_batch_whose_delivery_fails_holds_nothing() -> None:
    calls: list[str] = []

    async def deliver() -> None:
        raise ConnectionError("broker gone")

    async def hold() -> None:
        calls.append("hold")

    with pytest.raises(ConnectionError):
        await close_batch(deliver, hold, calls.append)
    assert calls == ["processed"]


async def test_a_commit_flushes_first_and_says_it_went_through() -> None:
    worker = Worker()
    worker.commits.batch_done()
    assert await worker.commit_cycle()
    assert worker.calls == ["flush", "counted", "committed"]
    assert worker.flushed == [CHOSEN]  # the flush writes the checkpoints of what is chosen


async def test_a_failed_flush_skips_the_commit_and_keeps_the_window() -> None:
    worker = Worker(flush_works=False)
    worker.commits.batch_done()
    worker.clock.now += 3.0
    assert not await worker.commit_cycle()
    assert worker.calls == ["flush"]
    assert worker.commits.redo_window() == pytest.approx(3.0)


def test_the_first_batch_after_an_assignment_schedules_one_early_commit() -> None:
    worker = Worker()
    worker.commits.batch_done()
    assert worker.scheduled == []  # no assignment yet: the commit tick will do
    worker.commits.sought()
    worker.commits.batch_done()
    worker.commits.batch_done()
    assert [delay for delay, _ in worker.scheduled] == [FIRST_COMMIT_SECONDS]
    worker.scheduled[0][1]()
    assert worker.calls == ["commit"]
    worker.commits.sought()  # a new assignment: once more
    worker.commits.batch_done()
    assert len(worker.scheduled) == 2


async def test_a_batch_done_while_a_commit_is_in_flight_stays_uncommitted() -> None:
    worker = Worker()
    commits, clock = worker.commits, worker.clock
    assert commits.redo_window() == 0.0
    commits.batch_done()  # at 100
    clock.now = 101.0
    assert await commits.before_commit(CHOSEN)  # chosen at 101
    clock.now = 101.5
    commits.batch_done()  # after the choice: not covered
    clock.now = 102.0
    commits.committed()
    assert commits.redo_window() == pytest.approx(0.5)
    assert await worker.commit_cycle()
    assert commits.redo_window() == 0.0


# Steps of a worker's life: a batch, a commit (choice, flush, commit), a commit whose batch
# comes between the choice and the commit, time passing.
STEPS = st.lists(
    st.one_of(
        st.just(("batch", 0.0)),
        st.just(("commit", 0.0)),
        st.just(("batch-in-commit", 0.0)),
        st.tuples(st.just("wait"), st.floats(0.01, 10.0)),
    ),
    max_size=40,
)


@given(STEPS)
async def test_the_redo_window_is_the_age_of_the_oldest_batch_no_commit_covers(
    steps: list[tuple[str, float]],
) -> None:
    worker = Worker()
    commits, clock = worker.commits, worker.clock
    # The model: when each batch was done; a commit covers every batch done before its choice.
    uncovered: list[float] = []
    for step, seconds in steps:
        if step == "batch":
            commits.batch_done()
            uncovered.append(clock.now)
        elif step == "commit":
            await commits.before_commit(CHOSEN)
            commits.committed()
            uncovered = []
        elif step == "batch-in-commit":
            await commits.before_commit(CHOSEN)
            clock.now += 0.25
            commits.batch_done()
            commits.committed()
            uncovered = [clock.now]
        else:
            clock.now += seconds
        expected = clock.now - min(uncovered) if uncovered else 0.0
        assert commits.redo_window() == pytest.approx(expected)
