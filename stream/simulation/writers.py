"""Writing simulated matches as a CSV history or as JSON lines of match-finished events."""

from __future__ import annotations

import csv
from collections.abc import Iterable
from typing import Any, TextIO

import orjson

from stream.events import format_time
from stream.simulation.core import SimulatedMatch

CSV_HEADER = ("played_at", "player_a", "player_b", "score_a")


def match_finished_event(match: SimulatedMatch) -> dict[str, Any]:
    """The match-finished event for ``match`` (the shape of match-finished.schema.json)."""
    event: dict[str, Any] = {
        "match_id": match.match_id,
        "mode": match.mode,
        "finished_at": format_time(match.at),
        "teams": [list(team) for team in match.teams],
        "ranks": list(match.ranks),
    }
    if match.quitters:
        # Sorted: frozenset order depends on string hashing, which varies per process.
        event["quitters"] = sorted(match.quitters)
    if match.parties:
        # Each party sorted, then the parties (disjoint, so by their first id): one spelling
        # of the same parties, whatever order a caller built them in. Never an empty list:
        # no party, no field, so a history without parties reads as it always did.
        event["parties"] = sorted(sorted(party) for party in match.parties)
    if match.stats is not None:
        event["stats"] = {
            player: {"score": s.score, "seconds": s.seconds} for player, s in match.stats.items()
        }
    return event


def write_jsonl(matches: Iterable[SimulatedMatch], file: TextIO) -> int:
    """Write one match-finished event per line; returns the number written."""
    count = 0
    for match in matches:
        file.write(orjson.dumps(match_finished_event(match)).decode())
        file.write("\n")
        count += 1
    return count


def write_csv(matches: Iterable[SimulatedMatch], file: TextIO) -> int:
    """Write 1v1 matches as ``played_at,player_a,player_b,score_a``; returns the rows written.
    (A 1v1 side has no room for a party, so no column is lost.)

    ``file`` should be opened with ``newline=""`` as the csv module asks. Team and FFA matches
    do not fit this format: they raise ValueError (write JSON lines instead).
    """
    writer = csv.writer(file, lineterminator="\n")
    writer.writerow(CSV_HEADER)
    count = 0
    for match in matches:
        teams = match.teams
        if len(teams) != 2 or len(teams[0]) != 1 or len(teams[1]) != 1:
            raise ValueError(
                f"match {match.match_id} is not 1v1; a CSV history holds only 1v1 matches, "
                "write JSON lines instead"
            )
        rank_a, rank_b = match.ranks
        score = "1" if rank_a < rank_b else "0" if rank_a > rank_b else "0.5"
        writer.writerow((format_time(match.at), teams[0][0], teams[1][0], score))
        count += 1
    return count
