"""The data flow topology.py wires: each agent on its inputs, one at a time; the four tables;
the web pages; the rebalance hook forgetting what a revoked partition held."""

from __future__ import annotations

from faust.types import TP

from stream.config.settings import CacheSettings, Settings, WorkerSettings
from stream.pipeline.app import Pipeline, build_worker
from stream.pipeline.topology import faust_app


def pipeline() -> Pipeline:
    # Never started: the wiring needs no broker.
    return build_worker(
        Settings(
            app_id="topo", cache=CacheSettings(writer="off"), worker=WorkerSettings(web_port=6099)
        )
    )


async def test_each_agent_reads_its_inputs_one_batch_at_a_time() -> None:
    app = pipeline().app
    agents = {name: (agent.channel.topics, agent.concurrency) for name, agent in app.agents.items()}
    assert agents == {
        "skillstream.matches": (("match-started", "match-finished", "topo-match-commands"), 1),
        "skillstream.players": (("topo-player-commands",), 1),
    }
    assert sorted(table.name for table in app.tables.values()) == [
        "clocks",
        "matches",
        "pending",
        "populations",
        "ratings",
    ]
    assert {"/metrics", "/health", "/ready"} <= set(app.web.views)


async def test_a_revoked_partition_is_rebuilt_from_the_tables_when_it_comes_back() -> None:
    p = pipeline()
    p.runner.match_partition(0, 1_780_000_000.0)
    p.runner.match_partition(1, 1_780_000_000.0)
    await p.app.on_partitions_revoked.send(revoked={TP("match-started", 1)})
    assert set(p.runner.match_partitions) == {0}


async def test_a_revoked_partition_forgets_how_far_this_worker_had_read_it() -> None:
    """Whoever owns it next reads again from the last commit: a position left from before
    would report the partition caught up while its starts are read again."""
    p = pipeline()
    topics = ("match-started", "topo-match-commands")
    tps = [(topic, number) for topic in topics for number in (0, 1)]
    p.positions.sought(dict.fromkeys(tps, 500))
    await p.app.on_partitions_revoked.send(revoked={TP("match-started", 1)})
    assert set(p.positions.positions()) == {("match-started", 0), ("topo-match-commands", 0)}


def test_each_table_partition_has_the_standby_copies_the_settings_say() -> None:
    # One by default, taken over at a fail-over (docs/decisions.md, "Fail-over: standby
    # copies, kept whole"); 0 turns them off.
    app = pipeline().app
    assert app.conf.table_standby_replicas == 1
    assert app.assignor.replicas == 1
    off = faust_app(Settings.from_env({"SKILLSTREAM_STANDBY_REPLICAS": "0"}))
    assert off.conf.table_standby_replicas == 0
