"""Who gets rated when a match ends (stream.ratings.resolution)."""

from __future__ import annotations

from collections.abc import Collection

import pytest

from stream.ratings.modeconfig import ModeConfig, QuitPolicy
from stream.ratings.resolution import Outcome, outcome_of, rated_players

CANCEL = ModeConfig("cancel", quits=QuitPolicy.CANCEL)
NORMAL = ModeConfig("normal", quits=QuitPolicy.NORMAL)
TWO_V_TWO = (("a1", "a2"), ("b1", "b2"))
FFA = (("p",), ("q",), ("r",), ("s",))


def test_default_policy_is_cancel() -> None:
    assert ModeConfig("x").quits is QuitPolicy.CANCEL


@pytest.mark.parametrize("mode", [CANCEL, NORMAL])
@pytest.mark.parametrize("quitters", [frozenset(), set(), ()])
def test_no_quitters_rates_everyone_from_the_ranks(
    mode: ModeConfig, quitters: Collection[str]
) -> None:
    plan = rated_players(mode, TWO_V_TWO, quitters)
    assert plan == {"a1": None, "a2": None, "b1": None, "b2": None}
    assert list(plan) == ["a1", "a2", "b1", "b2"]


def test_cancel_rates_only_the_quitter_as_a_loss() -> None:
    # Teammate a2 and both opponents are cancelled: omitted, not rated.
    assert rated_players(CANCEL, TWO_V_TWO, frozenset({"a1"})) == {"a1": 0.0}


def test_cancel_with_quitters_on_both_sides() -> None:
    plan = rated_players(CANCEL, TWO_V_TWO, frozenset({"a2", "b1"}))
    assert plan == {"a2": 0.0, "b1": 0.0}


def test_cancel_in_free_for_all() -> None:
    assert rated_players(CANCEL, FFA, {"r"}) == {"r": 0.0}


def test_normal_gives_quitters_a_loss_and_the_others_their_result() -> None:
    plan = rated_players(NORMAL, TWO_V_TWO, frozenset({"b2"}))
    assert plan == {"a1": None, "a2": None, "b1": None, "b2": 0.0}
    assert list(plan) == ["a1", "a2", "b1", "b2"]


def test_normal_in_free_for_all_with_two_quitters() -> None:
    plan = rated_players(NORMAL, FFA, ["q", "s"])
    assert plan == {"p": None, "q": 0.0, "r": None, "s": 0.0}


def test_a_quitter_not_in_the_match_still_switches_to_the_quit_rule() -> None:
    # The plan is decided by who is in the teams: an unknown id rates nobody under CANCEL.
    assert rated_players(CANCEL, TWO_V_TWO, {"zz"}) == {}
    assert rated_players(NORMAL, TWO_V_TWO, {"zz"}) == dict.fromkeys(("a1", "a2", "b1", "b2"), None)


def test_everyone_quits() -> None:
    everyone = {"a1", "a2", "b1", "b2"}
    expected = dict.fromkeys(("a1", "a2", "b1", "b2"), 0.0)
    assert rated_players(CANCEL, TWO_V_TWO, everyone) == expected
    assert rated_players(NORMAL, TWO_V_TWO, everyone) == expected


@pytest.mark.parametrize(
    ("score", "label"),
    [
        (1.0, Outcome.WIN),
        (2 / 3, Outcome.WIN),
        (0.5000001, Outcome.WIN),
        (0.5, Outcome.DRAW),
        (0.4999999, Outcome.LOSS),
        (1 / 3, Outcome.LOSS),
        (0.0, Outcome.LOSS),
    ],
)
def test_outcome_of(score: float, label: Outcome) -> None:
    assert outcome_of(score) is label


def test_outcome_values() -> None:
    assert [o.value for o in Outcome] == ["win", "loss", "draw", "abandoned", "timeout"]
    assert Outcome("win") is Outcome.WIN
    assert str(Outcome.TIMEOUT) == "timeout"
