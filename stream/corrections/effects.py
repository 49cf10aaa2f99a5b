"""What corrections do to a history, whatever their kinds: the vocabulary every reader applies.

A kind of correction (stream/corrections/kinds/) says what it does in these terms and nothing
else: matches left out (by id, or by a player's time window), ids read as pseudonyms, and
changes of one player's state in one mode as of an event time. The ledger (offline replay),
the re-rating worker's inputs and its player side apply these, never a kind's record, so a new
kind is its own module and one registry line (stream/corrections/records.py). Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from stream.corrections.fields import Audit
from stream.ratings.ranges import Limits
from stream.ratings.skill import PlayerState

__all__ = [
    "Correction",
    "Effects",
    "Kind",
    "PlayerChange",
    "Refund",
    "Resolution",
    "Seen",
    "Where",
    "Window",
    "refund_for",
    "refunds_for",
]


class Correction(Protocol):
    """A record of any kind of correction: each has its audit fields."""

    @property
    def audit(self) -> Audit: ...


C = TypeVar("C", bound=Correction)


class PlayerChange(Protocol):
    """A correction that changes ``player``'s state in ``mode`` as of event time
    ``effective``: applied just before the player's first match at or after it, once (its
    audit id is kept with the rating), and published as a rating change of its own (outcome
    ``adjusted``, with :meth:`described` as its ``adjustment``)."""

    @property
    def audit(self) -> Audit: ...

    @property
    def mode(self) -> str: ...

    @property
    def player(self) -> str: ...

    @property
    def effective(self) -> float: ...

    def changed(self, limits: Limits, state: PlayerState) -> PlayerState:
        """``state`` after the change, held to the algorithm's ``limits``."""
        ...

    def described(self) -> dict[str, Any]:
        """What the change did, for its rating-changed event (besides who and why)."""
        ...


@dataclass(frozen=True, slots=True)
class Window:
    """``player``'s matches that finished in [``since``, ``until``), in ``mode`` only when it
    is not None: the correction of file line ``line`` leaves them out."""

    player: str
    since: float
    until: float
    mode: str | None
    line: int


@dataclass(frozen=True, slots=True)
class Refund:
    """The results of ``player``'s matches in ``mode`` that finished in [``since``, ``until``)
    undone for ``player`` and for every player whose side the ranks place below theirs (a
    ban's refund: stream/corrections/kinds/ban.py): the correction of file line ``line``,
    ``audit`` its record's. Everyone else in those matches (the player's side, those who beat
    them or drew) is rated as they played; the match's evidence for the learned population is
    what was played. A refunded player's rating record stays as it was (rating, games,
    line-up): the match no longer counts for them."""

    player: str
    mode: str
    since: float
    until: float
    line: int
    audit: Audit

    def refunds(
        self, player_id: str, teams: tuple[tuple[str, ...], ...], ranks: Sequence[int]
    ) -> bool:
        """Whether ``player_id``'s result in a match of ``teams`` placed ``ranks`` is
        refunded (the match in this refund's mode and window)."""
        banned = self.player
        if player_id == banned:
            return True
        side = mine = -1
        for i, team in enumerate(teams):
            if banned in team:
                side = i
            if player_id in team:
                mine = i
        return side >= 0 and mine >= 0 and ranks[mine] > ranks[side]


def refund_for(
    refunds: Sequence[Refund],
    mode: str,
    player_id: str,
    teams: tuple[tuple[str, ...], ...],
    ranks: Sequence[int],
    at: float,
) -> Refund | None:
    """The first of ``refunds`` (in the file's order) that undoes ``player_id``'s result in the
    match of ``mode`` finished at ``at`` between ``teams`` placed ``ranks``, None when none
    does. Replay and a re-rating worker's player side both ask this, with the same teams, ranks
    and time (a player settled by an abandonment or a timeout is asked with the ranks all
    equal and the time of that fate, as the worker rates them: their loss was their own, and
    only the banned player is refunded then)."""
    return next(refunds_for(refunds, mode, player_id, teams, ranks, at), None)


def refunds_for(
    refunds: Sequence[Refund],
    mode: str,
    player_id: str,
    teams: tuple[tuple[str, ...], ...],
    ranks: Sequence[int],
    at: float,
) -> Iterator[Refund]:
    """Every one of ``refunds`` that covers ``player_id``'s result (:func:`refund_for`'s
    arguments), in the file's order: the first undoes it, the others would again."""
    for refund in refunds:
        if (
            refund.mode == mode
            and refund.since <= at < refund.until
            and refund.refunds(player_id, teams, ranks)
        ):
            yield refund


@dataclass
class Effects:
    """What a file's corrections do, gathered kind by kind (``Kind.effects``): match ids left
    out (each with the first line leaving it out), windows of a player's matches left out,
    pseudonyms read for erased ids (each with its line), the fingerprints of the pseudonym keys
    records were made with (line, record id, fingerprint: applied with another key, they would
    erase nobody), player changes with their lines, and refunds, in the file's order."""

    voided: dict[str, int] = field(default_factory=dict)
    windows: list[Window] = field(default_factory=list)
    erased: dict[str, int] = field(default_factory=dict)
    fingerprints: list[tuple[int, str, str]] = field(default_factory=list)
    changes: list[tuple[int, PlayerChange]] = field(default_factory=list)
    refunds: list[Refund] = field(default_factory=list)


@dataclass
class Seen:
    """What a ledger saw of the history it was applied to, for a kind to say whether its
    correction did anything (``Kind.unmatched``): the voided ids some match had, the lines of
    windows that held a match, the pseudonyms some player had, the (player as rated, mode)
    pairs of changed players that played, the modes matches were rated in, the lines of
    refunds that undid some result, and of those that covered one an earlier line undid (with
    that line)."""

    voided: dict[str, int]
    rated_as: Callable[[str], str]
    hit_ids: set[str] = field(default_factory=set)
    window_hits: set[int] = field(default_factory=set)
    pseudonyms: set[str] = field(default_factory=set)
    played: set[tuple[str, str]] = field(default_factory=set)
    modes: set[str] = field(default_factory=set)
    refund_hits: set[int] = field(default_factory=set)
    refund_covered: dict[int, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Where:
    """Where a correction is to be applied, for a kind to refuse what cannot apply there
    (``Kind.refused``): ``accepts`` says whether a mode is rated, ``rated`` names what decides
    that in a message, ``live`` is a re-rating worker (it reads starts before finishes)."""

    accepts: Callable[[str], bool]
    rated: str
    live: bool


@dataclass(frozen=True, slots=True)
class Resolution:
    """What ``skillstream corrections resolve`` found in the retained inputs: the match ids
    each window's line holds and the newest finish read (-inf: none)."""

    found: dict[int, frozenset[str]]
    newest: float
    source: str


def _no_effect(correction: Any, line: int, into: Effects) -> None:
    return None


def _never_refused(correction: Any, where: Where) -> str | None:
    return None


def _always_matched(correction: Any, line: int, seen: Seen) -> str | None:
    return None


def _as_it_is(correction: C, line: int, found: Resolution) -> C:
    return correction


@dataclass(frozen=True, slots=True)
class Kind(Generic[C]):
    """A kind of correction: its ``name`` (the JSON's ``kind``), its ``record`` type, how its
    fields are read (``parse``: ValueError naming the field) and written (``fields``), the
    ``names`` of its fields besides the audit's (any other is refused: a misspelt field would
    otherwise be dropped and the record do less than it says), and ``needs_key``: applying it
    takes the pseudonym key (stream.corrections.pseudonyms).

    What it does, in the terms every reader applies (stream.corrections.effects): ``effects``
    adds a record's effects (of its file ``line``); ``refused`` says why it cannot apply
    where it is to (None: it can); ``unmatched`` says why it did nothing to the history a
    ledger read (None: it did something, or may do nothing); ``resolved`` is the record as a
    re-rating worker takes it, from what the retained inputs hold."""

    name: str
    record: type[C]
    parse: Callable[[Mapping[str, Any], Audit], C]
    fields: Callable[[C], dict[str, Any]]
    names: frozenset[str]
    needs_key: bool = False
    effects: Callable[[C, int, Effects], None] = _no_effect
    refused: Callable[[C, Where], str | None] = _never_refused
    unmatched: Callable[[C, int, Seen], str | None] = _always_matched
    resolved: Callable[[C, int, Resolution], C] = _as_it_is
