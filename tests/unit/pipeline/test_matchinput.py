"""stream/pipeline/matchinput.py: a match event is checked before the match side uses it, and
a refusal is one reason naming the limit or the field (the dead letter's)."""

from __future__ import annotations

import orjson

from stream.config.modes import Modes
from stream.events import EventError, EventLimits
from stream.pipeline.matchinput import ReadEvent, read_event
from stream.ratings.modeconfig import ModeConfig

WALL = 1_780_000_000.0
MODES = Modes()


def mode_of(name: str) -> ModeConfig:
    if name == "banned":
        raise EventError("mode: 'banned' is not in the modes file")
    return MODES.get(name)


def read(value: bytes, kind: str = "started", **limits: int) -> ReadEvent | str:
    return read_event(
        kind,
        b"m-1",
        value,
        limits=EventLimits(**limits),
        mode_of=mode_of,
        wall=WALL,
        max_future_seconds=300.0,
    )


def start(**fields: object) -> bytes:
    event = {
        "match_id": "m-1",
        "mode": "1v1",
        "started_at": int(WALL * 1000),
        "teams": [["a"], ["b"]],
    }
    return orjson.dumps({**event, **fields})


def test_a_valid_event_comes_with_its_mode_and_time() -> None:
    read_back = read(start())
    assert isinstance(read_back, ReadEvent)
    assert (read_back.event.match_id, read_back.mode.name, read_back.at) == ("m-1", "1v1", WALL)


def test_each_refusal_names_what_is_wrong() -> None:
    assert read(start(), max_bytes=20) == (
        f"match-started: event is {3 + len(start())} bytes (key 3, value {len(start())}), over "
        "the limit of 20 bytes (SKILLSTREAM_MAX_EVENT_BYTES)"
    )
    garbled = read(b"{", kind="finished")
    assert isinstance(garbled, str) and garbled.startswith("match-finished: ")
    assert read(start(mode="banned")) == "match-started: mode: 'banned' is not in the modes file"
    ahead = read(start(started_at=int((WALL + 3600) * 1000)))
    assert ahead == (
        "match-started: started_at is 3,600 s ahead of the worker's clock (limit 300 s, "
        "SKILLSTREAM_MAX_FUTURE_SECONDS)"
    )
