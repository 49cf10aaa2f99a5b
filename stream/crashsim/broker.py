"""The simulated Kafka: topic logs, the consumer group's committed offsets, and the tables'
changelogs with the boundary of every flush.

Only what the pipeline's promises rest on is modelled: a partition's records keep their order
and their offsets; a commit moves the group's offsets; a changelog partition is appended one
flush at a time, and a restore reads a prefix of it that ends at a flush boundary (all of it,
unless the schedule says the broker reported its end short, as Tansu 0.6 did, or the store came
back from an older copy). Nothing is ever deleted, so every input a restart needs is there
(retention is the caller's to model: :attr:`Broker.log_start`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Broker", "Changelog"]

TopicPartition = tuple[str, int]
Record = tuple[bytes | None, bytes | None]


@dataclass
class Changelog:
    """One table partition's changelog: its records, and where each flush ended."""

    records: list[Record] = field(default_factory=list)
    # records[:ends[i]] is the changelog after the i-th flush that wrote to it.
    ends: list[int] = field(default_factory=list)

    def append(self, batch: list[Record]) -> None:
        if batch:
            self.records.extend(batch)
            self.ends.append(len(self.records))

    def truncate(self, flushes: int) -> None:
        """Keep only the first ``flushes`` flushes: the rest is lost for good (an unclean
        leader election, a changelog restored from an older copy, deleted and made again)."""
        end = self.ends[flushes - 1] if flushes else 0
        del self.records[end:]
        del self.ends[flushes:]

    def restored(self) -> dict[bytes, bytes]:
        """The table partition as a restore finds it: the last value of each key,
        tombstones applied."""
        table: dict[bytes, bytes] = {}
        for key, value in self.records:
            assert key is not None
            if value is None:
                table.pop(key, None)
            else:
                table[key] = value
        return table


@dataclass
class Broker:
    """Every topic partition's records, the group's commits and the changelogs."""

    logs: dict[TopicPartition, list[bytes]] = field(default_factory=dict)
    committed: dict[TopicPartition, int] = field(default_factory=dict)
    changelogs: dict[tuple[str, int], Changelog] = field(default_factory=dict)
    # The first offset still held per partition (records below it gone to retention).
    log_start: dict[TopicPartition, int] = field(default_factory=dict)
    # The output topic (rating-changed) and the dead letters, in the order they arrived.
    ratings: list[bytes] = field(default_factory=list)
    dead_letters: list[str] = field(default_factory=list)

    def append(self, topic: str, partition: int, value: bytes) -> int:
        log = self.logs.setdefault((topic, partition), [])
        log.append(value)
        return len(log) - 1

    def end(self, topic: str, partition: int) -> int:
        return len(self.logs.get((topic, partition), ()))

    def changelog(self, table: str, partition: int) -> Changelog:
        found = self.changelogs.get((table, partition))
        if found is None:
            found = self.changelogs[table, partition] = Changelog()
        return found
