"""Where a worker keeps its tables between the changelog's records: the stores, written once.

Every durable table is a changelog topic (compacted, the truth) and a local store in front of
it; the store decides only how fast a restarted worker is ready again (docs/operations.md,
"Recovery"). A store is one entry here: its name (``SKILLSTREAM_STORE``), Faust's URL for it,
whether it lives on disk (each worker then needs its own ``SKILLSTREAM_DATA_DIR``) and the
module it needs with the install line that brings it. The settings, the topology and the
chaos harnesses read this table; the cache rebuild reads the changelog, whatever the store.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["STORES", "Store", "store_named"]


@dataclass(frozen=True, slots=True)
class Store:
    name: str
    url: str  # Faust's table store URL
    on_disk: bool
    module: str | None = None  # what it imports, None: nothing beyond the install
    install: str = ""  # the line that installs ``module``


STORES: dict[str, Store] = {
    store.name: store
    for store in (
        # Faust's memory store with its standby copies kept and used at a fail-over
        # (stream/pipeline/workarounds/standbys.py registers the scheme).
        Store("memory", "skillstream-memory://", on_disk=False),
        # Faust's RocksDB store, applying only changelog records newer than what it holds
        # (stream/pipeline/workarounds/standbys.py registers the scheme).
        Store(
            "rocksdb",
            "skillstream-rocksdb://",
            on_disk=True,
            module="rocksdict",
            install="pip install 'skillstream[rocksdb]'",
        ),
    )
}


def store_named(name: str, what: str) -> Store:
    """The store called ``name``; ValueError naming ``what`` (the variable or option) and the
    stores there are."""
    store = STORES.get(name)
    if store is None:
        raise ValueError(f"{what}: expected {' or '.join(STORES)}, got {name!r}")
    return store
