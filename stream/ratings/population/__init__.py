"""A mode's population: the values that are properties of who plays the mode, learned from it.

Seven numbers depend on the players and the game rather than on the rating formulas, and no
constant suits every game: how widely a newcomer's true skill may lie from the start (the
**prior deviation**: narrow on a professional tour, broad on a free-to-play ladder), how much
stronger a side is with more players (the **size edge**), how often a team's players stay
together from one match to the next (the **persistence**: rosters and parties, or reshuffled
pickup teams; the ``auto`` team strategy follows it), and how decisively a rating gap decides a
match (the **decisiveness**: a best-of-five series more than a single map; it sharpens or
softens predictions only), and how fast true skills move with time (the **drift period**,
Glicko-2's ``period_days``: esports rosters and metagames change in weeks, tennis careers in
years), and how much weaker a newcomer plays than the rating they start with (the **debut
offset** of the experience term, stream.ratings.experience: a tour's newcomers are qualifiers,
a free-to-play ladder's are as good as anyone), and how much better players who queued
together play than their ratings say (the **party edge**, stream.ratings.parties: a pre-made
stack's coordination). A :class:`Population` holds the values in
force; ``rate_player`` and the predictions take it as an explicit input (``population=``), so a
mode is rated the same way wherever the same population is given.

Learning (``[population] window_days`` above 0) happens at fixed event-time boundaries: a match
finished at ``at`` belongs to window ``floor(at / window)``, and every rated match adds its
evidence to a :class:`PopulationStats` (sums only, so any number of partitions can add theirs in
any order). When a match of a later window arrives, the open window closes: the next
population is :func:`next_population` of the one in force and the closed window's sums (the
prior deviation's evidence is carried into the next window until it is enough,
:data:`MIN_EVIDENCE`). The population of a window therefore depends only on the matches of the
windows before it.

How each value is learned (a match's ``s`` is the result, ``E`` what the rules in force expected):

* prior deviation: a step of natural-gradient ascent on the log-likelihood of the results, in
  ``log(deviation)``. A player's rating moves from the start by roughly
  ``2 (rating - start) (deviation / prior)^2`` per unit of log-prior (the normal model's
  sensitivity), which fades over a player's first games (``exp(-games / 3)``: a settled rating
  no longer depends on where it started). Newcomers whose results keep beating (or missing) the
  expectation in the direction they already moved say the prior is too narrow (too broad).
  The step is the window's score over all the information seen so far plus
  :data:`PRIOR_INFORMATION` (a Newton step of the running maximum-likelihood estimate: large
  while a mode is new, small once its newcomers have said much), at most :data:`MAX_LOG_STEP`;
  the deviation stays within :data:`DEVIATION_BOUNDS`.
* size edge: Newton steps on the log-likelihood of the results of matches between sides of
  different sizes, each divided by all the information seen so far (it converges to the
  maximum-likelihood edge given the ratings).
* party edge: as the size edge, from every prediction of a match that names a party (the
  logit's slope for one more point on each partied player), from :data:`PARTY_PRIOR_INFORMATION`.
* decisiveness: a Newton step per window on the log-likelihood of every prediction, damped by
  :data:`DECISIVENESS_PRIOR_INFORMATION` (it follows the predictions as the ratings mature).
* drift period: a Newton step per window on the log-likelihood of every prediction as made
  (sharpened), in the log of the drift (the period's reciprocal), damped by
  :data:`DRIFT_PRIOR_INFORMATION`; the slope of a prediction comes from each player's
  sensitivities to the drift, carried in their state (stream.ratings.drift); the period stays
  within :data:`DRIFT_PERIOD_BOUNDS`.
* debut offset: Newton steps on the log-likelihood of every prediction as made (sharpened),
  each divided by all the information seen so far plus :data:`OFFSET_PRIOR_INFORMATION` (the
  running maximum-likelihood offset, held near its start while the evidence is little). A
  player's rating as played moves with the offset by :func:`offset_sensitivity`: the offset's
  own share at the player's games, less what the player's earlier updates have absorbed of it
  (a newcomer who played below their rating has had their rating lowered, so the same offset
  counts less at their tenth game than ``exp(-10 / games_scale)`` says). Learned for the
  algorithms with a prior deviation whose experience term is on; at most
  :data:`MAX_OFFSET_STEP` a window.
* persistence: the share of teammate pairs whose lineup at the previous match was the same
  (:func:`lineup_key`), counted over the mode's whole history, starting from the configured
  value as if it had been seen on :data:`PERSISTENCE_PRIOR_PAIRS` pairs.

``[population] hold`` names values a learning mode keeps at their configured start while it
learns the others (:data:`LEARNED_VALUES`): a designer who knows a value for their game, or who
wants to see where the evidence of one value points with it held.

Quick start::

    >>> from stream.ratings.population import PopulationConfig, next_population, start
    >>> from stream.ratings.modeconfig import ModeConfig
    >>> mode = ModeConfig("duel", population=PopulationConfig(window_days=1.0))
    >>> round(start(mode).deviation, 1), start(mode).size_edge
    (350.0, 0.0)
"""

# The package's modules, bottom up: values (what is in force), likelihood (what matches say),
# step (a window's step), then evidence (a match's sums as integers) and chain (the windows
# of a history), which import the three and are imported by name.
from stream.ratings.population.likelihood import (
    EMPTY,
    SENSITIVITY_GAMES,
    SETTLED_GAMES,
    PopulationStats,
    drift_evidence,
    lineup_evidence,
    lineup_key,
    offset_evidence,
    offset_sensitivity,
    party_evidence,
    prediction_evidence,
    predictions_evidence,
    prior_evidence,
    size_evidence,
    update_evidence,
)
from stream.ratings.population.step import (
    DECISIVENESS_PRIOR_INFORMATION,
    DEVIATION_BOUNDS,
    DRIFT_PERIOD_BOUNDS,
    DRIFT_PRIOR_INFORMATION,
    EDGE_PRIOR_INFORMATION,
    LEARNING_RULES,
    MAX_DRIFT_STEP,
    MAX_LOG_STEP,
    MAX_OFFSET_STEP,
    MIN_EVIDENCE,
    OFFSET_PRIOR_INFORMATION,
    PARTY_PRIOR_INFORMATION,
    PERSISTENCE_PRIOR_PAIRS,
    PRIOR_INFORMATION,
    next_population,
)
from stream.ratings.population.values import (
    LEARNED_VALUES,
    ROSTER_PERSISTENCE,
    Population,
    PopulationConfig,
    start,
)

__all__ = [
    "DECISIVENESS_PRIOR_INFORMATION",
    "DEVIATION_BOUNDS",
    "DRIFT_PERIOD_BOUNDS",
    "DRIFT_PRIOR_INFORMATION",
    "EDGE_PRIOR_INFORMATION",
    "EMPTY",
    "LEARNED_VALUES",
    "LEARNING_RULES",
    "MAX_DRIFT_STEP",
    "MAX_LOG_STEP",
    "MAX_OFFSET_STEP",
    "MIN_EVIDENCE",
    "OFFSET_PRIOR_INFORMATION",
    "PARTY_PRIOR_INFORMATION",
    "PERSISTENCE_PRIOR_PAIRS",
    "PRIOR_INFORMATION",
    "ROSTER_PERSISTENCE",
    "SENSITIVITY_GAMES",
    "SETTLED_GAMES",
    "Population",
    "PopulationConfig",
    "PopulationStats",
    "drift_evidence",
    "lineup_evidence",
    "lineup_key",
    "next_population",
    "offset_evidence",
    "offset_sensitivity",
    "party_evidence",
    "prediction_evidence",
    "predictions_evidence",
    "prior_evidence",
    "size_evidence",
    "start",
    "update_evidence",
]
