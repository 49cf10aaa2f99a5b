"""stream/bench/rawloop.py on the local broker: the loop produces one record per event it was
given, every one of them, keyed like its event."""

from __future__ import annotations

from stream.bench.rawloop import KEYS, run_raw_loop
from stream.bench.topics import count_logs, per_topic
from stream.local.stack import LocalStack


async def test_the_raw_loop_produces_one_record_per_event() -> None:
    events = 3_000
    with LocalStack() as stack:
        run = await run_raw_loop(stack.bootstrap_servers, events, partitions=4, prefix="t")
        written = per_topic(await count_logs(stack.bootstrap_servers))

    assert run.events == events
    assert run.outputs == events
    assert run.keys == min(events, KEYS)
    assert written["t-in"].records == events
    assert written["t-out"].records == events
    assert run.events_per_second > 0
