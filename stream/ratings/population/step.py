"""One window's step of a mode's learned population: :func:`next_population` from the values
in force and the window's evidence, and the constants that bound and damp each value's step
(how each is learned: stream.ratings.population).
"""

from __future__ import annotations

import math

from stream.ratings.experience import ExperienceConfig
from stream.ratings.population.likelihood import EMPTY, PopulationStats
from stream.ratings.population.values import Population, PopulationConfig

# The largest change of log(prior deviation) one window makes (a factor of 1.22).
MAX_LOG_STEP = 0.2
# The prior deviation's Newton steps count this much information (in units of the log-prior's
# Fisher information) besides all the mode's newcomers have shown so far: a window of a new
# mode holds 1 to 10, so the first windows move it by a tenth to a quarter of their Newton
# step, and a mode with years of newcomers hardly at all (10, 30 and 50 tried: 30 best on
# the shared histories, docs/defaults.md).
PRIOR_INFORMATION = 30.0
# Newcomer updates a window needs before it may move the prior deviation (fewer are carried
# into the next window).
MIN_EVIDENCE = 100.0
# A window's Newton step of the decisiveness counts this much information besides the window's
# own (a prior of +-0.05 around where it stands): it follows the ratings as they mature.
DECISIVENESS_PRIOR_INFORMATION = 400.0
# The version of the rules above that learn a population: a chain learned under other rules
# is not continued (stream.pipeline.learnedpopulation.settings_of). 3: the debut offset is learned;
# 2: the prior deviation's steps over all its information (1: each window's own, damped by its
# newcomer updates).
LEARNING_RULES = 3
# The debut offset's Newton steps start from this much information (a prior of +-100 points
# around its configured value; 50, 100, 150 and 300 tried: docs/defaults.md).
OFFSET_PRIOR_INFORMATION = 1.0 / (100.0 * 100.0)
# The largest change of the debut offset one window makes (rating points).
MAX_OFFSET_STEP = 50.0
# The prior deviation stays between these, in public rating points (Glicko-2: 0.29 to 2.59).
DEVIATION_BOUNDS = (50.0, 450.0)
# The size edge's Newton steps start from this much information (a prior of +-100 points).
EDGE_PRIOR_INFORMATION = 1.0 / (100.0 * 100.0)
# The party edge's Newton steps start from this much information (a prior of +-100 points,
# as the size edge's: both are a side's rating points, learned the same way).
PARTY_PRIOR_INFORMATION = 1.0 / (100.0 * 100.0)
# A window's Newton step of the log drift counts this much information besides the window's own
# (chosen on the choosing windows of docs/defaults.md: 1, 3, 10 and 30 were tried).
DRIFT_PRIOR_INFORMATION = 3.0
# The largest change of the log drift one window makes (a factor of 2.7: a window whose
# evidence says more is rare, and one such window must not throw the period to a bound).
MAX_DRIFT_STEP = 1.0
# The learned drift period stays within these (days): from skills that move within days to
# ones that hardly move in a year.
DRIFT_PERIOD_BOUNDS = (0.5, 365.0)
# The persistence starts as if its configured value had been seen on this many teammate pairs
# (a new mode's first reshuffled matches switch ``auto`` within a window or two).
PERSISTENCE_PRIOR_PAIRS = 20.0


def next_population(
    config: PopulationConfig, current: Population, stats: PopulationStats, seen: PopulationStats
) -> tuple[Population, PopulationStats]:
    """The population after a window whose evidence is ``stats``, and the evidence carried into
    the next window (the prior deviation's, while it is less than :data:`MIN_EVIDENCE` newcomer
    updates). ``seen`` is the evidence of every window so far, this one included (the running
    sums of the prior deviation's information, size edge, persistence, decisiveness, debut
    offset and party edge);
    ``config`` the mode's settings (the persistence's starting value; the values it holds keep
    the ones in ``current``)."""
    held = config.hold
    deviation = current.deviation
    carried = EMPTY
    if "deviation" not in held:
        if stats.newcomer_updates < MIN_EVIDENCE:
            carried = stats.prior_part
        elif deviation is not None and stats.prior_information > 0.0:
            step = stats.prior_score / (seen.prior_information + PRIOR_INFORMATION)
            step = max(-MAX_LOG_STEP, min(MAX_LOG_STEP, step))
            low, high = DEVIATION_BOUNDS
            deviation = min(high, max(low, deviation * math.exp(step)))
    edge = current.size_edge
    if stats.edge_information > 0.0 and "size_edge" not in held:
        edge += stats.edge_score / (seen.edge_information + EDGE_PRIOR_INFORMATION)
        accepted = PopulationConfig.RANGES["size_edge"]
        edge = min(accepted.high, max(accepted.low, edge))
    persistence = current.persistence
    if stats.pairs and "persistence" not in held:
        prior = PERSISTENCE_PRIOR_PAIRS
        persistence = (seen.same_pairs + prior * config.persistence) / (seen.pairs + prior)
    decisiveness = current.decisiveness
    if stats.decisiveness_information > 0.0 and "decisiveness" not in held:
        decisiveness += stats.decisiveness_score / (
            stats.decisiveness_information + DECISIVENESS_PRIOR_INFORMATION
        )
        accepted = PopulationConfig.RANGES["decisiveness"]
        decisiveness = min(accepted.high, max(accepted.low, decisiveness))
    period = current.drift_period
    if period is not None and stats.drift_information > 0.0 and "drift_period" not in held:
        # The evidence is for the log of the drift, the period's reciprocal.
        step = stats.drift_score / (stats.drift_information + DRIFT_PRIOR_INFORMATION)
        step = max(-MAX_DRIFT_STEP, min(MAX_DRIFT_STEP, step))
        low, high = DRIFT_PERIOD_BOUNDS
        period = min(high, max(low, period * math.exp(-step)))
    offset = current.debut_offset
    if offset is not None and stats.offset_information > 0.0 and "debut_offset" not in held:
        step = stats.offset_score / (seen.offset_information + OFFSET_PRIOR_INFORMATION)
        step = max(-MAX_OFFSET_STEP, min(MAX_OFFSET_STEP, step))
        accepted = ExperienceConfig.RANGES["debut_offset"]
        moved = min(accepted.high, max(accepted.low, offset + step))
        # 0 would switch the experience term off: a step that lands there is not taken.
        offset = moved if moved != 0.0 else offset
    party = current.party_edge
    if stats.party_information > 0.0 and "party_edge" not in held:
        party += stats.party_score / (seen.party_information + PARTY_PRIOR_INFORMATION)
        accepted = PopulationConfig.RANGES["party_edge"]
        party = min(accepted.high, max(accepted.low, party))
    population = Population(deviation, edge, persistence, decisiveness, period, offset, party)
    return population, carried
