"""Every scored prediction of a history, one record each, with what it is broken down by.

A prediction is "team ``teams[0]`` beats team ``teams[1]``" made from the states just before
the match. Besides the probability and the result it carries what calibration is broken down
by: the fewest games any participant of the two teams had played, the two teams' sizes and the
mode.
``row`` numbers the history's matches from 1 in file order (training matches included), so two
systems that read the same file can pair their predictions by it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from stream.history import HistoryMatch
from stream.offline.replayer import Replayer
from stream.ratings.fastinit import fast_init

# Games played by the less experienced participant: (lowest, highest or None, label).
EXPERIENCE_BUCKETS: tuple[tuple[int, int | None, str], ...] = (
    (0, 0, "0"),
    (1, 4, "1-4"),
    (5, 19, "5-19"),
    (20, None, "20+"),
)
# Fewer games than this make a participant a newcomer (tune warns when they dominate).
NEWCOMER_GAMES = 5


def experience_bucket(games: int) -> str:
    """The label of the bucket ``games`` falls in (``0``, ``1-4``, ``5-19`` or ``20+``)."""
    for low, high, label in EXPERIENCE_BUCKETS:
        if games >= low and (high is None or games <= high):
            return label
    raise ValueError(f"games must be >= 0, got {games}")


@fast_init
@dataclass(frozen=True, slots=True)
class Prediction:
    """One scored prediction; ``p`` is the probability that ``teams[0]`` beats ``teams[1]``."""

    row: int
    teams: tuple[int, int]
    at: float
    p: float
    actual: float
    games: int
    team_size: int
    mode: str
    # How many players each of the two teams had (``team_size`` is the larger).
    sizes: tuple[int, int] = (1, 1)

    @property
    def key(self) -> tuple[int, int, int]:
        """What pairs it with another system's prediction of the same teams of the same match."""
        return (self.row, self.teams[0], self.teams[1])


def predictions(
    matches: Iterable[HistoryMatch],
    replayer: Replayer,
    since: float | None = None,
    skip: int = 0,
) -> Iterator[Prediction]:
    """Predict every match from the states before it, then apply it; yield the scored ones.

    Only matches at or after ``since`` (epoch seconds) and after the first ``skip`` matches are
    scored; earlier ones only train. Matches with quitters are applied but not scored: their
    ranks record who stayed, not who played better. Each pair of teams is one prediction.
    """
    for index, match in enumerate(matches):
        if index >= skip and (since is None or match.at >= since) and not match.quitters:
            yield from _predict(index + 1, match, replayer)
        replayer.rate(match)


def _predict(row: int, match: HistoryMatch, replayer: Replayer) -> Iterator[Prediction]:
    pairs = replayer.predict(match)
    # Read after predict: it seeds the participants' starting states.
    mode, _, table = replayer.mode_of(match)
    fewest = [min(table[p].games if p in table else 0 for p in team) for team in match.teams]
    teams = match.teams
    n = len(teams)
    pair = 0
    for i in range(n):
        for j in range(i + 1, n):
            p, actual = pairs[pair]
            pair += 1
            yield Prediction(
                row,
                (i, j),
                match.at,
                p,
                actual,
                min(fewest[i], fewest[j]),
                max(len(teams[i]), len(teams[j])),
                mode,
                (len(teams[i]), len(teams[j])),
            )
