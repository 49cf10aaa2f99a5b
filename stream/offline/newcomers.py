"""How well a newcomer's early matches are predicted: observed minus predicted win rate.

``skillstream study newcomers HISTORY [--matches 10]`` rates the history with the built-in
default modes, predicting every match before applying it as ``evaluate`` does, and for each
player's 1st, 2nd, ... match prints the mean predicted and observed score of their team against
each other team. A negative gap in the first rows means newcomers win less often than their
default rating says. A malformed history stops it with the reader's one-line error (exit 2).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from stream.history import HistoryMatch
from stream.offline.replayer import Replayer


@dataclass
class DebutRow:
    """Predictions for players in their ``match``-th match (1 = debut)."""

    match: int
    predictions: int = 0
    predicted: float = 0.0
    observed: float = 0.0

    @property
    def gap(self) -> float:
        """Observed minus predicted win rate (nan without predictions)."""
        if not self.predictions:
            return float("nan")
        return (self.observed - self.predicted) / self.predictions


def newcomer_calibration(
    matches: Iterable[HistoryMatch], replayer: Replayer, rows: int = 10
) -> list[DebutRow]:
    """One row per match number 1..``rows`` of a player's history (quitters' matches unscored)."""
    table = [DebutRow(n) for n in range(1, rows + 1)]
    played: Counter[str] = Counter()
    for match in matches:
        if not match.quitters:
            pairs = iter(replayer.predict(match))
            for i in range(len(match.teams)):
                for j in range(i + 1, len(match.teams)):
                    p, actual = next(pairs)
                    for side, q, s in ((i, p, actual), (j, 1.0 - p, 1.0 - actual)):
                        for player in match.teams[side]:
                            n = played[player]
                            if n < rows:
                                row = table[n]
                                row.predictions += 1
                                row.predicted += q
                                row.observed += s
        replayer.rate(match)
        for lineup in match.teams:
            played.update(lineup)
    return table
