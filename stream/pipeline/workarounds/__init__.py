"""Every workaround of Faust, aiokafka or the local broker, in one place.

Nothing outside this package patches a method of those libraries or reads one of their private
attributes. Each module says what it works around, why (what broke), the upstream issue, the
versions it was written for, and which test fails when it stops working or is no longer needed.

| module | works around | upstream |
| --- | --- | --- |
| fetchwait.py | Faust hard-codes the worker consumer's fetch wait (1.5 s per hop) | none found |
| committed.py | aiokafka's ``seek_to_committed`` skips partitions never committed | aiokafka#1003 |
| endoffsets.py | Tansu reports end offsets too low, so recovery stops short | none found |
| acks.py | ``take_events`` acks a batch its agent abandoned | faust#189, faust#315 |
| beforecommit.py | no hook between choosing offsets to commit and committing | none found |
| headgap.py | Faust commits past unacked records at a partition's head | faust#606 |
| events.py | no public way to set Faust's current event for table writes | faust#497 |
| private.py | readiness and the watchdog need Faust state it does not expose | none found |
| tablestore.py | no batched changelog writes: the pipeline writes them itself | (faust#497) |
| ../watchdog.py | a record dropped while the flow is suspended counts as read | faust#629, #221 |
| standbys.py | standby copies unused (memory store), and records lost (reader) | robinhood#583 |
| clientlogs.py | aiokafka logs one line per attempt while a broker is down | none found |
| unread.py | records not handed on never fetched again; those before a seek undo it | none found |

watchdog.py uses public calls only (a seek, a high watermark) and the reads of private.py, so
it stays a module of stream/pipeline/; it is listed here because it exists for those issues.

:func:`install` applies the patches (fetchwait, committed, endoffsets, headgap, beforecommit,
unread), registers the stores that keep standby copies (standbys) and the log filter
(clientlogs); the others are called where they are needed. The versions they were written
for are :data:`WRITTEN_FOR`, pinned in pyproject.toml;
tests/unit/pipeline/workarounds/test_versions.py fails on any other version, so an upgrade
revisits every workaround here.
"""

from __future__ import annotations

from stream.config.settings import Settings
from stream.pipeline.workarounds.beforecommit import patch_before_commit
from stream.pipeline.workarounds.clientlogs import quiet_kafka_client_repeats
from stream.pipeline.workarounds.committed import patch_seek_to_committed
from stream.pipeline.workarounds.endoffsets import verify_end_offsets
from stream.pipeline.workarounds.fetchwait import patch_fetch_wait
from stream.pipeline.workarounds.headgap import patch_head_gap
from stream.pipeline.workarounds.standbys import register as register_stores
from stream.pipeline.workarounds.unread import patch_unread

__all__ = ["WRITTEN_FOR", "install"]

# The distributions every workaround here was written and tested against.
WRITTEN_FOR = {"faust-streaming": "0.15.3", "aiokafka": "0.14.0", "mode-streaming": "0.7.1"}


def install(settings: Settings) -> None:
    """Apply every patch for a worker with ``settings``; calling it again patches nothing twice
    and only updates the values the patches read (the fetch wait, the brokers to scan)."""
    quiet_kafka_client_repeats()
    patch_fetch_wait(max(1, round(settings.kafka.fetch_max_wait_seconds * 1000)))
    patch_seek_to_committed()
    patch_head_gap()
    patch_before_commit()
    patch_unread()
    verify_end_offsets(settings.kafka.bootstrap_servers, settings.kafka.security.aiokafka_options())
    register_stores()
