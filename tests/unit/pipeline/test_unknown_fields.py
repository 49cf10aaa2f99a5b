"""An event carrying fields skillstream does not read is rated as if they were absent, counted
once per event (where it is read, not again where it is forwarded home), and each unknown name
is said once per worker, with the field it may have meant (issue 45: ``"quiters"`` rated its
player as a plain loss with nothing said)."""

from __future__ import annotations

from typing import Any

from harness import FINISHED, STARTED, T0, Cluster, epoch_ms

from stream.pipeline.matches import UNKNOWN_NAMES_SAID
from stream.pipeline.partitioning import partition_for


def play(c: Cluster, match_id: str, extra: dict[str, Any], partition: int | None = None) -> None:
    start = {"match_id": match_id, "mode": "1v1", "started_at": epoch_ms(T0)}
    c.send(STARTED, {**start, "teams": [[f"{match_id}-a"], [f"{match_id}-b"]]}, partition)
    finish = {"match_id": match_id, "mode": "1v1", "finished_at": epoch_ms(T0 + 60)}
    c.send(FINISHED, {**finish, "ranks": [0, 1], **extra}, partition)


def ratings_of(c: Cluster) -> dict[tuple[str, str], tuple[float, str]]:
    return {(r["player_id"], r["match_id"]): (r["rating"], r["outcome"]) for r in c.ratings}


def test_unknown_fields_change_no_rating_and_are_counted_and_said_once() -> None:
    plain, marked = Cluster(), Cluster()
    for i in range(6):
        play(plain, f"m{i}", {})
        play(marked, f"m{i}", {"quiters": [f"m{i}-b"], "server": "eu-1"})
    plain.run()
    marked.run()
    assert ratings_of(marked) == ratings_of(plain)
    assert len(plain.ratings) == 12
    assert marked.counts["unknown_fields"] == 6
    assert plain.counts["unknown_fields"] == 0
    (note,) = marked.notes
    assert note.startswith(
        "match-finished events carry a field skillstream does not read, so it changes no"
        " rating: 'quiters' (did you mean 'quitters'?), 'server' (first in match 'm"
    )


def test_a_forwarded_event_is_counted_where_it_was_read_only() -> None:
    c = Cluster(partitions=4)
    home = partition_for("m1", 4)
    # Both events land off their home partition: each is read, counted, and forwarded.
    play(c, "m1", {"region": "eu"}, partition=(home + 1) % 4)
    c.run()
    assert c.counts["forwarded"] == 2
    assert c.counts["unknown_fields"] == 1
    assert len(c.ratings) == 2


def test_a_hostile_fleet_cannot_fill_the_log() -> None:
    c = Cluster()
    for i in range(UNKNOWN_NAMES_SAID + 40):
        play(c, f"m{i}", {f"field{i}": 1})
    c.run()
    assert c.counts["unknown_fields"] == UNKNOWN_NAMES_SAID + 40
    assert len(c.notes) == UNKNOWN_NAMES_SAID
