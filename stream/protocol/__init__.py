"""What the pipeline's steps say to each other and keep in their tables: types and codecs.

Commands travel between the match and player partitions as positional JSON lists (compact: a
packed message holds thousands of them); table records are JSON objects with short keys (a
rating record is held for every player, so its size is the table's size). Both layouts are
written and read here only, as typed values in the code:

- match side commands: :class:`Snapshot` (``snap``), :class:`Abandon` (``abandon``),
  :class:`Position` (``pos``), :class:`Forward` (``fwd``), :class:`Tick` (``tick``),
  :class:`Progress` (``progress``), :class:`AbandonWatermark` (``awm``), :class:`WindowClosed`
  (``closed``), and the combiner's :class:`Report` (``rep``), :class:`PlayerReport` (``prep``)
  and :class:`View` (``view``);
- player side commands: :class:`Join` (``join``), :class:`Rate` (``rate``), :class:`Ordered`
  (``ord``), :class:`Cancel` (``cancel``), :class:`Watermark` (``wm``), :class:`Adjusting`
  (``adj``), :class:`Combined` (``gwm``);
- table records: :class:`RatingRecord` (table ``ratings``), :class:`PendingRecord` (table
  ``pending``), :class:`MatchEntry` (table ``matches``), :class:`PopulationRecord` (table
  ``populations``).

The package is split by trust: ``checks.py`` (checked reading of parsed JSON),
``state.py`` (player states, keys, stored messages), ``commands.py`` (checked: they arrive on a
topic) and ``tables.py`` (trusted: only these encoders write them). Everything is importable from
``stream.protocol``.

The bytes are those the pipeline wrote before these types existed
(tests/unit/protocol/test_protocol.py holds them literally), so a worker upgraded mid-stream
reads what the old one wrote. Decoding takes the parsed JSON as ``object`` and checks every
field: a malformed command raises :class:`ProtocolError`, whose message is the dead letter's
reason.

Floats are written by orjson in their shortest exact form, so a state that goes through a
table, a changelog and a recovery is bit-for-bit the state that was stored.
"""

from __future__ import annotations

from stream.protocol.checks import (
    ProtocolError,
)
from stream.protocol.commands import (
    PROTOCOL_VERSION,
    Abandon,
    AbandonWatermark,
    Adjusting,
    Cancel,
    Combined,
    Command,
    Forward,
    Join,
    MatchCommand,
    Ordered,
    PlayerCommand,
    PlayerReport,
    Position,
    Progress,
    Rate,
    RatedPlayer,
    Report,
    Snapshot,
    Tick,
    View,
    Watermark,
    WindowClosed,
    decode_commands,
    decode_match_command,
    decode_player_command,
    encode_command,
)
from stream.protocol.state import (
    StoredMessage,
    decode_message,
    decode_rating_key,
    decode_state,
    encode_message,
    encode_state,
    rating_key,
)
from stream.protocol.tables import (
    CLOCKS,
    MATCHES,
    PENDING,
    POPULATIONS,
    RATINGS,
    RECENT_MATCHES,
    Finish,
    MatchEntry,
    PendingMatch,
    PendingRecord,
    PopulationRecord,
    RatingRecord,
    StoredChain,
    TableCodec,
    Waiting,
    decode_match,
    decode_pending,
    decode_rating,
)

__all__ = [
    "CLOCKS",
    "MATCHES",
    "PENDING",
    "POPULATIONS",
    "PROTOCOL_VERSION",
    "RATINGS",
    "RECENT_MATCHES",
    "Abandon",
    "AbandonWatermark",
    "Adjusting",
    "Cancel",
    "Combined",
    "Command",
    "Finish",
    "Forward",
    "Join",
    "MatchCommand",
    "MatchEntry",
    "Ordered",
    "PendingMatch",
    "PendingRecord",
    "PlayerCommand",
    "PlayerReport",
    "PopulationRecord",
    "Position",
    "Progress",
    "ProtocolError",
    "Rate",
    "RatedPlayer",
    "RatingRecord",
    "Report",
    "Snapshot",
    "StoredChain",
    "StoredMessage",
    "TableCodec",
    "Tick",
    "View",
    "Waiting",
    "Watermark",
    "WindowClosed",
    "decode_commands",
    "decode_match",
    "decode_match_command",
    "decode_message",
    "decode_pending",
    "decode_player_command",
    "decode_rating",
    "decode_rating_key",
    "decode_state",
    "encode_command",
    "encode_message",
    "encode_state",
    "rating_key",
]
