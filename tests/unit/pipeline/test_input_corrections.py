"""A re-rating worker's corrections (stream/corrections/inputs.py) on the in-memory cluster:
with matches voided, players erased, ratings adjusted and results refunded after a ban, every
rating equals `replay --corrections` of the same history (the ledger replay uses), the learned
population included, and so after a crash rolled back to a commit; the erased ids appear in no
topic and no table; voided events are counted, not dead-lettered; an adjustment and a refund
are published once."""

from __future__ import annotations

import json
import random
from pathlib import Path

import orjson
import pytest
from builders import T0, finish, start
from harness import FINISHED, PLAYER_COMMANDS, STARTED, Cluster, drain_in_order
from jsonschema import Draft202012Validator
from replay_1v1 import as_history, live_states, replayed_history
from test_event_time import overlapping
from test_learned_population import PARTITIONS, learning, send_all, simulated
from toy_correction import Cap, registered

import stream
from stream.config.modes import Modes, parse_modes
from stream.corrections.inputs import InputCorrections, input_corrections
from stream.corrections.ledger import Ledger
from stream.corrections.pseudonyms import pseudonym
from stream.corrections.records import Adjust, Audit, Ban, Correction, Erase, Void
from stream.errors import UserError
from stream.history import HistoryMatch
from stream.offline.corrected import Applied, rated_in_order
from stream.offline.explaining import explained_changes
from stream.offline.replayer import Replayer
from stream.pipeline.players import PlayerProcessor
from stream.protocol import RECENT_MATCHES

pytestmark = pytest.mark.usefixtures("batched")

KEY = b"a-test-key-of-some-length"
AUDIT = Audit("c-1", "ops", 0.0, "test")


def corrected(history: list[HistoryMatch], ledger: Ledger) -> list[HistoryMatch]:
    """What replay --corrections rates: the ledger's admitted matches."""
    out = []
    for match in history:
        admitted = ledger.admit(match, match.mode or "m")
        if admitted is not None:
            out.append(admitted)
    return out


@pytest.mark.parametrize("seed", range(3))
def test_voids_and_erasures_live_equal_replay_with_the_corrections(seed: int) -> None:
    modes = learning()
    history = simulated(20 + seed, matches=400, players=300)
    voided = frozenset(m.match_id for m in history[5::37])
    players = sorted({p for m in history[:50] for team in m.teams for p in team})
    erased_ids = players[:2]
    corrections: list[tuple[int, Correction]] = [
        (1, Void(AUDIT, matches=voided)),
        *((2 + i, Erase(AUDIT, pseudonym(KEY, p))) for i, p in enumerate(erased_ids)),
    ]
    ledger = Ledger(corrections, KEY)
    c = Cluster(modes, partitions=PARTITIONS)
    c.matches.corrections = input_corrections(corrections, KEY, "test")
    send_all(c, history)
    drain_in_order(c, seed)
    assert not c.dead_letters
    assert live_states(c.ratings) == replayed_history(corrected(history, ledger), modes)
    assert c.counts["voided"] >= 2 * len(voided)
    for pid in erased_ids:
        needle = f'"{pid}"'.encode()
        # The inputs keep them (Kafka's retention: docs/operations.md); nothing made from them does.
        assert not any(
            needle in value
            for (topic, _), log in c.logs.items()
            if topic not in (STARTED, FINISHED)
            for value in log
        )
        assert not any(
            pid.encode() in key or needle in value
            for table in c.store.tables.values()
            for key, value in table.items()
        )


def rating_changed_validator() -> Draft202012Validator:
    schema = json.loads(
        (Path(stream.__file__).parent / "schemas/rating-changed.schema.json").read_text()
    )
    return Draft202012Validator(schema)


def adjustments_of(history: list[HistoryMatch], seed: int) -> list[tuple[int, Correction]]:
    """Adjustments of players at seeded times inside the history: before a player's first
    match (a newcomer adjusted), between matches, while one of theirs is being played, two
    of one player at the same time (applied in the file's order), set and shift."""
    rng = random.Random(seed)
    first, last = history[0].started_at, history[-1].at
    assert first is not None
    players = sorted({p for m in history for team in m.teams for p in team})
    made: list[Adjust] = []
    for n in range(12):
        player = rng.choice(players)
        effective = rng.uniform(first - 60, last - 3600)
        if n == 11:
            # The same player and time as the one before, the file's order deciding.
            player, effective = made[-1].player, made[-1].effective
        shift = n % 2 == 0
        value = rng.uniform(-200, 200) if shift else rng.uniform(1200, 1800)
        audit = Audit(f"adj-{n}", "ops", 0.0, f"test {n}")
        made.append(Adjust(audit, "m", player, value, shift, effective))
    return [(10 + n, adjust) for n, adjust in enumerate(made)]


def adjusted_cluster(modes: Modes, corrections: list[tuple[int, Correction]]) -> Cluster:
    c = Cluster(modes, partitions=PARTITIONS)
    found = input_corrections(corrections, KEY, "test", modes)
    c.matches.corrections = found
    c.runner.players = PlayerProcessor(
        modes, partitions=PARTITIONS, adjustments=found.adjustments, refunds=found.refunds
    )
    return c


def drained_as_replayed(
    modes: Modes, history: list[HistoryMatch], corrections: list[tuple[int, Correction]], seed: int
) -> tuple[Cluster, Ledger]:
    """``history`` through a re-rating worker with ``corrections``, read in a seeded order:
    nothing dead-lettered, and every rating as `replay --corrections` gives it."""
    ledger = Ledger(corrections, KEY)
    c = adjusted_cluster(modes, corrections)
    send_all(c, history)
    drain_in_order(c, seed)
    assert not c.dead_letters
    assert live_states(c.ratings) == replayed_history(history, modes, ledger)
    return c, ledger


def bans_of(history: list[HistoryMatch], seed: int) -> list[tuple[int, Correction]]:
    """Bans of the three players with the most matches, each over a seeded window inside the
    history: refunds, and the third's a void by id (as `corrections resolve` writes it)."""
    rng = random.Random(seed)
    counts: dict[str, int] = {}
    for m in history:
        for team in m.teams:
            for p in team:
                counts[p] = counts.get(p, 0) + 1
    busiest = sorted(counts, key=lambda p: (-counts[p], p))[:3]
    first, last = history[0].at, history[-1].at
    made: list[tuple[int, Correction]] = []
    for n, player in enumerate(busiest):
        since = rng.uniform(first, (first + last) / 2)
        until = rng.uniform(since + (last - first) / 4, last + 60)
        audit = Audit(f"ban-{n}", "ops", 0.0, f"cheating {n}")
        if n < 2:
            made.append((40 + n, Ban(audit, "m", player, since, until)))
        else:
            ids = frozenset(
                m.match_id
                for m in history
                if since <= m.at < until and any(player in t for t in m.teams)
            )
            made.append((40 + n, Ban(audit, "m", player, since, until, "void", ids)))
    return made


@pytest.mark.parametrize(
    ("seed", "team_size", "quits"), [(0, 1, 0.0), (1, 1, 0.05), (2, 3, 0.0), (3, 3, 0.05)]
)
def test_bans_live_equal_replay_with_the_corrections(
    seed: int, team_size: int, quits: float
) -> None:
    # In teams a refunded player's line-up stays as it was, as their rating does; with quitters
    # and draws, a quitter is refunded by the ranks, a draw is kept.
    modes = learning()
    history = simulated(
        100 + seed,
        matches=400,
        players=120,
        team_size=team_size,
        quit_probability=quits,
        draw_probability=2 * quits,
    )
    bans = bans_of(history, seed)
    banned = [b.player for _, b in bans if isinstance(b, Ban)]
    # The first banned player is also erased: the ban applies to their pseudonym.
    corrections: list[tuple[int, Correction]] = [
        (1, Erase(AUDIT, pseudonym(KEY, banned[0]))),
        *bans,
    ]
    c, ledger = drained_as_replayed(modes, history, corrections, seed)
    assert ledger.unmatched() == []
    refunded = [e for e in c.ratings if e["outcome"] == "refunded"]
    # Published only to those who lost to a banned player and have a rating; never to one
    # banned (their own results are undone silently, as a void's).
    assert refunded and {e["refund"]["ban"] for e in refunded} <= {"ban-0", "ban-1"}
    names = {"ban-0": pseudonym(KEY, banned[0]), "ban-1": banned[1]}
    for e in refunded:
        assert e["refund"]["banned"] == names[e["refund"]["ban"]] != e["player_id"]
        assert (e["rating"], e["deviation"]) == (
            e["previous"]["rating"],
            e["previous"]["deviation"],
        )
        assert e["refund"]["by"] == "ops" and e["expected_score"] is None
    victims = {e["player_id"] for e in refunded}
    assert c.counts["voided"] > 0
    validator = rating_changed_validator()
    for event in c.ratings:
        validator.validate(event)
    assert not validator.is_valid({**refunded[0], "refund": None})
    # `replay --explain` gives a refunded player's changes as the worker published them.
    player = sorted(victims)[0]
    replayer = Replayer(modes)
    rated = rated_in_order(history, replayer, play_order=True, ledger=Ledger(corrections, KEY))
    published = sorted(
        (e for e in c.ratings if e["player_id"] == player), key=lambda e: e["version"]
    )
    assert list(explained_changes(rated, replayer, player)) == published


@pytest.mark.parametrize("seed", range(4))
def test_refunds_after_a_crash_rolled_back_to_a_commit_apply_once(seed: int) -> None:
    modes = learning()
    history = simulated(120 + seed, matches=300, players=100)
    corrections = bans_of(history, seed)[:2]
    ledger = Ledger(corrections, KEY)
    c = adjusted_cluster(modes, corrections)
    assert rolled_back_once(c, history, seed) == replayed_history(history, modes, ledger)
    assert any(e["outcome"] == "refunded" for e in c.ratings)


@pytest.mark.parametrize("seed", range(3))
def test_adjustments_live_equal_replay_with_the_corrections(seed: int) -> None:
    modes = learning()
    history = simulated(40 + seed, matches=400, players=300)
    erased = sorted({p for m in history[:30] for team in m.teams for p in team})[0]
    corrections: list[tuple[int, Correction]] = [
        (1, Void(AUDIT, matches=frozenset(m.match_id for m in history[7::41]))),
        (2, Erase(AUDIT, pseudonym(KEY, erased))),
        *adjustments_of(history, seed),
    ]
    # One adjustment of the erased player: applied to their pseudonym.
    corrections.append(
        (30, Adjust(Audit("adj-e", "ops", 0.0, "e"), "m", erased, 25.0, True, history[100].at))
    )
    c, _ = drained_as_replayed(modes, history, corrections, seed)
    adjusted_events = [e for e in c.ratings if e["outcome"] == "adjusted"]
    assert len(adjusted_events) == 13
    assert all(erased not in orjson.dumps(e).decode() for e in c.ratings)
    by_id = {e["match_id"]: e for e in adjusted_events}
    shifted, assigned = corrections[2][1], corrections[3][1]
    assert isinstance(shifted, Adjust) and isinstance(assigned, Adjust)
    assert by_id["adj-0"]["adjustment"] == {"by": "ops", "reason": "test 0", "shift": shifted.value}
    low, high = modes.get("m").rating_bounds
    assert by_id["adj-1"]["rating"] == min(max(assigned.value, low), high)
    validator = rating_changed_validator()
    for event in c.ratings:
        validator.validate(event)
    assert not validator.is_valid({**adjusted_events[0], "adjustment": None})
    # `replay --explain` gives an adjusted player's changes as the worker published them.
    player = by_id["adj-0"]["player_id"]
    replayer = Replayer(modes)
    applied: list[Applied] = []
    rated = rated_in_order(
        history,
        replayer,
        play_order=True,
        ledger=Ledger(corrections, KEY),
        on_adjust=lambda *adjustment: applied.append(adjustment),
    )
    published = sorted(
        (e for e in c.ratings if e["player_id"] == player), key=lambda e: e["version"]
    )
    assert list(explained_changes(rated, replayer, player, applied)) == published


def rolled_back_once(
    c: Cluster, history: list[HistoryMatch], seed: int
) -> dict[tuple[str, str], tuple[object, ...]]:
    """``history`` through ``c`` with a crash rolled back to a commit at a seeded point: each
    (player, match) published with the same bytes every time, as :func:`live_states` gives
    them."""
    send_all(c, history)
    rng = random.Random(seed)
    c.step(rng.randrange(200, 2000))
    commit = c.checkpoint()
    c.step(rng.randrange(1, 2000))
    c.roll_back(set(range(PARTITIONS)), commit, rng, flushed=0.5)
    c.run()
    seen: dict[tuple[str, str], bytes] = {}
    for event in c.ratings:
        key = (event["player_id"], event["match_id"])
        value = orjson.dumps(event, option=orjson.OPT_SORT_KEYS)
        assert seen.setdefault(key, value) == value, f"{key} published twice, differently"
    return {
        k: (e["rating"], e["deviation"], e["volatility"], e["rank_points"], e["games"])
        for k, e in ((k, orjson.loads(v)) for k, v in seen.items())
    }


@pytest.mark.parametrize("seed", range(6))
def test_adjustments_after_a_crash_rolled_back_to_a_commit_apply_once(seed: int) -> None:
    modes = learning()
    history = simulated(60 + seed, matches=300, players=200)
    corrections = adjustments_of(history, seed)
    ledger = Ledger(corrections, KEY)
    c = adjusted_cluster(modes, corrections)
    assert rolled_back_once(c, history, seed) == replayed_history(history, modes, ledger)


def test_an_event_that_names_no_erased_id_keeps_its_bytes() -> None:
    corrections = InputCorrections(erased=frozenset({pseudonym(KEY, "alice")}), key=KEY)
    raw = b'{"match_id":"m1","mode":"1v1","started_at":1,"teams":[["bob"],["carol"]]}'
    assert corrections.renamed(raw) is raw
    renamed = corrections.renamed(raw.replace(b"bob", b"alice"))
    assert pseudonym(KEY, "alice").encode() in renamed and b"alice" not in renamed
    assert corrections.renamed(b"not json") == b"not json"
    # A party names them too (stream.ratings.parties).
    party = b'{"match_id":"m2","teams":[["alice","bob"],["c","d"]],"parties":[["alice","bob"]]}'
    read = orjson.loads(corrections.renamed(party))
    assert (
        read["parties"] == [[pseudonym(KEY, "alice"), "bob"]]
        and read["teams"][0] == read["parties"][0]
    )


def test_a_worker_refuses_what_it_cannot_apply_with_the_line() -> None:
    window = Void(AUDIT, player="alice", since=0.0, until=10.0)
    with pytest.raises(UserError, match=r"^f line 3: void 'c-1' names a player"):
        input_corrections([(3, window)], None, "f")
    banned = Ban(AUDIT, "m", "alice", 0.0, 10.0, "void")
    with pytest.raises(UserError, match=r"^f line 5: ban 'c-1' voids a player's matches in a"):
        input_corrections([(5, banned)], None, "f")
    # Refunds need no resolution: the player side decides them from the result.
    assert input_corrections([(5, Ban(AUDIT, "m", "alice", 0.0, 10.0))], None, "f").refunds
    with pytest.raises(UserError, match="SKILLSTREAM_PSEUDONYM_KEY"):
        input_corrections([(1, Erase(AUDIT, pseudonym(KEY, "a")))], None, "f")
    unknown = Adjust(AUDIT, "ranked", "alice", 10.0, True, 0.0)
    with pytest.raises(UserError, match=r"^f line 4: adjust 'c-1': mode 'ranked' is not in the"):
        rejecting = parse_modes({"default": {"unlisted": "reject"}, "modes": {"m": {}}}, "t")
        input_corrections([(4, unknown)], None, "f", rejecting)


@pytest.mark.parametrize("seed", range(2))
def test_a_kind_defined_in_the_tests_only_applies_live_as_in_replay(seed: int) -> None:
    # The toy `cap` (tests/toy_correction.py): one module and one registry entry, and the
    # worker's player side applies it as it applies an adjustment, published once.
    modes = learning()
    history = simulated(80 + seed, matches=300, players=200)
    players = sorted({p for m in history[:40] for team in m.teams for p in team})
    first = history[0].started_at
    assert first is not None
    caps = [
        Cap(Audit(f"cap-{n}", "ops", 0.0, "test"), "m", p, 1450.0, history[60 + 30 * n].at)
        for n, p in enumerate(players[:5])
    ]
    corrections: list[tuple[int, Correction]] = list(enumerate(caps, start=1))
    with registered():
        c, _ = drained_as_replayed(modes, history, corrections, seed)
    capped = [e for e in c.ratings if e["outcome"] == "adjusted"]
    assert sorted(e["match_id"] for e in capped) == [f"cap-{n}" for n in range(5)]
    assert all(
        e["adjustment"] == {"by": "ops", "reason": "test", "ceiling": 1450.0} for e in capped
    )
    assert all(e["rating"] <= 1450.0 for e in capped)


def test_refunds_read_again_after_more_than_the_recent_list_holds_change_nothing() -> None:
    # "v" (rated once) then loses RECENT_MATCHES + 4 times in a row to "x", banned: a refund
    # adds no game, so only the record's refunded ids tell a redelivered one; "x" (banned) and
    # "n" (refunded in their first match: no rating) keep no trace of theirs.
    ban = Ban(Audit("ban-1", "ops", 0.0, "aimbot"), "1v1", "x", T0 + 50.0, T0 + 10**6)
    found = input_corrections([(1, ban)], None, "t")
    c = Cluster()
    c.matches.corrections = found
    c.runner.players = PlayerProcessor(c.modes, partitions=c.partitions, refunds=found.refunds)
    c.send(STARTED, start("m-first", [["v"], ["w"]], T0))
    c.send(FINISHED, finish("m-first", [0, 1], T0 + 40))
    lost = RECENT_MATCHES + 4
    for i in range(lost):
        at = T0 + 100.0 * (i + 1)
        c.send(STARTED, start(f"m{i}", [["x"], ["v"]], at))
        c.send(FINISHED, finish(f"m{i}", [0, 1], at + 60))
    c.send(STARTED, start("m-new", [["x"], ["n"]], T0 + 100.0 * (lost + 1)))
    c.send(FINISHED, finish("m-new", [0, 1], T0 + 100.0 * (lost + 1) + 60))
    c.run()
    before, events = c.state("v", "1v1"), list(c.ratings)
    assert before is not None and before.games == 1
    assert [e["outcome"] for e in events if e["player_id"] == "v"] == ["win"] + ["refunded"] * lost
    assert not any(e["player_id"] in ("x", "n") for e in events)
    assert c.state("x", "1v1") is None and c.state("n", "1v1") is None
    # Every player command read again (joins too: a join of a match settled long ago must
    # not make it pending again).
    c.reread(dict.fromkeys({item[:2] for item in c.delivered if item[0] == PLAYER_COMMANDS}, 0))
    c.run()
    assert c.state("v", "1v1") == before and c.ratings == events
    assert c.pending("x") == {} and c.pending("n") == {} and c.pending("v") == {}
    # The joins read again wait again only for what no record remembers, as for any match:
    # "v"'s counted first match (left the recent ids) and "x"'s matches beyond the pending
    # record's last RECENT_MATCHES; their verdicts, resent, change nothing either.
    assert c.counts["resent_verdicts"] == 1 + (lost + 1 - RECENT_MATCHES)


@pytest.mark.parametrize("seed", range(4))
def test_a_refund_among_overlapping_matches_and_abandonments_equals_replay(seed: int) -> None:
    # Players picked busy or not: many results come after an abandonment, which settles the
    # player with the ranks all equal and at its own time, live as in replay.
    matches = overlapping(seed, matches=40)
    history = as_history(matches)
    modes = Modes()
    ban = Ban(Audit("ban-1", "ops", 0.0, "aimbot"), "1v1", "p0", matches[5][2], matches[35][2])
    c, _ = drained_as_replayed(modes, history, [(1, ban)], seed)
    assert "abandoned" in {e["outcome"] for e in c.ratings}
    assert c.counts["refunded_results"] > 0
