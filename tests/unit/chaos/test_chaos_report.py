"""The chaos report (text and JSON), the wave helpers and the command's quick refusals."""

from __future__ import annotations

import io
from contextlib import redirect_stderr

import orjson
import pytest

from stream.chaos.faults import FaultKind, PlannedFault
from stream.chaos.report import ChaosReport, FaultRecord
from stream.chaos.run import ChaosConfig, replay
from stream.chaos.traffic import match_messages, waves
from stream.chaos.verify import Check
from stream.chaos.workerfleet import WorkerExit
from stream.cli.main import main
from stream.config.modes import Modes
from stream.history import HistoryMatch
from stream.simulation import SimulationConfig, simulate


def report(*checks: Check) -> ChaosReport:
    kill = FaultRecord(PlannedFault(FaultKind.KILL, 5, 0.1, 1), target="w1 pid 7")
    kill.injected_at, kill.in_flight, kill.restart_seconds = 3.0, 2, 6.5
    pause = FaultRecord(PlannedFault(FaultKind.REDIS_PAUSE, 9, seconds=30.0), "valkey pid 8")
    pause.injected_at, pause.ended_at, pause.cache_seconds = 10.0, 40.0, 0.4
    pause.ratings_during = 120
    missed = FaultRecord(PlannedFault(FaultKind.BROKER_PAUSE, 12, seconds=20.0))
    missed.error = "ProcessLookupError: gone"
    config = {"players": 10, "team_size": 1, "workers": 2, "store": "memory", "seed": 1}
    out = ChaosReport(config, matches=40, waves=14, ratings=80, records=83, redeliveries=3)
    out.faults = [kill, pause, missed]
    out.exits = [WorkerExit("w0", 42, 1, 22.0, "line one\nKafkaTimeoutError", 4.0)]
    out.checks = list(checks)
    out.stalled = "wave 13: 2 of 2 ratings missing after 180 s"
    out.trace = ["m-1:", "  player-commands[2]@27  (not yet committed): [...]"]
    out.warnings = ["chaos-w1.0: [2026-11-21 15:18:02,482] [7] [WARNING] partition stalled"]
    return out


def test_text_report_shows_figures_faults_exits_and_checks() -> None:
    text = report(Check("replay", True, "fine"), Check("crashes", False, "1 exit")).text()
    assert "40 matches in 14 waves" in text
    assert "3 byte-identical redeliveries" in text
    assert "kill w1 pid 7 at wave 5, 2 match(es) in flight, replacement ready after 6.5 s" in text
    assert "120 ratings during the pause" in text
    assert "cache caught up 0.40 s after SIGCONT" in text
    assert "NOT injected" in text
    assert "w0 (pid 42) exited with 1 at 22.0 s, ready again after 4.0 s" in text
    assert "| KafkaTimeoutError" in text
    assert "PASS replay" in text and "FAIL crashes" in text
    trace = text.index("trace of the stalled matches:")
    assert text.index("STALLED: wave 13") < trace < text.index("    m-1:")
    assert "      player-commands[2]@27  (not yet committed): [...]" in text
    assert "worker warnings and errors:\n    chaos-w1.0: [2026-11-21" in text
    assert text.endswith("result: FAIL")


def test_json_report_is_one_object_and_passes_only_if_every_check_does() -> None:
    failing = orjson.loads(
        orjson.dumps(report(Check("a", True, ""), Check("b", False, "")).to_json())
    )
    assert failing["passed"] is False
    assert failing["kills"] == 1
    assert [f["kind"] for f in failing["faults"]] == ["kill", "redis-pause", "broker-pause"]
    assert failing["unexpected_exits"][0]["log_tail"].endswith("KafkaTimeoutError")
    assert failing["trace"][0] == "m-1:" and len(failing["warnings"]) == 1
    assert report(Check("a", True, "")).to_json()["passed"] is True
    assert not report().passed, "no checks is no pass"


def test_waves_never_hold_a_player_twice_and_keep_the_order() -> None:
    matches = list(simulate(SimulationConfig(seed=4, matches=200, players=40, team_size=2)))
    cut = list(waves(matches))
    assert [m for wave in cut for m in wave] == matches
    for wave in cut:
        players = [pid for m in wave for team in m.teams for pid in team]
        assert len(players) == len(set(players))


def test_match_messages_are_keyed_by_match_with_history_times() -> None:
    (match,) = simulate(SimulationConfig(seed=1, matches=1, players=10))
    (started, start, start_value), (finished, finish, finish_value) = match_messages(
        [match], "s", "f"
    )
    assert (started, finished) == ("s", "f")
    assert start == finish == match.match_id.encode()
    assert orjson.loads(finish_value)["teams"] == [list(t) for t in match.teams]
    assert orjson.loads(start_value)["started_at"] < orjson.loads(finish_value)["finished_at"]


def test_replay_rates_every_player_of_every_match() -> None:
    history = [
        HistoryMatch(1, "m1", "1v1", 1.0e9, (("a",), ("b",)), (1, 2), None, frozenset()),
        HistoryMatch(2, "m2", "1v1", 1.0e9 + 60, (("a",), ("c",)), (1, 1), None, frozenset()),
    ]
    replayer, pairs = replay(history, Modes())
    assert pairs == {("a", "m1"), ("b", "m1"), ("a", "m2"), ("c", "m2")}
    assert replayer.tables["1v1"]["a"].games == 2


def test_bad_configurations_are_refused_before_anything_starts() -> None:
    with pytest.raises(ValueError):
        ChaosConfig(store="tape")
    err = io.StringIO()
    with redirect_stderr(err):
        # 10 matches are a handful of waves: too few for five faults.
        assert main(["chaos", "--matches", "10", "--players", "10"]) == 2
    assert "too few" in err.getvalue()
