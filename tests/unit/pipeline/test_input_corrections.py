"""A re-rating worker's corrections (stream/corrections/inputs.py) on the in-memory cluster:
with matches voided and players erased, every rating equals `replay --corrections` of the same
history (the ledger replay uses), the learned population included; the erased ids appear in
no topic and no table; voided events are counted, not dead-lettered."""

from __future__ import annotations

import pytest
from harness import FINISHED, STARTED, Cluster, drain_in_order
from replay_1v1 import live_states, replayed_history
from test_learned_population import PARTITIONS, learning, send_all, simulated

from stream.corrections.inputs import InputCorrections, input_corrections
from stream.corrections.ledger import Ledger
from stream.corrections.pseudonyms import pseudonym
from stream.corrections.records import Audit, Correction, Erase, Void
from stream.errors import UserError
from stream.history import HistoryMatch

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
