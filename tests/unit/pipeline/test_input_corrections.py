"""A re-rating worker's corrections (stream/corrections/inputs.py) on the in-memory cluster:
with matches voided, players erased and ratings adjusted, every rating equals `replay
--corrections` of the same history (the ledger replay uses), the learned population included,
and so after a crash rolled back to a commit; the erased ids appear in no topic and no table;
voided events are counted, not dead-lettered; an adjustment is published once."""

from __future__ import annotations

import json
import random
from pathlib import Path

import orjson
import pytest
from harness import FINISHED, STARTED, Cluster, drain_in_order
from jsonschema import Draft202012Validator
from replay_1v1 import live_states, replayed_history
from test_learned_population import PARTITIONS, learning, send_all, simulated
from toy_correction import Cap, registered

import stream
from stream.config.modes import Modes, parse_modes
from stream.corrections.inputs import InputCorrections, input_corrections
from stream.corrections.ledger import Ledger
from stream.corrections.pseudonyms import pseudonym
from stream.corrections.records import Adjust, Audit, Correction, Erase, Void
from stream.errors import UserError
from stream.history import HistoryMatch
from stream.offline.corrected import Applied, rated_in_order
from stream.offline.explaining import explained_changes
from stream.offline.replayer import Replayer
from stream.pipeline.players import PlayerProcessor

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
    c.runner.players = PlayerProcessor(modes, partitions=PARTITIONS, adjustments=found.adjustments)
    return c


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
    ledger = Ledger(corrections, KEY)
    c = adjusted_cluster(modes, corrections)
    send_all(c, history)
    drain_in_order(c, seed)
    assert not c.dead_letters
    live = live_states(c.ratings)
    assert live == replayed_history(history, modes, ledger)
    adjusted_events = [e for e in c.ratings if e["outcome"] == "adjusted"]
    assert len(adjusted_events) == 13
    assert all(erased not in orjson.dumps(e).decode() for e in c.ratings)
    by_id = {e["match_id"]: e for e in adjusted_events}
    shifted, assigned = corrections[2][1], corrections[3][1]
    assert isinstance(shifted, Adjust) and isinstance(assigned, Adjust)
    assert by_id["adj-0"]["adjustment"] == {"by": "ops", "reason": "test 0", "shift": shifted.value}
    low, high = modes.get("m").rating_bounds
    assert by_id["adj-1"]["rating"] == min(max(assigned.value, low), high)
    schema = json.loads(
        (Path(stream.__file__).parent / "schemas/rating-changed.schema.json").read_text()
    )
    validator = Draft202012Validator(schema)
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


@pytest.mark.parametrize("seed", range(6))
def test_adjustments_after_a_crash_rolled_back_to_a_commit_apply_once(seed: int) -> None:
    modes = learning()
    history = simulated(60 + seed, matches=300, players=200)
    corrections = adjustments_of(history, seed)
    ledger = Ledger(corrections, KEY)
    c = adjusted_cluster(modes, corrections)
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
    live = {
        k: (e["rating"], e["deviation"], e["volatility"], e["rank_points"], e["games"])
        for k, e in ((k, orjson.loads(v)) for k, v in seen.items())
    }
    assert live == replayed_history(history, modes, ledger)


def test_an_event_that_names_no_erased_id_keeps_its_bytes() -> None:
    corrections = InputCorrections(erased=frozenset({pseudonym(KEY, "alice")}), key=KEY)
    raw = b'{"match_id":"m1","mode":"1v1","started_at":1,"teams":[["bob"],["carol"]]}'
    assert corrections.renamed(raw) is raw
    renamed = corrections.renamed(raw.replace(b"bob", b"alice"))
    assert pseudonym(KEY, "alice").encode() in renamed and b"alice" not in renamed
    assert corrections.renamed(b"not json") == b"not json"


def test_a_worker_refuses_what_it_cannot_apply_with_the_line() -> None:
    window = Void(AUDIT, player="alice", since=0.0, until=10.0)
    with pytest.raises(UserError, match=r"^f line 3: void 'c-1' names a player"):
        input_corrections([(3, window)], None, "f")
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
        ledger = Ledger(corrections, KEY)
        c = adjusted_cluster(modes, corrections)
        send_all(c, history)
        drain_in_order(c, seed)
        assert not c.dead_letters
        assert live_states(c.ratings) == replayed_history(history, modes, ledger)
    capped = [e for e in c.ratings if e["outcome"] == "adjusted"]
    assert sorted(e["match_id"] for e in capped) == [f"cap-{n}" for n in range(5)]
    assert all(
        e["adjustment"] == {"by": "ops", "reason": "test", "ceiling": 1450.0} for e in capped
    )
    assert all(e["rating"] <= 1450.0 for e in capped)
