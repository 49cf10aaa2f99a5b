"""What processing a batch produces, collected before anything is sent.

The batch runner (stream/pipeline/batches.py) sends an outbox and waits for the broker to
acknowledge it *before* it writes the batch's state changes. Reports to the event-time combiner
(``after``) go in a second send, once the broker has acknowledged the first: whatever the
combiner sends after reading one then lands after everything the report covers
(docs/event-time.md). So a state change in a table
always means its outputs are already in Kafka, and an input redelivered after a crash either
finds its change missing (and is processed again, producing the same bytes) or present (and is
skipped).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any

from stream.deadletters import DeadLetter
from stream.protocol import MatchCommand, PlayerCommand


@dataclass
class Outbox:
    """Commands for other partitions (packed per partition), rating changes and dead letters."""

    player_commands: defaultdict[int, list[PlayerCommand]] = field(
        default_factory=lambda: defaultdict(list)
    )
    match_commands: defaultdict[int, list[MatchCommand]] = field(
        default_factory=lambda: defaultdict(list)
    )
    # Match commands sent once the broker has acknowledged everything else.
    after: defaultdict[int, list[MatchCommand]] = field(default_factory=lambda: defaultdict(list))
    ratings: list[dict[str, Any]] = field(default_factory=list)
    dead_letters: list[DeadLetter] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
    # Kafka timestamps (ms) of the match-finished events behind this batch's rating changes.
    finished_ms: list[int] = field(default_factory=list)
    # Warnings for the worker's log (the processors hold no logger: they stay pure).
    notes: list[str] = field(default_factory=list)

    def to_player(self, partition: int, command: PlayerCommand) -> None:
        self.player_commands[partition].append(command)

    def to_match(self, partition: int, command: MatchCommand) -> None:
        self.match_commands[partition].append(command)

    def to_match_after(self, partition: int, command: MatchCommand) -> None:
        """``command`` to match partition ``partition`` once the rest is in the broker."""
        self.after[partition].append(command)

    def rating(self, event: dict[str, Any], finished_ms: int | None = None) -> None:
        self.ratings.append(event)
        if finished_ms is not None:
            self.finished_ms.append(finished_ms)
        self.counts[f"ratings_{event['outcome']}"] += 1

    def dead_letter(self, letter: DeadLetter) -> None:
        self.dead_letters.append(letter)
        self.counts["dead_lettered"] += 1

    def count(self, what: str, n: int = 1) -> None:
        self.counts[what] += n

    def note(self, text: str) -> None:
        self.notes.append(text)

    def __bool__(self) -> bool:
        return bool(
            self.player_commands
            or self.match_commands
            or self.after
            or self.ratings
            or self.dead_letters
        )
