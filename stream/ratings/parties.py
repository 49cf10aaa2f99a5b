"""Parties: players of one side who queued together (issue 50).

A match may name its parties (the ``parties`` of match-finished: lists of player ids, each
party within one side). A party of one is no party. Each member of a party of at least two
plays ``party_edge`` rating points above their rating in that match, the mode's learned
population value (stream.ratings.population): what a side gains from coordination its
members do not bring when they queue alone. So a side's strength in a prediction, its match
quality and every member's update see the edge exactly as they see the experience offset
(stream.ratings.experience): the partied player is moved by the edge in every comparison, and
their own stored rating never holds it, so a player who queues with friends is not rated
above what they show alone.

The form: one edge per partied member, whatever the party's size, so a side's composite
rises by the edge times its partied share (a full stack of five by the whole edge, a duo
among five by two fifths of it). TrueSkill 2 (Minka, Cleven and Zaykov 2018) also takes squad
membership as an input of the match; the simplest form that a mode can learn from its own
matches, one number, is the one kept (docs/decisions.md, "Parties").

Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Sequence

# A match's parties as the event names them: each a tuple of player ids.
Parties = tuple[tuple[str, ...], ...]

__all__ = ["Parties", "partied", "party_offsets"]


def partied(parties: Sequence[Sequence[str]] | None) -> frozenset[str]:
    """The players in a party of at least two (empty: nobody; a party of one is no party)."""
    if not parties:
        return frozenset()
    return frozenset(pid for party in parties if len(party) > 1 for pid in party)


def party_offsets(
    teams: Sequence[Sequence[str]], members: frozenset[str], edge: float
) -> list[list[float]] | None:
    """Each participant's party offset in rating points (``edge`` for a member of a party in
    ``members``, 0 alone), per side as ``teams`` lists them; None when nobody is moved (no
    party, or an edge of 0): the caller then does no work at all."""
    if not members or edge == 0.0:
        return None
    return [[edge if pid in members else 0.0 for pid in team] for team in teams]
