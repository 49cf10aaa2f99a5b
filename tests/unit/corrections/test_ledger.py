"""Corrections applied to a history (stream.corrections.ledger through replay): a voided match
is exactly a match never played, an erased player's opponents keep their ratings and nobody
is named, an adjustment moves one rating at its time and nothing else, a ban's refund undoes
exactly the results of the banned player and of those their side beat, and a void that voids
nothing is reported."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stream.config.modes import Modes, parse_modes
from stream.corrections.ledger import Ledger, adjusted
from stream.corrections.pseudonyms import pseudonym
from stream.corrections.records import Adjust, Audit, Ban, Correction, Erase, Rerate, Void
from stream.history import HistoryMatch
from stream.offline.corrected import rated_in_order
from stream.offline.replayer import Replayer
from stream.ratings.engine import MatchView, rate_player
from stream.ratings.glicko2 import Glicko2Config
from stream.ratings.modeconfig import ModeConfig
from stream.ratings.skill import PlayerState

T0 = 1_780_000_000.0
KEY = b"a key of sixteen+ bytes"
AUDIT = Audit("c", "ops", T0, "test")
PLAYERS = [f"p{i}" for i in range(6)]
# The built-in default with a party edge from the start: a party changes every rating it plays.
MODES = parse_modes({"default": {"population": {"party_edge": 50.0}}})


@st.composite
def histories(draw: st.DrawFn) -> list[HistoryMatch]:
    """1v1 and 2v2 matches among six players, one after the other, with their starts; a 2v2
    may name its first side a party."""
    out = []
    at = T0
    for i in range(draw(st.integers(1, 14))):
        at += draw(st.sampled_from([60.0, 600.0, 86_400.0 * 20]))
        size = draw(st.sampled_from([1, 2]))
        players = draw(st.permutations(PLAYERS))[: 2 * size]
        teams = (tuple(players[:size]), tuple(players[size:]))
        ranks = draw(st.sampled_from([(0, 1), (1, 0), (0, 0)]))
        parties = (teams[0],) if size == 2 and draw(st.booleans()) else None
        out.append(
            HistoryMatch(
                i, f"m{i}", "ranked", at + 30.0, teams, ranks, None, frozenset(), at, parties
            )
        )
    return out


def final(
    history: Sequence[HistoryMatch],
    corrections: Sequence[Correction] = (),
    *,
    play_order: bool = False,
) -> dict[str, PlayerState]:
    replayer = Replayer(MODES)
    ledger = Ledger(list(enumerate(corrections, start=1)), KEY) if corrections else None
    for match, fates in rated_in_order(history, replayer, play_order=play_order, ledger=ledger):
        if fates is None:
            replayer.apply(match)
        else:
            replayer.apply_settled(match, fates)
    return dict(replayer.tables.get("ranked", {}))


@settings(max_examples=60)
@given(histories(), st.data(), st.booleans())
def test_a_voided_match_is_a_match_never_played(
    history: list[HistoryMatch], data: st.DataObject, play_order: bool
) -> None:
    voided = data.draw(st.sets(st.sampled_from([m.match_id for m in history]), min_size=1))
    without = [m for m in history if m.match_id not in voided]
    corrected = final(history, [Void(AUDIT, matches=frozenset(voided))], play_order=play_order)
    assert corrected == final(without, play_order=play_order)


@settings(max_examples=60)
@given(histories(), st.sampled_from(PLAYERS))
def test_a_window_voids_the_players_matches_that_finished_in_it(
    history: list[HistoryMatch], player: str
) -> None:
    since, until = history[0].at, history[-1].at  # the last match's finish is left out
    inside = {
        m.match_id for m in history if since <= m.at < until and any(player in t for t in m.teams)
    }
    corrected = final(history, [Void(AUDIT, player=player, since=since, until=until)])
    assert corrected == final([m for m in history if m.match_id not in inside])


@settings(max_examples=60)
@given(histories(), st.sampled_from(PLAYERS))
def test_an_erased_player_is_rated_as_before_under_a_pseudonym_and_nobody_else_moves(
    history: list[HistoryMatch], player: str
) -> None:
    name = pseudonym(KEY, player)
    before = final(history)
    after = final(history, [Erase(AUDIT, name)])
    assert player not in after
    assert after.pop(name, None) == before.pop(player, None)
    assert after == before


@settings(max_examples=60)
@given(histories(), st.sampled_from(PLAYERS), st.floats(-300.0, 300.0))
def test_an_adjustment_after_the_last_match_moves_one_rating_and_nothing_else(
    history: list[HistoryMatch], player: str, points: float
) -> None:
    before = final(history)
    shift = Adjust(AUDIT, "ranked", player, points, True, history[-1].at + 1.0)
    after = final(history, [shift])
    mode = Modes().get("ranked")
    expected = adjusted(mode, before.get(player, mode.initial), shift)
    assert after.pop(player) == expected
    before.pop(player, None)
    assert after == before


@settings(max_examples=30)
@given(histories(), st.booleans())
def test_a_rerate_record_changes_nothing(history: list[HistoryMatch], play_order: bool) -> None:
    rerate = Rerate(AUDIT, 2, "skillstream-g2", "rating-changed-g2")
    assert final(history, [rerate], play_order=play_order) == final(history, play_order=play_order)


def test_an_adjustment_rates_the_players_later_matches_from_the_adjusted_rating() -> None:
    first = HistoryMatch(0, "m0", "ranked", T0, (("a",), ("b",)), (0, 1), None, frozenset(), T0)
    second = first._replace(row=1, match_id="m1", at=T0 + 600.0, started_at=T0 + 500.0)
    set_to = Adjust(AUDIT, "ranked", "a", 1900.0, False, T0 + 100.0)
    got = final([first, second], [set_to])
    # By hand: m0 as played, then a set to 1900, then m1 from there.
    mode = Modes().get("ranked")
    view = MatchView(first.teams, first.ranks, first.at)
    a0 = rate_player(mode, "a", None, view, {}).state
    b0 = rate_player(mode, "b", None, view, {}).state
    a1 = adjusted(mode, a0, set_to)
    assert a1.rating == 1900.0 and (a1.deviation, a1.games) == (a0.deviation, a0.games)
    later = MatchView(second.teams, second.ranks, second.at)
    snapshots = {"a": a1, "b": b0}
    assert got["a"] == rate_player(mode, "a", a1, later, snapshots).state
    assert got["b"] == rate_player(mode, "b", b0, later, snapshots).state


def test_an_adjusted_rating_is_held_to_the_bounds_of_glicko2() -> None:
    mode = ModeConfig("n", algorithm=Glicko2Config())
    state = PlayerState(1500.0, 100.0, 0.06, 10, 5, T0)
    low, high = mode.rating_bounds
    assert adjusted(mode, state, Adjust(AUDIT, "n", "a", 1e6, False, T0)).rating == high
    assert adjusted(mode, state, Adjust(AUDIT, "n", "a", -1e6, True, T0)).rating == low


def test_a_void_that_voids_nothing_is_reported_with_its_line() -> None:
    history = [HistoryMatch(0, "m0", "ranked", T0, (("a",), ("b",)), (0, 1), None, frozenset(), T0)]
    corrections: list[tuple[int, Correction]] = [
        (3, Void(Audit("c-3", "ops", T0, "typo"), matches=frozenset({"m0", "m9"}))),
        (4, Void(Audit("c-4", "ops", T0, "x"), player="z", since=T0 - 10, until=T0 + 10)),
        # Voided by id already, m0 is still what this window voids.
        (5, Void(Audit("c-5", "ops", T0, "y"), player="a", since=T0 - 10, until=T0 + 10)),
    ]
    ledger = Ledger(corrections, source="c.jsonl")
    assert [ledger.admit(m, "ranked") for m in history] == [None]
    assert ledger.unmatched() == [
        "c.jsonl line 3: void 'c-3': match 'm9' is not in the history",
        "c.jsonl line 4: void 'c-4' voids nothing: 'z' finished no match from "
        "2026-05-28T20:26:30.000Z until 2026-05-28T20:26:50.000Z",
    ]


def test_erasures_without_the_key_are_refused() -> None:
    with pytest.raises(Exception, match="need the key their pseudonyms were made with"):
        Ledger([(1, Erase(AUDIT, "erased-x"))], None, "c.jsonl")


def test_a_void_of_matches_voided_by_an_earlier_line_is_reported() -> None:
    history = [HistoryMatch(0, "m0", "ranked", T0, (("a",), ("b",)), (0, 1), None, frozenset(), T0)]
    corrections: list[tuple[int, Correction]] = [
        (1, Void(Audit("c-1", "ops", T0, "cheat"), matches=frozenset({"m0"}))),
        (2, Void(Audit("c-2", "ops", T0, "cheat again"), matches=frozenset({"m0"}))),
    ]
    ledger = Ledger(corrections, source="c.jsonl")
    assert [ledger.admit(m, "ranked") for m in history] == [None]
    assert ledger.applied().startswith("voided 1 match,")
    assert ledger.unmatched() == [
        "c.jsonl line 2: void 'c-2' voids nothing more: every match it names is voided from"
        " line 1 on"
    ]


def test_an_adjustment_in_a_mode_no_match_is_in_names_the_closest() -> None:
    history = [HistoryMatch(0, "m0", "2v2", T0, (("a",), ("b",)), (0, 1), None, frozenset(), T0)]
    adjust = Adjust(Audit("c-1", "ops", T0, "typo"), "2vs2", "a", 25.0, True, T0 + 10)
    ledger = Ledger([(1, adjust)], source="c.jsonl")
    assert [ledger.admit(m, "2v2") for m in history] == history
    assert ledger.unmatched() == [
        "c.jsonl line 1: adjust 'c-1' adjusts nobody: no match of the history is in mode '2vs2';"
        " did you mean '2v2'?"
    ]


def refunded_games(history: Sequence[HistoryMatch], ban: Ban) -> dict[str, int]:
    """Each player's rated matches under ``ban``'s refund, counted from its definition."""
    games: dict[str, int] = {}
    for m in history:
        sides = [i for i, team in enumerate(m.teams) if ban.player in team]
        in_window = ban.since <= m.at < ban.until and m.mode == ban.mode
        for side, team in enumerate(m.teams):
            for p in team:
                refunded = (
                    in_window
                    and bool(sides)
                    and (p == ban.player or m.ranks[side] > m.ranks[sides[0]])
                )
                if not refunded:
                    games[p] = games.get(p, 0) + 1
    return games


@settings(max_examples=80)
@given(histories(), st.data(), st.booleans())
def test_a_ban_refunds_the_banned_and_those_their_side_beat_and_nobody_else(
    history: list[HistoryMatch], data: st.DataObject, play_order: bool
) -> None:
    banned = data.draw(st.sampled_from(PLAYERS))
    ends = sorted({m.at for m in history})
    since = data.draw(st.sampled_from(ends))
    until = data.draw(st.sampled_from([at + 1.0 for at in ends if at >= since]))
    ban = Ban(AUDIT, "ranked", banned, since, until)
    states = final(history, [ban], play_order=play_order)
    # A player none of whose matches counts has no rating; the others count exactly theirs.
    assert {p: s.games for p, s in states.items()} == refunded_games(history, ban)
    # Refunded over the whole history, the banned player has no rating at all.
    everything = Ban(AUDIT, "ranked", banned, ends[0], ends[-1] + 1.0)
    assert banned not in final(history, [everything], play_order=play_order)


def test_a_refund_rates_the_others_as_they_played_and_a_void_does_not() -> None:
    # (b, t) beat (a, d); b is banned: a and d are refunded, t keeps the win as it was rated.
    m = HistoryMatch(
        1, "m1", "ranked", T0 + 30.0, (("b", "t"), ("a", "d")), (0, 1), None, frozenset(), T0
    )
    ban = Ban(AUDIT, "ranked", "b", T0, T0 + 60.0)
    plain = final([m])
    refunded = final([m], [ban])
    assert refunded == {"t": plain["t"]}
    assert final([m], [Ban(AUDIT, "ranked", "b", T0, T0 + 60.0, "void", frozenset({"m1"}))]) == {}
    # A draw with the banned side is no loss to them: kept.
    drawn = m._replace(ranks=(0, 0))
    assert final([drawn], [ban]) == {p: s for p, s in final([drawn]).items() if p != "b"}
