"""Live against replay, as the real-broker tests compare them: each player's last
rating-changed event and what `skillstream replay` of the same matches gives them."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Hashable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import orjson

from stream.simulation import SimulatedMatch, write_jsonl

K = TypeVar("K", bound=Hashable)


def by_player(event: Mapping[str, Any]) -> str:
    player: str = event["player_id"]
    return player


def latest(
    events: Iterable[dict[str, Any]], key: Callable[[dict[str, Any]], K]
) -> dict[K, dict[str, Any]]:
    """The event of the highest version under each ``key`` (``by_player``: each player's)."""
    last: dict[K, dict[str, Any]] = {}
    for event in events:
        at = key(event)
        if at not in last or event["version"] > last[at]["version"]:
            last[at] = event
    return last


def assert_live_equals_replay(
    last: Mapping[str, Mapping[str, Any]],
    matches: Iterable[SimulatedMatch],
    tmp_path: Path,
    *options: str,
) -> None:
    """`skillstream replay` of ``matches`` (with ``options``) rates the players of ``last``, no
    one else, each to the rating, deviation, volatility, rank points and games of their last
    rating-changed event there."""
    history = tmp_path / "history.jsonl"
    with history.open("w") as f:
        write_jsonl(matches, f)
    out = tmp_path / "ratings.jsonl"
    replay = ["replay", str(history), *options, "--out", str(out)]
    subprocess.run([sys.executable, "-m", "stream", *replay], check=True)
    replayed = [orjson.loads(line) for line in out.read_text().splitlines()]
    assert len(replayed) == len(last)
    for r in replayed:
        live = last[r["player_id"]]
        assert (live["rating"], live["deviation"], live["volatility"]) == (
            r["rating"],
            r["deviation"],
            r["volatility"],
        )
        assert (live["rank_points"], live["games"]) == (r["rank_points"], r["games"])
