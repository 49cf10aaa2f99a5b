"""The simulated fleet's partitioners: CRC32 as librdkafka's default, murmur2, no key.

The known values come from librdkafka itself: confluent-kafka 2.16.1 (librdkafka 2.16.0) with
no partitioner setting, producing these keys to topics of 4 and 7 partitions on the local
stack and reading the partitions back from the delivery reports (the same comparison runs
against the broker in tests/integration/test_fleet_partitioning.py).
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stream.cli.main import build_parser
from stream.pipeline.partitioning import partition_for
from stream.simulation.partitioners import (
    CRC32,
    KEYLESS,
    MURMUR2,
    PARTITIONINGS,
    crc32_partitioner,
)

LIBRDKAFKA = [
    (b"m-1001", 4, 3),
    (b"m-1001", 7, 4),
    (b"m0000", 4, 3),
    (b"m0000", 7, 4),
    (b"match-7f3a9c", 4, 0),
    (b"match-7f3a9c", 7, 2),
    ("partie-é".encode(), 4, 0),
    ("partie-é".encode(), 7, 1),
    # CRC-32's published check value is 0xCBF43926 for these nine bytes: 2 mod 4, 5 mod 7.
    (b"123456789", 4, 2),
    (b"123456789", 7, 5),
]


@pytest.mark.parametrize(("key", "partitions", "expected"), LIBRDKAFKA)
def test_crc32_picks_the_partition_librdkafka_picks(
    key: bytes, partitions: int, expected: int
) -> None:
    every = list(range(partitions))
    assert crc32_partitioner(key, every, every) == expected


@given(st.binary(min_size=1, max_size=64), st.integers(1, 64))
def test_a_key_always_goes_to_the_same_partition_whatever_is_available(
    key: bytes, partitions: int
) -> None:
    every = list(range(partitions))
    picked = crc32_partitioner(key, every, every)
    assert 0 <= picked < partitions
    assert crc32_partitioner(key, every, every[:1]) == picked


@given(st.sampled_from([None, b""]), st.integers(2, 16), st.data())
def test_no_key_or_an_empty_one_goes_to_an_available_partition(
    key: bytes | None, partitions: int, data: st.DataObject
) -> None:
    every = list(range(partitions))
    available = data.draw(st.lists(st.sampled_from(every), min_size=1, unique=True))
    assert crc32_partitioner(key, every, available) in available


def test_murmur2_puts_every_keyed_event_on_its_home_partition() -> None:
    every = list(range(8))
    for i in range(200):
        match_id = f"m{i:04d}"
        assert MURMUR2.partitioner(match_id.encode(), every, every) == partition_for(match_id, 8)


def test_crc32_misses_the_home_partition_about_three_times_in_four() -> None:
    """What makes the bench's crc32 runs measure the forward hop: with 4 partitions, CRC32 and
    murmur2 agree about as often as two independent picks do."""
    every = list(range(4))
    ids = [f"m{i:05d}" for i in range(4000)]
    off = sum(crc32_partitioner(m.encode(), every, every) != partition_for(m, 4) for m in ids)
    assert 0.70 < off / len(ids) < 0.80


def test_only_keyless_sends_no_key_and_the_bench_offers_each_by_its_name() -> None:
    assert [p.keyed for p in (MURMUR2, CRC32, KEYLESS)] == [True, True, False]
    parser = build_parser()
    for name, partitioning in PARTITIONINGS.items():
        args = parser.parse_args(["bench", "pipeline", "--partitioner", name])
        assert PARTITIONINGS[args.partitioner] is partitioning
        assert partitioning.name == name
    assert parser.parse_args(["bench", "pipeline"]).partitioner == MURMUR2.name
