"""stream/pipeline/liveness.py on the real batch runner: a match that waits for a snapshot that
never comes, and players waiting for a match partition that never reports, are found once the
bound has passed, said once and counted; a healthy run leaves nothing waiting."""

from __future__ import annotations

import pytest
from harness import FINISHED, MATCH_COMMANDS, STARTED, T0, Cluster, a_match, epoch_ms
from test_rollback import backlog, played

from stream.pipeline.liveness import LivenessMonitor
from stream.pipeline.metrics import WorkerMetrics
from stream.pipeline.playerpartition import PlayerContext
from stream.protocol import PlayerCommand, Snapshot

BOUND = 60.0


class DropsSnapshots:
    """A player processor that never sends one player's snapshots (a stand-in for any bug that
    leaves a match waiting for good)."""

    def __init__(self, inner: object, player_id: str) -> None:
        self.inner, self.player_id = inner, player_id

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    def on_command(self, ctx: PlayerContext, command: PlayerCommand) -> None:
        self.inner.on_command(ctx, command)  # type: ignore[attr-defined]
        for commands in ctx.out.match_commands.values():
            commands[:] = [
                c
                for c in commands
                if not (isinstance(c, Snapshot) and c.player_id == self.player_id)
            ]


def monitor() -> tuple[LivenessMonitor, WorkerMetrics]:
    metrics = WorkerMetrics()
    return LivenessMonitor(metrics, BOUND), metrics


def check(m: LivenessMonitor, c: Cluster, after: float) -> list[str]:
    runner = c.runner
    found = m.check(runner.match_partitions, runner.player_partitions, c.wall + after)
    return [s.describe() for s in found]


def test_a_match_waiting_for_a_snapshot_that_never_comes_is_said_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    c = Cluster(partitions=2)
    c.runner.players = DropsSnapshots(c.runner.players, "b")  # type: ignore[assignment]
    a_match(c)
    c.run()
    assert c.ratings == []
    m, metrics = monitor()
    assert check(m, c, BOUND - 1) == []
    (stuck,) = check(m, c, BOUND + 1)
    assert stuck.startswith("match m1 (partition ") and stuck.endswith("for the snapshots of b")
    check(m, c, BOUND + 2)
    said = [r for r in caplog.records if r.getMessage().startswith("stuck: match m1")]
    assert len(said) == 1
    assert metrics.stuck_total.labels("match")._value.get() == 1
    assert metrics.stuck.labels("match")._value.get() == 1


def test_a_match_partition_that_never_reports_holds_event_time_and_the_players() -> None:
    c = Cluster(partitions=2)
    # Nothing of partition 1 is read (a worker that stopped working): it never reports, not
    # even at the end of a batch.
    for topic in (MATCH_COMMANDS, STARTED, FINISHED):
        c.hold(topic, 1)
    for i, players in enumerate([("a", "b"), ("c", "d"), ("e", "f")]):
        start = {"match_id": f"m{i}", "mode": "1v1", "started_at": epoch_ms(T0 + i)}
        c.send(STARTED, {**start, "teams": [[players[0]], [players[1]]]})
    c.run()
    m, _ = monitor()
    found = check(m, c, BOUND + 1)
    # The combiner (with partition 0) heard nothing from match partition 1, nor from player
    # partition 1, which nothing reached: without every report it sends no view and no
    # watermark, and the players of partition 0's match (m1) wait for it.
    assert (
        "match partition 0 has waited 61 s for the event-time combiner's view; it waits for the"
        " reports of match partitions 1" in found
    )
    assert any(
        f.startswith("player c (partition ") and "combiner's watermark to pass" in f for f in found
    )


def test_a_healthy_run_leaves_nothing_waiting() -> None:
    c = played(backlog(1, matches=40))
    c.run()
    m, metrics = monitor()
    assert check(m, c, 10 * BOUND) == []
    assert metrics.stuck_total.labels("match")._value.get() == 0
