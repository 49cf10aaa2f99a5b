"""The live pipeline's rules, on its processors wired in memory (see harness.py)."""

from __future__ import annotations

import dataclasses
import random

import orjson
import pytest
from builders import T0, finish, start
from harness import FINISHED, MATCH_COMMANDS, PLAYER_COMMANDS, STARTED, Cluster, a_starts_two

from stream.config.modes import Modes, parse_modes
from stream.deadletters import DeadLetter, Origin
from stream.history import HistoryMatch
from stream.offline.replayer import Replayer, in_play_order
from stream.pipeline.outbox import Outbox
from stream.pipeline.partitioning import partition_for
from stream.pipeline.view import StateView
from stream.protocol import (
    MATCHES,
    PENDING,
    RECENT_MATCHES,
    Abandon,
    Command,
    PendingRecord,
    Snapshot,
    encode_command,
)
from stream.ratings.engine import MatchView, rate_match
from stream.ratings.skill import PlayerState
from stream.simulation import SimulationConfig, simulate
from stream.simulation.core import SimulatedMatch

# Every test with one message per runner call and with batches (tests/conftest.py, batched).
pytestmark = pytest.mark.usefixtures("batched")


def test_a_1v1_match_rates_both_players_as_the_engine_does() -> None:
    c = Cluster()
    c.send(STARTED, start("m1", [["a"], ["b"]], T0))
    c.send(FINISHED, finish("m1", [0, 1], T0 + 600))
    c.run()
    modes = Modes()
    expected = rate_match(modes.get("1v1"), MatchView((("a",), ("b",)), (0, 1), T0 + 600), {})
    assert c.state("a", "1v1") == expected["a"].state
    assert c.state("b", "1v1") == expected["b"].state
    by_player = {r["player_id"]: r for r in c.ratings}
    assert by_player["a"]["outcome"] == "win" and by_player["b"]["outcome"] == "loss"
    assert by_player["a"]["version"] == by_player["b"]["version"] == 1
    assert by_player["a"]["previous"]["rating"] == 1500.0
    assert c.pending("a") == {} and c.pending("b") == {}


def _history(team_size: int, matches: int, seed: int) -> list[SimulatedMatch]:
    config = SimulationConfig(seed=seed, matches=matches, players=40, team_size=team_size)
    return list(simulate(config))


@pytest.mark.parametrize("team_size", [1, 2])
def test_non_overlapping_history_equals_sequential_replay_exactly(team_size: int) -> None:
    history = _history(team_size, 300, seed=team_size)
    c = Cluster(partitions=3)
    for m in history:
        teams = [list(t) for t in m.teams]
        c.send(STARTED, start(m.match_id, teams, m.at - 0.001, m.mode))
        c.send(FINISHED, finish(m.match_id, list(m.ranks), m.at, m.mode, teams=teams))
    c.run()
    modes = Modes()
    # Replay in the order of play, the mode's population learned as it goes (the history spans
    # several of the built-in six-hour windows).
    replayer = Replayer(modes)
    played = [
        HistoryMatch(
            row,
            m.match_id,
            m.mode,
            round(m.at * 1000) / 1000,
            m.teams,
            m.ranks,
            m.stats,
            frozenset(),
            round((m.at - 0.001) * 1000) / 1000,
        )
        for row, m in enumerate(history, 1)
    ]
    for match, fates in in_play_order(played, replayer):
        replayer.apply_settled(match, fates)
    mode = history[0].mode
    states = dict(replayer.tables[mode])
    # The built-in mode has the experience term on: each player sees the others only through
    # their snapshots' games counts, and must still equal the replay bit for bit.
    assert modes.get(mode).experience.active
    assert {pid: c.state(pid, mode) for pid in states} == states
    last = {r["player_id"]: r for r in c.ratings}
    term = modes.get(mode).experience
    for pid, state in states.items():
        # The debut offset the match was rated with: the population's, learned from -300.
        learned = dataclasses.replace(term, debut_offset=last[pid]["population"]["debut_offset"])
        assert last[pid]["effective_rating"] == state.rating + learned.offset(state.games)


def test_duplicates_and_a_finish_before_its_start_change_nothing() -> None:
    history = _history(1, 200, seed=7)
    clean, noisy = Cluster(), Cluster()
    rng = random.Random(3)
    for m in history:
        teams = [list(t) for t in m.teams]
        events = [
            (STARTED, start(m.match_id, teams, m.at - 0.001)),
            (FINISHED, finish(m.match_id, list(m.ranks), m.at, teams=teams)),
        ]
        for topic, event in events:
            clean.send(topic, event)
        if rng.random() < 0.3:
            events.reverse()
        events += [rng.choice(events)]
        for topic, event in events:
            noisy.send(topic, event)
    clean.run()
    noisy.run()
    players = {pid for m in history for team in m.teams for pid in team}
    for pid in players:
        assert noisy.state(pid, "1v1") is not None
    # Each (player, match) is rated exactly once.
    keys = [(r["player_id"], r["match_id"]) for r in noisy.ratings]
    assert len(keys) == len(set(keys)) == 2 * len(history)
    assert not noisy.dead_letters


def test_every_command_redelivered_changes_nothing() -> None:
    c = Cluster()
    c.send(STARTED, start("m1", [["a"], ["b"]], T0))
    c.send(FINISHED, finish("m1", [0, 1], T0 + 60))
    c.run()
    before = (c.state("a", "1v1"), c.state("b", "1v1"), dict(c.match_table), len(c.ratings))
    # As after a crash before the offsets were committed: everything arrives again, to
    # partitions whose memory is gone and whose positions went back to the start.
    c.reread({tp: 0 for tp in c.logs})
    c.run()
    assert (c.state("a", "1v1"), c.state("b", "1v1"), dict(c.match_table)) == before[:3]
    assert len(c.ratings) == before[3] == 2


def test_a_result_read_again_after_more_matches_than_the_recent_list_holds_is_skipped() -> None:
    # A player partition sought back to an old commit (a stall, a crash during a backlog) reads
    # results again whose match ids have left the player's recent list.
    c = Cluster()
    played = RECENT_MATCHES + 4
    for i in range(played):
        c.send(STARTED, start(f"m{i}", [["a"], [f"o{i}"]], T0 + 100 * i))
        c.send(FINISHED, finish(f"m{i}", [i % 2, 1 - i % 2], T0 + 100 * i + 60))
    c.run()
    before, rated = c.state("a", "1v1"), len(c.ratings)
    assert before is not None and before.games == played and rated == 2 * played
    results = {
        item[:2]
        for item in c.delivered
        if item[0] == PLAYER_COMMANDS and any(cmd[0] == "rate" for cmd in orjson.loads(item[3]))
    }
    c.reread(dict.fromkeys(results, 0))
    c.run()
    assert c.state("a", "1v1") == before
    assert len(c.ratings) == rated
    # The joins read again make "a" wait again for the matches that left the recent list: its
    # snapshots reach matches settled long ago, which send their verdicts again; those are
    # skipped as well.
    assert c.counts["resent_verdicts"] == played - RECENT_MATCHES
    assert c.counts["duplicate_results"] == 2 * played + c.counts["resent_verdicts"]
    assert c.pending("a") == {}


def test_quitter_loses_and_the_opponents_match_is_cancelled() -> None:
    c = Cluster()
    c.send(STARTED, start("m1", [["a"], ["b"]], T0))
    c.send(FINISHED, finish("m1", [1, 0], T0 + 60, quitters=["a"]))
    c.run()
    assert c.outcomes() == {("a", "m1"): "loss"}
    assert c.state("b", "1v1") is None
    assert c.pending("b") == {}


def test_quit_policy_normal_gives_the_opponents_their_result() -> None:
    modes = parse_modes({"modes": {"1v1": {"pending": {"quit_policy": "normal"}}}})
    c = Cluster(modes)
    c.send(STARTED, start("m1", [["a"], ["b"]], T0))
    c.send(FINISHED, finish("m1", [1, 0], T0 + 60, quitters=["a"]))
    c.run()
    assert c.outcomes() == {("a", "m1"): "loss", ("b", "m1"): "win"}


def test_a_newer_start_abandons_the_older_match_after_the_grace_period() -> None:
    c = a_starts_two(100.0)
    c.run()
    assert ("a", "m1") not in c.outcomes()
    # Event time moves on (another match on m1's partition) past start of m2 + 60 s.
    later = [f"x{i}" for i in range(40)]
    for i, mid in enumerate(later):
        c.send(STARTED, start(mid, [[f"p{i}"], [f"q{i}"]], T0 + 200))
    c.run()
    assert c.outcomes()[("a", "m1")] == "abandoned"
    # m2 goes ahead: its snapshot waited for m1 to settle.
    c.send(FINISHED, finish("m2", [0, 1], T0 + 700))
    c.run()
    assert c.outcomes()[("a", "m2")] == "win"
    assert c.state("a", "1v1").games == 2  # type: ignore[union-attr]


def test_a_result_within_the_grace_period_beats_abandonment() -> None:
    c = a_starts_two(100.0)
    c.send(FINISHED, finish("m1", [1, 0], T0 + 130))
    c.run()
    c.tick(c.wall + 3600)
    c.run()
    assert c.outcomes()[("a", "m1")] == "loss"
    assert ("b", "m1") in c.outcomes()


def test_a_match_that_never_finishes_times_out_for_everyone_pending() -> None:
    modes = parse_modes({"modes": {"1v1": {"pending": {"timeout_seconds": 300}}}})
    c = Cluster(modes)
    c.send(STARTED, start("m1", [["a"], ["b"]], T0))
    c.run()
    assert c.ratings == []
    c.tick(c.wall + 301)
    c.run()
    assert c.outcomes() == {("a", "m1"): "timeout", ("b", "m1"): "timeout"}
    assert c.pending("a") == {}


@pytest.mark.parametrize(
    ("topic", "payload", "reason"),
    [
        (STARTED, b"{not json", "not valid JSON"),
        (FINISHED, b'{"match_id": "m", "mode": "1v1"}', "finished_at: required field"),
        (
            STARTED,
            b'{"match_id": "m", "mode": "1v1", "started_at": 1780000000000,'
            b' "teams": [["a"], ["a"]]}',
            "also in teams[0]",
        ),
        (
            FINISHED,
            b'{"match_id": "m", "mode": "1v1", "finished_at": "2026-01-01T00:00:00Z",'
            b' "teams": [["a"], ["b"]], "ranks": [0, 1], "stats": {"a": {"score": Infinity}}}',
            "not valid JSON",
        ),
    ],
)
def test_bad_input_goes_to_the_dead_letter_topic_with_its_bytes(
    topic: str, payload: bytes, reason: str
) -> None:
    c = Cluster()
    c.send(topic, payload, partition=2)
    c.run()
    (letter,) = c.dead_letters
    assert letter.value == payload
    assert reason in letter.reason
    assert (letter.origin.topic, letter.origin.partition) == (topic, 2)


def test_unknown_modes_are_dead_lettered_when_the_modes_file_rejects_them() -> None:
    modes = parse_modes({"default": {"unlisted": "reject"}, "modes": {"1v1": {}}})
    c = Cluster(modes)
    c.send(STARTED, start("m1", [["a"], ["b"]], T0, mode="2v2"))
    c.run()
    (letter,) = c.dead_letters
    assert "not in the modes file" in letter.reason


def test_a_finish_without_teams_and_no_start_is_dead_lettered_after_the_grace_period() -> None:
    c = Cluster()
    c.send(FINISHED, finish("m1", [0, 1], T0))
    c.run()
    assert not c.dead_letters
    c.tick(c.wall + 61)
    c.run()
    (letter,) = c.dead_letters
    assert "no match-started arrived" in letter.reason
    assert letter.origin.topic == FINISHED


def test_a_finish_without_teams_waits_for_its_start() -> None:
    c = Cluster()
    c.send(FINISHED, finish("m1", [1, 0], T0 + 60))
    c.send(STARTED, start("m1", [["a"], ["b"]], T0))
    c.run()
    assert c.outcomes() == {("a", "m1"): "loss", ("b", "m1"): "win"}


def test_state_changes_wait_until_the_batch_is_applied() -> None:
    table: dict[bytes, bytes] = {}
    view = StateView(table, PENDING)
    value = view.get("k") or PendingRecord(done=["m1"])
    view.put("k", value)
    assert table == {}
    assert view.changes() == {b'"k"': b'{"m":{},"done":["m1"]}'}


def test_deleting_what_the_table_does_not_hold_writes_nothing() -> None:
    """A record created and deleted in one batch, or never stored: no tombstone."""
    table = {b'"old"': b'{"m":{},"done":["m1"]}'}
    view = StateView(table, PENDING)
    view.put("new", PendingRecord(done=["m2"]))
    view.delete("new")
    view.delete("never")
    view.delete("old")
    assert view.get("new") is None and view.get("old") is None
    assert view.changes() == {b'"old"': None}


def test_a_sent_snapshot_is_not_stored_and_is_sent_again_after_a_restart() -> None:
    """The snapshot's flag is the partition's memory, not a changelog write; a player
    partition taken over before the result sends the snapshot again, which the match side
    ignores: the ratings are those of a run without the restart."""
    plain = Cluster()
    plain.send(STARTED, start("m1", [["a"], ["b"]], T0))
    plain.run()
    pending = dict(plain.pending_table)
    assert all(b'"snap":false' in value for value in pending.values())
    restarted = Cluster()
    restarted.send(STARTED, start("m1", [["a"], ["b"]], T0))
    restarted.run()
    restarted.runner.forget(range(restarted.partitions))
    for c in (plain, restarted):
        c.send(FINISHED, finish("m1", [0, 1], T0 + 60))
        c.run()
    assert restarted.ratings == plain.ratings
    assert restarted.outcomes() == {("a", "m1"): "win", ("b", "m1"): "loss"}


def command(c: Cluster, match_id: str, *commands: Command) -> None:
    """Commands for the match's home partition, as a player partition packs them."""
    value = orjson.dumps([encode_command(cmd) for cmd in commands])
    c.send(MATCH_COMMANDS, value, partition=partition_for(match_id, c.partitions))


def test_a_snapshot_and_an_abandon_request_read_before_their_start_are_kept_for_it() -> None:
    """After a crash a match partition reads its inputs again, and may read what its join
    caused before the start that sent it: the snapshot is the one the match is rated with,
    and a result within the grace period still beats the abandonment."""
    a_then = PlayerState(1620.0, 80.0, 0.06, 0, 3, T0 - 500)
    c = Cluster()
    command(c, "m1", Snapshot("m1", "a", a_then, False, T0), Abandon("m1", "a", T0 + 100))
    c.send(STARTED, start("m1", [["a"], ["b"]], T0))
    c.send(FINISHED, finish("m1", [0, 1], T0 + 60))
    c.run()
    assert c.outcomes() == {("a", "m1"): "win", ("b", "m1"): "loss"}
    view = MatchView((("a",), ("b",)), (0, 1), T0 + 60)
    mode = Modes().get("1v1")
    # b is rated against the snapshot read first; a from its own record (none yet).
    assert c.state("b", "1v1") == rate_match(mode, view, {"a": a_then})["b"].state
    assert c.state("a", "1v1") == rate_match(mode, view, {})["a"].state


def released_for_good(c: Cluster, match_id: str, player: str, until: float) -> None:
    """Kept while its start may come; released (pending entry cancelled) once event time, moved
    on by matches on every partition, has passed ``until``."""
    c.run()
    assert MATCHES.key_bytes(match_id) in c.match_table
    for i in range(40):
        c.send(STARTED, start(f"{match_id}-{i}", [[f"{match_id}p{i}"], [f"{match_id}q{i}"]], until))
    c.run()
    assert MATCHES.key_bytes(match_id) not in c.match_table
    record = PENDING.value(c.pending_table[PENDING.key_bytes(player)])
    assert match_id in record.done and match_id not in record.matches


def test_commands_for_a_match_never_started_here_are_released_once_its_start_cannot_come() -> None:
    """An abandon request names the newer start, a snapshot its match's start: the start
    cannot come once event time has passed that; an abandon request read after that cancels
    at once."""
    c = Cluster()
    c.send(STARTED, start("m1", [["b"], ["c"]], T0))
    command(c, "m9", Abandon("m9", "a", T0 + 100))
    released_for_good(c, "m9", "a", T0 + 200)
    command(c, "m7", Snapshot("m7", "e", None, False, T0 + 300))
    released_for_good(c, "m7", "e", T0 + 400)
    command(c, "m8", Abandon("m8", "d", T0 + 100))
    c.run()
    assert MATCHES.key_bytes("m8") not in c.match_table
    assert PENDING.value(c.pending_table[PENDING.key_bytes("d")]).done == ["m8"]


def test_a_snapshot_without_its_start_for_an_unknown_match_is_dropped_as_before() -> None:
    """Protocol version 4 sent none: kept, it could never be given up."""
    c = Cluster()
    command(c, "m6", Snapshot("m6", "a", None, False))
    c.run()
    assert MATCHES.key_bytes("m6") not in c.match_table
    assert c.counts["late_snapshots"] == 1


def test_events_on_the_wrong_partition_are_forwarded_home() -> None:
    c = Cluster()
    c.send(STARTED, start("m1", [["a"], ["b"]], T0), partition=0)
    c.send(FINISHED, finish("m1", [0, 1], T0 + 60), partition=1)
    c.run()
    assert c.outcomes() == {("a", "m1"): "win", ("b", "m1"): "loss"}


def test_internal_outbox_counts() -> None:
    out = Outbox()
    out.dead_letter(DeadLetter(None, b"x", Origin("t", 0, 1), "r"))
    assert out.counts["dead_lettered"] == 1 and bool(out)
