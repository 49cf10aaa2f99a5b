"""The stall trace on a real broker: it finds every record of a match and says which ones the
rating group has not committed past."""

from __future__ import annotations

import asyncio

import orjson
from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

from stream.chaos.trace import trace_matches
from stream.config.settings import Settings
from stream.local.stack import LocalStack, environment
from stream.pipeline.partitioning import partition_for
from stream.pipeline.topics import ensure_topics


async def test_the_trace_shows_each_record_of_a_match_and_whether_it_was_committed(
    stack: LocalStack,
) -> None:
    settings = Settings.from_env({**environment(stack), "SKILLSTREAM_APP_ID": "trace"})
    await ensure_topics(settings)
    home = partition_for("m-1", settings.partitions)
    producer = AIOKafkaProducer(bootstrap_servers=stack.bootstrap_servers)
    await producer.start()
    try:
        started = await producer.send_and_wait(
            settings.topics.match_started, b'{"match_id":"m-1"}', key=b"m-1", partition=home
        )
        other = await producer.send_and_wait(
            settings.topics.match_started, b'{"match_id":"m-2"}', key=b"m-2", partition=home
        )
        command = await producer.send_and_wait(
            settings.player_commands_topic, orjson.dumps([["rate", "m-1", "p1"]]), partition=1
        )
    finally:
        await producer.stop()
    # The rating group has processed the match-started record, not the command.
    group = AIOKafkaConsumer(bootstrap_servers=stack.bootstrap_servers, group_id="trace")
    await group.start()
    try:
        tp = TopicPartition(settings.topics.match_started, home)
        group.assign([tp])
        await group.commit({tp: started.offset + 1})
    finally:
        await group.stop()

    lines = await asyncio.wait_for(trace_matches(settings, ["m-1", "m-9"]), 60)

    assert lines[0] == "m-1:"
    assert f"  match-started[{home}]@{started.offset}: " + '{"match_id":"m-1"}' in lines
    assert f"  player-commands[1]@{command.offset}  (not yet committed): " in "\n".join(lines)
    assert not any(f"@{other.offset}" in line and "m-2" in line for line in lines)
    assert lines.index("m-9:") + 1 == lines.index("partitions (committed / records):")
    assert f"  match-started[{home}]: committed {started.offset + 1}, log end 2" in lines
    assert "  player-commands[1]: committed -, log end 1" in lines
