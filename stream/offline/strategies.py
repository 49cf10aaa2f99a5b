"""The team strategies scored on one history, each against the first one, paired.

``skillstream study strategies HISTORY`` rates the history once per team strategy
(composite_team, composite_opponent, individual, shared) with the published Glicko-2,
predicting every match before applying it as ``evaluate`` does, and prints each strategy's log
loss and its paired difference from composite_team with the standard error clustered by day.
``auto`` is one of the others once its mode's persistence is known, so it is not a row of its
own. Reads the file once per strategy; a malformed history stops it with the reader's one-line
error (exit 2).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from stream.config.modes import Modes
from stream.history import HistoryMatch, read_history
from stream.offline.comparison import PairedDifference, day_of, paired_difference
from stream.offline.replayer import Replayer
from stream.quality import log_loss
from stream.ratings.modeconfig import ModeConfig
from stream.ratings.teams import TeamStrategy


@dataclass(frozen=True, slots=True)
class StrategyLosses:
    """Per-prediction log losses of one strategy and the day of each prediction."""

    strategy: TeamStrategy
    losses: list[float]
    days: list[int]

    @property
    def log_loss(self) -> float:
        return sum(self.losses) / len(self.losses) if self.losses else float("nan")


def strategy_losses(matches: Iterable[HistoryMatch], strategy: TeamStrategy) -> StrategyLosses:
    """Predict-then-apply over ``matches`` with the published Glicko-2 and ``strategy``.

    Matches with quitters are applied but not scored, as in ``evaluate``.
    """
    replayer = Replayer(Modes.single(ModeConfig("default", teams=strategy)), "default")
    losses: list[float] = []
    days: list[int] = []
    for match in matches:
        if not match.quitters:
            day = day_of(match.at)
            for p, actual in replayer.predict(match):
                losses.append(log_loss(p, actual))
                days.append(day)
        replayer.rate(match)
    return StrategyLosses(strategy, losses, days)


# The strategies that rate a match themselves (auto picks one of them).
STRATEGIES = tuple(s for s in TeamStrategy if s is not TeamStrategy.AUTO)


def compare(path: Path) -> list[tuple[StrategyLosses, PairedDifference]]:
    """Each strategy with its paired difference from composite_team (itself: zero)."""
    runs = [strategy_losses(read_history(path), strategy) for strategy in STRATEGIES]
    base = runs[0]
    return [(run, paired_difference(run.losses, base.losses, base.days)) for run in runs]
