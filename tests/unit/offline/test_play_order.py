"""``skillstream replay --in-play-order`` on a history that carries the starts: the live
pipeline's order of play and its rule for overlapping matches (stream/ratings/settling.py)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from stream.config.modes import Modes
from stream.history import HistoryError, read_history
from stream.offline.replayer import Replayer, in_play_order
from stream.ratings.settling import Fate, Settled

T0 = 1_780_000_000_000  # epoch ms


def event(match_id: str, start: int | None, finish: int, teams: list[list[str]]) -> bytes:
    body: dict[str, object] = {
        "match_id": match_id,
        "mode": "1v1",
        "finished_at": T0 + finish * 1000,
        "teams": teams,
        "ranks": [0, 1],
    }
    if start is not None:
        body["started_at"] = T0 + start * 1000
    return orjson.dumps(body) + b"\n"


def history(tmp_path: Path, *lines: bytes) -> Path:
    path = tmp_path / "history.jsonl"
    path.write_bytes(b"".join(lines))
    return path


def test_a_history_with_starts_is_settled_as_the_live_pipeline_settles_it(
    tmp_path: Path,
) -> None:
    """a starts m2 100 s into m1 and m1's result comes 300 s in: a abandoned m1 (grace 60 s)
    and b is rated from the result; m2 comes after m1 although it finished first."""
    path = history(
        tmp_path,
        event("m2", 100, 200, [["a"], ["c"]]),
        event("m1", 0, 300, [["a"], ["b"]]),
    )
    replayer = Replayer(Modes())
    settled = list(in_play_order(read_history(path), replayer))
    assert [m.match_id for m, _ in settled] == ["m1", "m2"]
    fates = settled[0][1]
    assert fates["a"] == Fate(Settled.ABANDONED, T0 / 1000 + 100)
    assert fates["b"] == Fate(Settled.RESULT, T0 / 1000 + 300)
    updates = replayer.apply_settled(*settled[0])
    # Abandoning is a loss, though the result says a won; b lost by the result.
    assert updates["a"].score == 0.0 and updates["a"].state.rating < 1500
    assert updates["b"].score == 0.0 and updates["b"].state.rating < 1500


def test_without_starts_every_match_is_rated_from_its_result_by_finish(tmp_path: Path) -> None:
    path = history(
        tmp_path,
        event("m2", None, 200, [["a"], ["c"]]),
        event("m1", None, 300, [["a"], ["b"]]),
    )
    settled = list(in_play_order(read_history(path), Replayer(Modes())))
    assert [m.match_id for m, _ in settled] == ["m2", "m1"]
    assert all(f.how is Settled.RESULT for _, fates in settled for f in fates.values())


@pytest.mark.parametrize(
    ("started_at", "reason"),
    [("soon", "line 1: started_at: "), (T0 + 999_000, "line 1: started_at: after finished_at")],
)
def test_a_bad_start_names_the_line(tmp_path: Path, started_at: object, reason: str) -> None:
    body = orjson.loads(event("m1", None, 300, [["a"], ["b"]]))
    body["started_at"] = started_at
    path = history(tmp_path, orjson.dumps(body))
    with pytest.raises(HistoryError, match=reason):
        list(read_history(path))
