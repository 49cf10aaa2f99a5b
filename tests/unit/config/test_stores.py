"""The stores (stream/config/stores.py): one table every reader of a store name uses, so a store
is one entry there: the settings refuse another name with the list, a store whose module is
missing is refused with its install line, Faust gets its URL and the harnesses its choices."""

from __future__ import annotations

import argparse

import pytest

from stream.cli.harnesscmd import add_common
from stream.config.settings import Settings, SettingsError
from stream.config.stores import STORES, Store, store_named
from stream.pipeline.topology import faust_app


def test_an_unknown_store_is_refused_with_the_ones_there_are() -> None:
    with pytest.raises(ValueError, match=r"^--store: expected memory or rocksdb, got 'disk'$"):
        store_named("disk", "--store")
    with pytest.raises(SettingsError, match="SKILLSTREAM_STORE: expected memory or rocksdb"):
        Settings.from_env({"SKILLSTREAM_STORE": "disk"})


def test_a_store_added_to_the_table_is_taken_by_every_reader(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(
        STORES,
        "toy",
        Store("toy", "memory://", on_disk=True, module="no_such_module_here", install="get it"),
    )
    with pytest.raises(
        SettingsError, match=r"^SKILLSTREAM_STORE=toy needs no_such_module_here: get it$"
    ):
        Settings.from_env({"SKILLSTREAM_STORE": "toy"})
    monkeypatch.setitem(STORES, "toy", Store("toy", "memory://", on_disk=True))
    settings = Settings.from_env({"SKILLSTREAM_STORE": "toy"})
    assert settings.worker.store == "toy"
    assert str(faust_app(settings).conf.store) == "memory:"
    parser = argparse.ArgumentParser()
    add_common(parser)
    assert parser.parse_args(["--store", "toy"]).store == "toy"


def test_memory_and_rocksdb_are_faust_s_stores_guarded_against_late_changelog_records() -> None:
    # skillstream-memory: Faust's memory store that keeps its standby copies and their offsets;
    # both apply only changelog records newer than they hold (workarounds/standbys.py).
    assert [(s.name, s.url, s.on_disk) for s in STORES.values()] == [
        ("memory", "skillstream-memory://", False),
        ("rocksdb", "skillstream-rocksdb://", True),
    ]
