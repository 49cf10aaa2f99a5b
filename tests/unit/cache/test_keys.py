"""Cache key layout, mode escaping inside the hash tag, and Redis Cluster slots."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stream.cache.keys import MAX_ID_LENGTH, Board, KeyLayout, escape_mode, unescape_mode
from stream.cache.slots import crc16_xmodem, hash_tag, key_slot

ids = st.text(min_size=1, max_size=MAX_ID_LENGTH)


def all_keys(layout: KeyLayout, mode: str, player_id: str) -> list[str]:
    return [
        layout.player(mode, player_id),
        layout.by_rating(mode),
        layout.by_rank_points(mode),
        layout.by_conservative(mode),
        *layout.write_keys(mode, player_id),
        *(layout.board(mode, board) for board in Board),
    ]


def test_key_names() -> None:
    layout = KeyLayout()
    assert layout.player("ranked-1v1", "p1") == "skillstream:{ranked-1v1}:player:p1"
    assert layout.by_rating("ranked-1v1") == "skillstream:{ranked-1v1}:by-rating"
    assert layout.by_rank_points("ranked-1v1") == "skillstream:{ranked-1v1}:by-rank-points"
    assert layout.by_conservative("ranked-1v1") == "skillstream:{ranked-1v1}:by-conservative"
    assert KeyLayout("test:a").player("m", "p:1") == "test:a:{m}:player:p:1"


def test_write_keys_are_in_the_scripts_order() -> None:
    layout = KeyLayout()
    assert layout.write_keys("m", "p") == (
        layout.player("m", "p"),
        layout.by_rating("m"),
        layout.by_rank_points("m"),
        layout.by_conservative("m"),
        layout.history("m", "p"),
        "skillstream:{m}:by-last-played",
        layout.season("m"),
        layout.seasons("m"),
        "skillstream:{m}:clock",
    )


def test_a_past_seasons_boards_sit_beside_the_current_ones_in_the_same_slot() -> None:
    layout = KeyLayout()
    assert layout.past_board("m", 3, "rank_points") == "skillstream:{m}:season:3:by-rank-points"
    assert layout.past_board("m", 0, Board.RATING) == "skillstream:{m}:season:0:by-rating"
    slots = {key_slot(layout.past_board("a}b", 7, b)) for b in Board}
    assert slots == {key_slot(layout.player("a}b", "p"))}


def test_boards_by_name_and_enum() -> None:
    layout = KeyLayout()
    assert layout.board("m", "rank_points") == layout.by_rank_points("m")
    assert layout.board("m", Board.CONSERVATIVE) == layout.by_conservative("m")
    assert layout.board("m", "rating") == layout.by_rating("m")
    with pytest.raises(ValueError, match="unknown board 'elo'"):
        layout.board("m", "elo")


def test_braces_and_percent_in_a_mode_are_escaped() -> None:
    assert escape_mode("a{b}c%d") == "a%7Bb%7Dc%25d"
    layout = KeyLayout()
    assert layout.by_rating("}") == "skillstream:{%7D}:by-rating"
    # Without escaping "%7D" would collide with "}".
    assert layout.by_rating("%7D") == "skillstream:{%257D}:by-rating"


@pytest.mark.parametrize("prefix", ["", "a{b", "a}b", "{x}"])
def test_prefix_with_braces_or_empty_is_refused(prefix: str) -> None:
    with pytest.raises(ValueError, match="prefix"):
        KeyLayout(prefix)


@pytest.mark.parametrize(
    ("mode", "player_id", "message"),
    [
        ("", "p", "mode is empty"),
        ("m", "", "player_id is empty"),
        ("m" * (MAX_ID_LENGTH + 1), "p", "mode is longer than 128"),
        ("m", "p" * (MAX_ID_LENGTH + 1), "player_id is longer than 128"),
    ],
)
def test_bad_ids_are_refused(mode: str, player_id: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        KeyLayout().player(mode, player_id)


def test_crc16_and_slots_match_the_redis_documentation() -> None:
    # CRC16/XMODEM check value; Redis Cluster spec examples.
    assert crc16_xmodem(b"123456789") == 0x31C3
    assert key_slot("somekey") == 11058
    assert key_slot("{user1000}.following") == key_slot("{user1000}.followers")
    assert key_slot("{user1000}.following") == key_slot("user1000")
    assert key_slot("foo{bar}{zap}") == key_slot("bar")
    assert key_slot("foo{{bar}}zap") == key_slot("{bar")
    # An empty tag does not count: the whole key is hashed.
    assert hash_tag(b"foo{}{bar}") == b"foo{}{bar}"
    assert key_slot(b"somekey") == key_slot("somekey")


@given(mode=ids, player_id=ids, prefix=st.text(min_size=1).filter(lambda p: "{" not in p))
def test_every_key_of_a_mode_shares_the_modes_slot(mode: str, player_id: str, prefix: str) -> None:
    prefix = prefix.replace("}", "")
    if not prefix:
        prefix = "p"
    layout = KeyLayout(prefix)
    tag = escape_mode(mode).encode()
    for key in all_keys(layout, mode, player_id):
        assert hash_tag(key.encode()) == tag
        assert key_slot(key) == key_slot(tag)


@given(st.text(), st.text())
def test_escaping_is_one_to_one(a: str, b: str) -> None:
    if a != b:
        assert escape_mode(a) != escape_mode(b)
    assert "{" not in escape_mode(a) and "}" not in escape_mode(a)


def test_different_modes_can_live_in_different_slots() -> None:
    layout = KeyLayout()
    assert key_slot(layout.by_rating("ranked-1v1")) != key_slot(layout.by_rating("casual-2v2"))


@given(st.text(min_size=1, max_size=MAX_ID_LENGTH), st.sampled_from(["skillstream", "a*b?[c]"]))
def test_a_modes_clock_gives_the_mode_back(mode: str, prefix: str) -> None:
    layout = KeyLayout(prefix)
    assert layout.clock_mode(layout.clock(mode)) == mode
    assert unescape_mode(escape_mode(mode)) == mode


def test_keys_that_are_no_modes_clock_give_no_mode() -> None:
    layout = KeyLayout("p")
    assert layout.clock_mode(layout.player("1v1", "x}:clock")) is None
    assert layout.clock_mode(layout.history("1v1", "clock")) is None
    assert layout.clock_mode("other:{1v1}:clock") is None
    assert layout.clock_pattern() == "p:{*}:clock"
    assert KeyLayout("a*b?[c]").clock_pattern() == "a\\*b\\?\\[c\\]:{*}:clock"
