"""The protocol's wire and table bytes, held literally: what the pipeline wrote before the
protocol had types, and must go on writing (a worker upgraded mid-stream reads the old one's).

Each literal was taken from the worker's own output (commands on the command topics, records in
its tables); decoding it and encoding it again gives the same bytes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from stream.deadletters import Origin
from stream.protocol import (
    CLOCKS,
    MATCHES,
    PENDING,
    POPULATIONS,
    PROTOCOL_VERSION,
    RATINGS,
    Abandon,
    Adjusting,
    Cancel,
    Combined,
    Command,
    Forward,
    Join,
    Ordered,
    PlayerReport,
    Position,
    Progress,
    ProtocolError,
    Rate,
    RatedPlayer,
    Report,
    Snapshot,
    StoredMessage,
    TableCodec,
    Tick,
    View,
    Watermark,
    decode_commands,
    decode_match_command,
    decode_message,
    decode_player_command,
    decode_rating_key,
    encode_command,
    encode_message,
    rating_key,
)
from stream.ratings.skill import PlayerState, PlayerStats

STATE = b"[1401.6173841618686,90.78664805881002,0.05999489876729625,0,5,1780000200.0]"

MATCH_COMMANDS = [
    b'["snap","sim5-1","p000001",null,false]',
    b'["snap","m","p",' + STATE + b",true]",
    # Since version 5 a snapshot carries its match's start (read before it, it waits for it).
    b'["snap","m","p",' + STATE + b",false,1780000100.5]",
    b'["abandon","sim5-27","p000001",1780000950.0]',
    b'["fwd","started",{"key":null,"value":"{\\"match_id\\":\\"sim5-1\\",\\"mode\\":\\"1v1\\",'
    b'\\"started_at\\":1779999600000,\\"teams\\":[[\\"p000001\\"],[\\"p000000\\"]]}",'
    b'"origin":["match-started",1,1,null]}]',
    b'["fwd","finished",{"key":"m-\xc3\xbf","value":"{}","origin":["match-finished",0,7,1780000000123]}]',
    b'["tick",1780001960.0]',
    # Version 3: a match partition's progress (behind on match-started, caught up on
    # match-finished), and one that has read nothing yet.
    b'["progress",3,1780000170.25,1780000100.5,null,1780000160.0]',
    b'["progress",0,1780000170.25,0.0,0.0,null]',
    # Version 4: a player partition's abandon requests are out up to a start.
    b'["awm",1,1780000099.5]',
    # Version 6: a learning mode's snapshot carries the player's last line-up key; a match
    # partition's closed windows and their evidence (version 8: eleven integers per mode and
    # window, the drift's two last; version 9: thirteen, the debut offset's two last).
    b'["snap","m","p",' + STATE + b",false,1780000100.5,1234567890123]",
    b'["closed",2,1780012800.0,{"ranked":[[20601,[-5,7,4294967296,0,0,3,4,11,12,-3,9,-7,5]]]}]',
    # Version 8: a learning mode's state carries its drift slopes.
    b'["snap","m","p",[1500.0,120.5,0.06,10,3,1780000000.0,-12.5,840.25],false,'
    b"1780000100.5,1234567890123]",
    b'["closed",0,1780012800.0,{}]',
    # Version 10: the event-time combiner's reports and views (docs/event-time.md).
    b'["rep",3,1780000000007001,1780000000123001,17,1780000100.5,1780000160.0,1780000160.0,'
    b"null,[],true]",
    b'["rep",0,5,0,0,0.0,0.0,null,1780000050.0,[[1,1780000020.5],[3,1780000030.0]],false]',
    b'["prep",2,1780000099.5,false,1780000000123456789,1780000000987654321,12]',
    b'["prep",0,null,true,1780000000123456789,0,0]',
    b'["view",1780000000123001,18,1780000100.5,null,1780000160.0,1780000090.0,true]',
    b'["view",1780000000123001,19,null,null,null,null,false]',
    # Version 12: a match that names a party sends the party edge's evidence, two integers more.
    b'["closed",2,1780012800.0,{"ranked":[[20601,[-5,7,4294967296,0,0,3,4,11,12,-3,9,-7,5,-2,'
    b"6]]]}]",
]
PLAYER_COMMANDS = [
    b'["join","sim5-1","p000001","1v1",1780000000.0,0]',
    b'["rate","sim5-1","1v1",1780000000.0,[["p000001"],["p000000"]],[0,1],null,'
    b'{"p000001":null,"p000000":null},[["p000001",null,null]],null]',
    b'["rate","sim5-6","1v1",1780000250.0,[["p000000"],["p000001"]],[1,0],'
    b'{"p000000":[38.0,300.5]},{"p000000":' + STATE + b',"p000001":null},'
    b'[["p000000",null,null],["p000001",0.0,"abandoned"]],1780000250123]',
    b'["cancel","sim5-4",["p000001"]]',
    b'["wm",2,1780000099.5]',
    # Version 6: a learning mode's rate carries the population in force (version 8: its drift
    # period fifth; version 9: its debut offset last).
    b'["rate","sim5-7","1v1",1780000300.0,[["p000000"],["p000001"]],[0,1],null,'
    b'{"p000000":null,"p000001":null},[["p000000",null,null]],1780000300123,'
    b"[250.5,100.0,0.25,1.05,7.5,-212.5]]",
    # Version 7: a re-rating worker's adjustment, sent by the player's partition to itself.
    b'["adj","p000001","c-42"]',
    # Version 10: the combiner's watermark, and its greeting (asks for a report).
    b'["gwm",1780000099.5,1780000000987654321,12]',
    b'["gwm",null,1780000000987654321,1]',
    # Version 12: a match's parties, 12th, after a population with its party edge seventh, or
    # after none (a mode that does not learn).
    b'["rate","m9","4v4",1780000300.0,[["a","b"],["c","d"]],[0,1],null,'
    b'{"a":null,"b":null,"c":null,"d":null},[["a",null,null]],1780000300123,'
    b'[250.5,100.0,0.25,1.05,7.5,-212.5,42.5],[["a","b"]]]',
    b'["rate","m9","4v4",1780000300.0,[["a","b"],["c","d"]],[0,1],null,'
    b'{"a":null,"b":null,"c":null,"d":null},[["c",null,null]],1780000300123,null,[["c","d"]]]',
]
MATCH_ENTRIES = [
    b'{"mode":"1v1","teams":[["p000001"],["p000000"]],"start":1780000750.0,"snaps":{"p000001":'
    + STATE
    + b',"p000000":null},"fin":{"at":1780000750.0,"ts":null,"ranks":[0,1],"quitters":[],'
    b'"stats":{"p000001":[29.0,300.5]}},"wait":null,"aband":{},"settled":["p000001","p000000"],'
    b'"done":3559114300.0}',
    b'{"mode":"1v1","teams":null,"start":null,"snaps":{},"fin":{"at":1780000100.0,'
    b'"ts":1780000100250,"ranks":[1,0],"quitters":["b"],"stats":null},"wait":{"message":'
    b'{"key":"m1","value":"{\\"match_id\\":\\"m1\\"}","origin":["match-finished",2,41,'
    b'1780000100250]},"until":1780000220.0},"aband":{},"settled":[],"done":null}',
    b'{"mode":"2v2","teams":[["a","b"],["c","d"]],"start":1780000000.0,"snaps":{"a":null},'
    b'"fin":null,"wait":null,"aband":{"b":1780000300.0},"settled":["b"],"done":null}',
    # Version 6: a learning mode's entry keeps its players' line-up keys from the snapshots.
    b'{"mode":"2v2","teams":[["a","b"],["c","d"]],"start":1780000000.0,"snaps":{"a":null},'
    b'"fin":null,"wait":null,"aband":{},"settled":[],"done":null,"lines":{"a":42}}',
    b'{"mode":"1v1","teams":[["a"],["b"]],"start":1780000000.0,"snaps":{"a":null,"b":null},'
    b'"fin":{"at":1780000060.0,"ts":null,"ranks":[0,1],"quitters":[],"stats":null},"wait":null,'
    b'"aband":{},"settled":["a","b"],"done":1780000060.0,'
    b'"ev":[-5,7,4294967296,0,0,0,0,11,12,3,4,-6,8]}',
    # Version 12: a finish that names a party keeps it; its evidence has the party edge's sums.
    b'{"mode":"2v2","teams":[["a","b"],["c","d"]],"start":1780000000.0,"snaps":{"a":null},'
    b'"fin":{"at":1780000060.0,"ts":null,"ranks":[0,1],"quitters":[],"stats":null,'
    b'"parties":[["a","b"]]},"wait":null,"aband":{},"settled":[],"done":null,'
    b'"ev":[-5,7,4294967296,0,0,0,0,11,12,3,4,-6,8,-2,6]}',
]
# A match partition's side of the learned populations (version 6).
POPULATION_RECORDS = [
    b'{"u":null,"m":{},"h":{},"ch":{}}',
    b'{"u":1780012800.0,"m":{"0":1780012800.0,'
    b'"3":1780009200.0},"h":{"ranked":[[20601,0,[-5,7,4294967296,0,0,3,4,11,12,-1,2,-3,6]],'
    b'[20601,3,[0,0,0,0,0,1,1,0,0,0,0,0,0]]]},"ch":{"ranked":{"set":"1.0|100.0|1.0|1.0|x",'
    b'"i":[138.97424,100.0,1.0,1.0,14.0,-300.0],"c":[150.25,100.0,0.5,1.0625,9.5,-250.5],'
    b'"s":[0.5,1.0,2.0,0.0,0.0,3.0,4.0,0.25,0.125,-0.5,3.0,-0.75,0.5],'
    b'"k":[0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0,0.0],'
    b'"f":20600,"st":[[20602,[150.25,100.0,0.5,1.0625,9.5,-250.5]]]}}}',
]
RATING_RECORDS = [
    b'{"s":[1006.0143978592619,72.81300287645881,0.05992031170168974,1625,99,1780012400.0],'
    b'"v":99,"r":["sim5-2","sim5-3"]}',
    b'{"s":[1016.0,0.0,null,12,1,null],"v":1,"r":["m"]}',
    # Version 6: a learning mode's record keeps the line-up key of the last team match.
    b'{"s":[1016.0,0.0,null,12,1,null],"v":1,"r":["m"],"l":18446744073709551615}',
    # Version 8: a learning mode's state keeps its drift slopes.
    b'{"s":[1016.0,80.5,0.06,12,4,1780000000.0,-12.5,840.25],"v":4,"r":["m"]}',
]
PENDING_RECORDS = [
    b'{"m":{},"done":["sim5-12","sim5-14","sim5-39"]}',
    b'{"m":{"m1":{"mode":"1v1","at":1780000000.0,"home":2,"snap":true,"req":true},'
    b'"m2":{"mode":"1v1","at":1780000100.0,"home":0,"snap":false}},"done":[]}',
]

# Version 13 (docs/event-time.md, "Late starts"): a join of a start read late asks for the
# player's position, which answers it; the order answers every player's, and a join sent again
# after it carries it; a snapshot for one names the turn it was taken for. The match entry
# keeps the positions, then the order; a pending entry its floor until then, and the games of
# the state a snapshot would have carried when it became pending.
LATE_MATCH_COMMANDS = [
    b'["pos","m","p",1780000100.5]',
    b'["snap","m","p",null,false,1780000000.0,null,1780000000.0]',
]
LATE_PLAYER_COMMANDS = [
    b'["join","m","p","1v1",1780000000.0,0,null,true]',
    b'["ord","m",1780000100.5,["p","q"]]',
    b'["join","m","p","1v1",1780000000.0,0,1780000100.5]',
]
LATE_MATCH_ENTRIES = [
    b'{"mode":"1v1","teams":[["a"],["b"]],"start":1780000000.0,"snaps":{},"fin":null,'
    b'"wait":null,"aband":{},"settled":[],"done":null,"late":true,"pos":{"a":1780000100.5}}',
    b'{"mode":"1v1","teams":[["a"],["b"]],"start":1780000000.0,"snaps":{},"fin":null,'
    b'"wait":null,"aband":{},"settled":[],"done":null,"late":true,"pos":{"a":1780000100.5,'
    b'"b":1780000100.0},"ord":1780000100.5}',
]
LATE_PENDING_RECORDS = [
    b'{"m":{"m1":{"mode":"1v1","at":1780000000.0,"home":2,"snap":false,"f":1780000100.5,'
    b'"g":12},"m2":{"mode":"1v1","at":1780000050.0,"home":0,"snap":false,"o":1780000100.5,'
    b'"g":0}},"done":[]}',
]


@pytest.mark.parametrize("raw", [*MATCH_COMMANDS, *LATE_MATCH_COMMANDS])
def test_match_commands_round_trip_byte_for_byte(raw: bytes) -> None:
    assert orjson.dumps(encode_command(decode_match_command(orjson.loads(raw)))) == raw


@pytest.mark.parametrize("raw", [*PLAYER_COMMANDS, *LATE_PLAYER_COMMANDS])
def test_player_commands_round_trip_byte_for_byte(raw: bytes) -> None:
    assert orjson.dumps(encode_command(decode_player_command(orjson.loads(raw)))) == raw


@pytest.mark.parametrize(
    ("codec", "raw"),
    [
        *((MATCHES, raw) for raw in [*MATCH_ENTRIES, *LATE_MATCH_ENTRIES]),
        *((RATINGS, raw) for raw in RATING_RECORDS),
        *((PENDING, raw) for raw in [*PENDING_RECORDS, *LATE_PENDING_RECORDS]),
        (CLOCKS, b"1780000100.25"),
        *((POPULATIONS, raw) for raw in POPULATION_RECORDS),
    ],
)
def test_table_records_round_trip_byte_for_byte(codec: TableCodec[Any, Any], raw: bytes) -> None:
    assert codec.value_bytes(codec.value(raw)) == raw


def test_the_commands_decode_to_what_they_say() -> None:
    state = PlayerState(
        1401.6173841618686, 90.78664805881002, 0.05999489876729625, 0, 5, 1780000200.0
    )
    rate = decode_player_command(orjson.loads(PLAYER_COMMANDS[2]))
    assert rate == Rate(
        match_id="sim5-6",
        mode="1v1",
        at=1780000250.0,
        teams=[["p000000"], ["p000001"]],
        ranks=[1, 0],
        stats={"p000000": PlayerStats(38.0, 300.5)},
        snapshots={"p000000": state, "p000001": None},
        players=[RatedPlayer("p000000", None, None), RatedPlayer("p000001", 0.0, "abandoned")],
        finished_ms=1780000250123,
    )
    assert decode_match_command(orjson.loads(MATCH_COMMANDS[1])) == Snapshot("m", "p", state, True)
    assert decode_match_command(orjson.loads(MATCH_COMMANDS[2])) == Snapshot(
        "m", "p", state, False, 1780000100.5
    )
    assert decode_match_command(["abandon", "m", "p", 5.0]) == Abandon("m", "p", 5.0)
    assert decode_match_command(["tick", 7.5]) == Tick(7.5)
    forward = decode_match_command(orjson.loads(MATCH_COMMANDS[5]))
    assert forward == Forward(
        "finished",
        StoredMessage(b"m-\xff", b"{}", Origin("match-finished", 0, 7, 1780000000123)),
    )
    assert decode_player_command(["join", "m", "p", "1v1", 1.5, 3]) == Join("m", "p", "1v1", 1.5, 3)
    assert decode_match_command(orjson.loads(MATCH_COMMANDS[7])) == Progress(
        3, 1780000170.25, 1780000100.5, None, 1780000160.0
    )
    assert decode_player_command(["wm", 2, 1780000099.5]) == Watermark(2, 1780000099.5)
    assert decode_player_command(["cancel", "m", ["a", "b"]]) == Cancel("m", ["a", "b"])
    assert decode_player_command(["adj", "p", "c-42"]) == Adjusting("p", "c-42")


@pytest.mark.parametrize("raw", MATCH_COMMANDS + PLAYER_COMMANDS)
def test_commands_stay_immutable_values(raw: bytes) -> None:
    # Built by a faster __init__ (stream/ratings/fastinit.py): still frozen, still equal by value.
    decode = decode_match_command if raw in MATCH_COMMANDS else decode_player_command
    command = decode(orjson.loads(raw))
    assert dataclasses.replace(command) == command
    values = [command, *[getattr(command, f.name) for f in dataclasses.fields(command)]]
    for value in values:
        if dataclasses.is_dataclass(value):
            name = dataclasses.fields(value)[0].name
            with pytest.raises(dataclasses.FrozenInstanceError):
                setattr(value, name, None)


def test_a_rate_command_from_version_1_still_decodes() -> None:
    # Written before the finish's timestamp was added: 9 elements.
    assert PROTOCOL_VERSION == 13
    old = orjson.loads(PLAYER_COMMANDS[1])[:9]
    rate = decode_player_command(old)
    assert isinstance(rate, Rate) and rate.finished_ms is None
    assert rate.players == [RatedPlayer("p000001", None, None)]
    # And one from a later version, with an element this one does not know.
    newer = decode_player_command([*orjson.loads(PLAYER_COMMANDS[5]), None, "later"])
    assert newer == decode_player_command(orjson.loads(PLAYER_COMMANDS[5]))


def test_a_match_entry_from_before_the_latency_metric_has_no_timestamp() -> None:
    raw = MATCH_ENTRIES[0].replace(b'"ts":null,', b"")
    entry = MATCHES.value(raw)
    assert entry.finish is not None and entry.finish.ts is None


def test_the_rating_key_names_player_and_mode_unambiguously() -> None:
    key = rating_key('a","b', "1v1")
    assert key == '["a\\",\\"b","1v1"]'
    assert decode_rating_key(key) == ('a","b', "1v1")
    assert RATINGS.key_bytes(key) == orjson.dumps(key)


@pytest.mark.parametrize(
    ("decode", "data", "reason"),
    [
        (decode_match_command, ["snap"], "snap command: expected 5 to 8 elements, got 1"),
        (decode_match_command, ["bogus", 2], "unknown match command 'bogus'"),
        (decode_match_command, 7, "match command: expected a list, got int"),
        (decode_match_command, [], "match command: expected a list led by its kind"),
        (decode_match_command, ["tick", "soon"], "tick command: expected a number, got str"),
        (decode_match_command, ["snap", "m", "p", [1, 2], False], "state: expected a list of 6"),
        (decode_match_command, ["snap", "m", "p", [1, 2, 3, "x", 5, 6], False], "state: invalid"),
        (decode_player_command, ["rate"], "rate command: expected at least 9 elements, got 1"),
        (decode_player_command, ["join", 1], "join command: expected 6 to 8 elements, got 2"),
        (decode_player_command, ["cancel", "m", [1]], "cancel command: expected a string, got int"),
        (decode_player_command, ["snap", "m", "p", None, True], "unknown player command 'snap'"),
        (decode_match_command, ["progress", 1, 5, None, "x", 2], "progress command: expected a n"),
        (
            decode_match_command,
            ["progress", 1.5, 5, None, None, 2],
            "progress command: expected an",
        ),
        (
            decode_match_command,
            ["progress", 1, None, None, None, 2],
            "progress command: expected a n",
        ),
        (decode_player_command, ["wm", 1, None], "wm command: expected a number, got null"),
        (decode_match_command, ["awm", "1", 2.0], "awm command: expected an"),
        (
            decode_match_command,
            ["rep", 1, 0, 0, 0, 1.0, 1.0, None, None, [[1]], False],
            "rep command: expected 2 elements, got 1",
        ),
        (
            decode_match_command,
            ["rep", 1, 0, 0, 0, None, 1.0, None, None, [], False],
            "rep command: expected a number, got null",
        ),
        (decode_match_command, ["prep", 1, 2.0, "no"], "prep command: expected true or false"),
        (decode_match_command, ["view", 1, 2, None, None, None, None], "view command: expected 8"),
        (decode_player_command, ["gwm", "x"], "gwm command: expected a number"),
    ],
)
def test_a_malformed_command_says_what_is_wrong(
    decode: Callable[[object], object], data: object, reason: str
) -> None:
    with pytest.raises(ProtocolError) as caught:
        decode(data)
    assert isinstance(caught.value, ValueError)
    assert reason in str(caught.value)


@pytest.mark.parametrize(
    ("value", "reason"),
    [(b"5", "expected a JSON array of commands, got int"), (b"\xff[", "not valid JSON")],
)
def test_a_packed_message_that_is_not_an_array_is_refused_whole(value: bytes, reason: str) -> None:
    with pytest.raises(ProtocolError, match=reason):
        decode_commands(value)


@given(
    key=st.none() | st.binary(max_size=40),
    value=st.text(max_size=40),
    offset=st.integers(min_value=0, max_value=2**62),
    timestamp=st.none() | st.integers(min_value=0, max_value=2**50),
)
def test_a_stored_message_keeps_any_key_bytes(
    key: bytes | None, value: str, offset: int, timestamp: int | None
) -> None:
    message = StoredMessage(key, value.encode(), Origin("match-finished", 3, offset, timestamp))
    raw = orjson.dumps(encode_message(message))
    assert decode_message(orjson.loads(raw)) == message
    assert orjson.dumps(encode_message(decode_message(orjson.loads(raw)))) == raw


@pytest.mark.parametrize(
    ("codec", "raw", "what"),
    [
        (RATINGS, b'{"v":1,"r":[]}', "rating record"),
        (RATINGS, b'{"s":[1500.0],"v":1}', "state"),
        (PENDING, b'{"m":{"m1":{"mode":"x"}},"done":[]}', "pending record"),
        (PENDING, b"[]", "pending record"),
        (MATCHES, b'{"mode":"x","teams":null}', "match entry"),
        (MATCHES, b"null", "match entry"),
        (POPULATIONS, b'{"u":null}', "population record"),
        (POPULATIONS, b'{"u":null,"m":{},"h":{"m":[[1,0,[1,2]]]},"ch":{}}', "population"),
    ],
)
def test_a_table_record_of_another_shape_is_refused(
    codec: TableCodec[Any, Any], raw: bytes, what: str
) -> None:
    # Table records are trusted (only the encoders write them) but not blindly: a record of
    # another shape is a ProtocolError naming the record, never a half-built value.
    with pytest.raises(ProtocolError, match=what):
        codec.value(raw)


def test_every_command_is_declared_once_with_one_element_per_field() -> None:
    from dataclasses import fields
    from typing import get_args

    from stream.protocol.commands import DECLARATIONS, Command

    declared = [d.command for d in DECLARATIONS]
    assert sorted(c.__name__ for c in declared) == sorted(c.__name__ for c in get_args(Command))
    assert len({d.kind for d in DECLARATIONS}) == len(DECLARATIONS)
    for declaration in DECLARATIONS:
        assert len(declaration.elements) == len(fields(declaration.command)), declaration.kind


def test_a_rate_command_from_a_later_version_is_read_without_its_new_elements() -> None:
    raw = orjson.loads(PLAYER_COMMANDS[5])
    assert raw[0] == "rate" and len(raw) == 11
    later = decode_player_command([*raw, None, {"a": "field this version does not know"}])
    assert later == decode_player_command(raw)


def _older_chain(population: int, sums: int) -> bytes:
    """POPULATION_RECORDS[1] as an older version wrote it: populations of ``population``
    elements, evidence and sums of ``sums``."""
    record = orjson.loads(POPULATION_RECORDS[1])
    for windows in record["h"].values():
        for item in windows:
            item[2] = item[2][:sums]
    for chain in record["ch"].values():
        chain["i"], chain["c"] = chain["i"][:population], chain["c"][:population]
        chain["s"], chain["k"] = chain["s"][:sums], chain["k"][:sums]
        for step in chain["st"]:
            step[1] = step[1][:population]
    return orjson.dumps(record)


def _older_commands(population: int, sums: int) -> tuple[Command, Command]:
    """The learning mode's ``rate`` and ``closed`` of the fixtures as an older version wrote
    them (decoded)."""
    rate = orjson.loads(PLAYER_COMMANDS[5])
    rate[10] = rate[10][:population]
    closed = orjson.loads(next(c for c in MATCH_COMMANDS if c.startswith(b'["closed",2')))
    closed[3]["ranked"][0][1] = closed[3]["ranked"][0][1][:sums]
    return decode_player_command(rate), decode_match_command(closed)


def test_records_written_before_the_drift_was_learned_still_decode() -> None:
    """Version 7's learned population: 6-element states, 4-element populations, evidence and
    sums of 9; they read as no drift slopes, the algorithm's own drift period and no drift
    evidence, and are written again in the current form."""
    rate, closed = _older_commands(4, 9)
    assert isinstance(rate, Rate) and rate.population is not None
    assert rate.population.drift_period is None
    assert orjson.dumps(encode_command(closed)).endswith(b"11,12,0,0,0,0]]]}]")
    record = RATINGS.value(RATING_RECORDS[0])
    assert record.state.drift_slope == record.state.variance_slope == 0.0
    old_chain = _older_chain(4, 9)
    chain = POPULATIONS.value(old_chain).chains["ranked"].chain
    assert chain.initial.drift_period is None and chain.seen.drift_score == 0.0
    assert b"1.0625,null,null]" in POPULATIONS.value_bytes(POPULATIONS.value(old_chain))


def test_a_population_with_a_debut_offset_out_of_range_is_refused() -> None:
    rate = orjson.loads(PLAYER_COMMANDS[5])
    rate[10][5] = -1e9
    with pytest.raises(ProtocolError, match="debut offset outside"):
        decode_player_command(rate)


def test_records_written_before_the_debut_offset_was_learned_still_decode() -> None:
    """Version 8's learned population: 5-element populations, evidence and sums of 11; they
    read as the mode's own debut offset and no offset evidence, and are written again in
    version 9's form."""
    rate, closed = _older_commands(5, 11)
    assert isinstance(rate, Rate) and rate.population is not None
    assert rate.population.drift_period == 7.5 and rate.population.debut_offset is None
    assert orjson.dumps(encode_command(closed)).endswith(b"11,12,-3,9,0,0]]]}]")
    old_chain = _older_chain(5, 11)
    assert b"14.0]" in old_chain and b"11,12,-1,2]" in old_chain
    chain = POPULATIONS.value(old_chain).chains["ranked"].chain
    assert chain.initial.debut_offset is None and chain.initial.drift_period == 14.0
    assert chain.seen.offset_score == chain.seen.offset_information == 0.0
    assert b"9.5,null]" in POPULATIONS.value_bytes(POPULATIONS.value(old_chain))


def test_the_combiner_s_commands_decode_to_what_they_say() -> None:
    rep, forwarded, prep, _, view, _ = (
        decode_match_command(orjson.loads(c))
        for c in MATCH_COMMANDS
        if c.startswith((b'["rep"', b'["prep"', b'["view"'))
    )
    assert rep == Report(
        3,
        1780000000007001,
        1780000000123001,
        17,
        1780000100.5,
        1780000160.0,
        1780000160.0,
        None,
        {},
        True,
    )
    assert forwarded == Report(
        0, 5, 0, 0, 0.0, 0.0, None, 1780000050.0, {1: 1780000020.5, 3: 1780000030.0}, False
    )
    assert prep == PlayerReport(
        2, 1780000099.5, False, 1780000000123456789, 1780000000987654321, 12
    )
    assert view == View(
        1780000000123001, 18, 1780000100.5, None, 1780000160.0, 1780000090.0, tick=True
    )
    assert decode_player_command(["gwm", None, 7, 1]) == Combined(None, 7, 1)
    # Version 10's forms: no round, no life.
    assert decode_player_command(["gwm", 5.0]) == Combined(5.0, 0, 0)
    assert decode_match_command(["prep", 3, 5.0, True]) == PlayerReport(3, 5.0, True, 0, 0, 0)


def test_a_rate_command_carries_the_parties_and_the_party_edge() -> None:
    rate = decode_player_command(orjson.loads(PLAYER_COMMANDS[-2]))
    assert isinstance(rate, Rate)
    assert rate.parties == [["a", "b"]]
    assert rate.population is not None and rate.population.party_edge == 42.5
    plain = decode_player_command(orjson.loads(PLAYER_COMMANDS[-1]))
    assert isinstance(plain, Rate) and plain.population is None and plain.parties == [["c", "d"]]
    # Without parties, the command is what version 11 wrote: no 12th element, six of population.
    learning = decode_player_command(orjson.loads(PLAYER_COMMANDS[5]))
    assert isinstance(learning, Rate) and learning.parties is None
    assert learning.population is not None and learning.population.party_edge == 0.0
    assert len(encode_command(learning)) == 11
    assert len(encode_command(learning)[10]) == 6  # type: ignore[arg-type]


def test_a_finish_that_names_a_party_keeps_it() -> None:
    entry = MATCHES.value(MATCH_ENTRIES[-1])
    assert entry.finish is not None and entry.finish.parties == [["a", "b"]]
    assert entry.evidence is not None and entry.evidence[-2:] == [-2, 6]
    assert MATCHES.value(MATCH_ENTRIES[0]).finish.parties is None  # type: ignore[union-attr]


@pytest.mark.parametrize("edge", [1000.5, -2000.0])
def test_a_population_with_a_party_edge_beyond_its_range_is_refused(edge: float) -> None:
    raw = orjson.loads(PLAYER_COMMANDS[-2])
    raw[10][6] = edge
    with pytest.raises(ProtocolError, match="party edge outside the accepted range"):
        decode_player_command(raw)


def test_a_late_starts_commands_and_records_decode_to_what_they_say() -> None:
    asks, ordered, again = (decode_player_command(orjson.loads(r)) for r in LATE_PLAYER_COMMANDS)
    assert asks == Join("m", "p", "1v1", 1780000000.0, 0, None, True)
    assert ordered == Ordered("m", 1780000100.5, ["p", "q"])
    assert again == Join("m", "p", "1v1", 1780000000.0, 0, 1780000100.5)
    position, snap = (decode_match_command(orjson.loads(r)) for r in LATE_MATCH_COMMANDS)
    assert position == Position("m", "p", 1780000100.5)
    assert snap == Snapshot("m", "p", None, False, 1780000000.0, None, 1780000000.0)
    asking, decided = (MATCHES.value(r) for r in LATE_MATCH_ENTRIES)
    assert asking.late and asking.positions == {"a": 1780000100.5} and asking.order is None
    assert decided.order == 1780000100.5
    record = PENDING.value(LATE_PENDING_RECORDS[0])
    waiting, placed = record.matches["m1"], record.matches["m2"]
    assert waiting.unordered and waiting.turn == 1780000100.5 and waiting.games == 12
    assert not placed.unordered and placed.turn == 1780000100.5 and placed.at == 1780000050.0
