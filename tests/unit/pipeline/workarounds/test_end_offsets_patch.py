"""stream/pipeline/workarounds/endoffsets.py: Faust's recovery builds its end offsets through
the patch (the broker's bug and the scan itself, on the local broker:
tests/integration/pipeline/workarounds/test_end_offsets.py)."""

from __future__ import annotations

from collections import Counter
from typing import Any

import faust
from faust.tables.recovery import Recovery
from faust.types import TP

from stream.pipeline.workarounds.endoffsets import verify_end_offsets

EMPTY, UNKNOWN = TP("app-ratings-changelog", 0), TP("app-ratings-changelog", 1)


class Consumer:
    """Reports partitions the scan leaves alone (empty or unknown): no broker is asked."""

    def __init__(self) -> None:
        self.asked: list[TP] = []

    async def highwaters(self, *tps: TP) -> dict[TP, int | None]:
        self.asked.extend(tps)
        return {EMPTY: 0, UNKNOWN: None}


async def test_recovery_reads_its_end_offsets_through_the_scan_once() -> None:
    verify_end_offsets("127.0.0.1:1", {})
    verify_end_offsets("127.0.0.1:1", {})
    method: Any = Recovery._build_highwaters
    assert not hasattr(method.__wrapped__, "__wrapped__")
    app = faust.App("end-offsets-test", broker="kafka://127.0.0.1:1", autodiscover=False)
    consumer = Consumer()
    destination: Counter[TP] = Counter()
    recovery: Any = Recovery(app, tables=app.tables)
    await recovery._build_highwaters(consumer, {EMPTY, UNKNOWN}, destination, "active")
    assert sorted(consumer.asked) == [EMPTY, UNKNOWN]
    # Faust's own step after the end offsets is kept: the last offset to read, -1 for none.
    assert destination == {EMPTY: -1, UNKNOWN: -1}
